"""Greedy decoding, stride beside llama.cpp on the same weights: the driver of
bench/compare_llamacpp (which says how to run it).

The model is a Llama of random weights (d 1024, 12 layers, 16 query and 4
key/value heads, SwiGLU 2816, vocabulary 8000: 152M parameters) saved by
transformers, with a SentencePiece tokenizer of 8000 pieces trained on
TinyShakespeare, converted to GGUF by llama.cpp's own convert_hf_to_gguf.py
(F32, BF16, Q8_0) and quantizer (Q4_0, every tensor Q4_0 but the
embedding's Q8_0... as `pure` asks: the same blocks in both programs).
Each format runs at each thread count, stride and llama.cpp alternating,
ROUNDS times; the figure is the median tokens/s of the decode phase (the
tokens after the first), and the median of the rounds' paired ratios.
Beside each: the bytes of weights a token reads and the tokens/s that
bench/llama_bench's stream rate allows for them, and where the two greedy
sequences first part, with llama.cpp's top-2 logit margin there.
"""

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STRIDE = os.environ.get("STRIDE_CLI", os.path.join(ROOT, "build", "apps", "stride", "stride"))
PROMPT = "ROMEO:"
FORMATS = {"f32": "float32", "bf16": "bf16", "q8_0": "int8", "q4_0": "int4"}


def make_model(directory, data):
    """The HF directory: random weights, and a tokenizer trained on the text."""
    import sentencepiece as spm
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, LlamaTokenizer

    spm.SentencePieceTrainer.train(
        input=data,
        model_prefix=os.path.join(directory, "spm"),
        vocab_size=8000,
        model_type="bpe",
        byte_fallback=True,
        character_coverage=1.0,
        num_threads=2,
        minloglevel=2,
    )
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=8000,
        hidden_size=1024,
        intermediate_size=2816,
        num_hidden_layers=12,
        num_attention_heads=16,
        num_key_value_heads=4,
        max_position_embeddings=1024,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        bos_token_id=1,
        eos_token_id=2,
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(directory, safe_serialization=True)
    LlamaTokenizer(os.path.join(directory, "spm.model"), legacy=True).save_pretrained(directory)


def convert(llama_cpp, directory, out_dir):
    """F32, BF16 and Q8_0 by the converter; Q4_0 by llama.cpp's quantizer."""
    import llama_cpp as lc

    files = {}
    for name in ["f32", "bf16", "q8_0"]:
        files[name] = os.path.join(out_dir, f"model-{name}.gguf")
        subprocess.run(
            [
                sys.executable,
                os.path.join(llama_cpp, "convert_hf_to_gguf.py"),
                directory,
                "--outtype",
                name,
                "--outfile",
                files[name],
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    files["q4_0"] = os.path.join(out_dir, "model-q4_0.gguf")
    params = lc.llama_model_quantize_default_params()
    params.ftype = lc.LLAMA_FTYPE_MOSTLY_Q4_0
    params.nthread = 2
    params.pure = True  # every weight Q4_0, as stride's int4 (not Q6_K for the head)
    rc = lc.llama_model_quantize(
        files["f32"].encode(), files["q4_0"].encode(), ctypes.byref(params)
    )
    assert rc == 0, "llama_model_quantize failed"
    return files


def llama_cpp_decode(path, threads, tokens):
    """llama.cpp's greedy decode: (tokens/s after the first, ids, logits of each step)."""
    import llama_cpp as lc

    llm = lc.Llama(
        model_path=path,
        n_threads=threads,
        n_threads_batch=threads,
        n_ctx=512,
        verbose=False,
        seed=0,
    )

    def last_logits():
        row = lc.llama_get_logits_ith(llm._ctx.ctx, -1)
        return np.ctypeslib.as_array(row, shape=(llm.n_vocab(),)).copy()

    llm.eval(llm.tokenize(PROMPT.encode(), add_bos=True))
    ids, logits = [], []
    start = None
    for _ in range(tokens):
        row = last_logits()
        token = int(row.argmax())
        ids.append(token)
        logits.append(row)
        if start is None:
            start = time.perf_counter()
        llm.eval([token])
    elapsed = time.perf_counter() - start
    llm.close()
    return (tokens - 1) / elapsed, ids, logits


def stride_decode(path, threads, tokens):
    with tempfile.NamedTemporaryFile(suffix=".json") as stats:
        env = dict(os.environ, STRIDE_NUM_THREADS=str(threads))
        subprocess.run(
            [
                STRIDE,
                "generate",
                "--gguf",
                path,
                "--prompt",
                PROMPT,
                "--tokens",
                str(tokens),
                "--temperature",
                "0",
                "--stats-json",
                stats.name,
            ],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        result = json.load(open(stats.name))
    return result["decode_tokens_per_s"], result["ids"]


def weight_bytes(path):
    """Bytes a decoded token reads: every tensor but the embedding (one row)."""
    sys.path.insert(0, os.path.join(os.environ["LLAMA_CPP_DIR"], "gguf-py"))
    import gguf

    reader = gguf.GGUFReader(path)
    return sum(int(t.n_bytes) for t in reader.tensors if t.name != "token_embd.weight")


def stream_rate(threads, n):
    """GB/s of bench/llama_bench's stream over n floats, as many bytes as
    the weights a token reads."""
    out = subprocess.run(
        [
            os.path.join(ROOT, "build-bench", "bench", "llama_bench"),
            "--workload",
            "stream",
            "--threads",
            str(threads),
            "--reps",
            "5",
            "--n",
            str(n),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])["median"]


def first_difference(a, b, logits):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            top = np.sort(logits[i])[-2:]
            return i, float(top[1] - top[0])
    return None, None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument(
        "--data", default=os.environ.get("STRIDE_DATA", "../shared/data/tinyshakespeare.txt")
    )
    parser.add_argument("--work", default=os.path.join(ROOT, "build-bench", "llamacpp"))
    args = parser.parse_args()
    llama_cpp = os.environ["LLAMA_CPP_DIR"]
    os.makedirs(args.work, exist_ok=True)
    hf = os.path.join(args.work, "hf")
    if not os.path.exists(os.path.join(hf, "config.json")):
        os.makedirs(hf, exist_ok=True)
        make_model(hf, args.data)
    files = {k: os.path.join(args.work, f"model-{k}.gguf") for k in FORMATS}
    if not all(os.path.exists(f) for f in files.values()):
        files = convert(llama_cpp, hf, args.work)
    print(
        "| format | threads | llama.cpp tok/s | stride tok/s | stride / llama.cpp | MB/token | "
        "bound tok/s | sequences part at |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name in args.formats.split(","):
        for threads in [int(t) for t in args.threads.split(",")]:
            ours, theirs = [], []
            for _ in range(args.rounds):
                rate, lc_ids, logits = llama_cpp_decode(files[name], threads, args.tokens)
                theirs.append(rate)
                rate, st_ids = stride_decode(files[name], threads, args.tokens)
                ours.append(rate)
            ratio = statistics.median(o / t for o, t in zip(ours, theirs))
            nbytes = weight_bytes(files[name])
            mb = nbytes / 1e6
            bound = stream_rate(threads, nbytes // 4) * 1e3 / mb
            at, margin = first_difference(st_ids, lc_ids, logits)
            part = "never" if at is None else f"token {at + 1} (margin {margin:.4f})"
            print(
                f"| {name} | {threads} | {statistics.median(theirs):.1f} | "
                f"{statistics.median(ours):.1f} | {ratio:.2f}x | {mb:.0f} | {bound:.0f} | {part} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
