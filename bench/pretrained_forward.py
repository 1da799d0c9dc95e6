"""Pretrained models' forward passes from Python (stride.models), in two
comparisons of the same run:

  GPT-2 124M's shapes: stride.models from Python beside the command line's
  C++ path on the same directory (bench/hf_forward_bench.cpp: hf::load,
  then the model's forward), C++ time / Python time;
  BERT-base's shapes (BertForMaskedLM): stride.models beside transformers
  on the same weights, transformers' time / stride's.

Above 1, stride's Python forward is the faster. Both directories are made
here by transformers (random weights, save_pretrained), and every forward
runs without gradients on the ids i * 7 % vocabulary, shaped (BATCH, TOKENS).

    OMP_NUM_THREADS=2 build-venv/bin/python bench/pretrained_forward.py \\
        [--cpp build-bench/bench/hf_forward_bench] [--rounds 5]

Each round times each side back to back, alternating which goes first; the
table shows each side's median time per forward and the median of the paired
ratios.
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

from paired import compare, print_table


def make_directories(root, torch, transformers):
    torch.manual_seed(0)
    gpt2 = os.path.join(root, "gpt2")
    transformers.GPT2LMHeadModel(transformers.GPT2Config()).save_pretrained(gpt2)
    bert = os.path.join(root, "bert")
    transformers.BertForMaskedLM(transformers.BertConfig()).save_pretrained(bert)
    return gpt2, bert


def ids_for(lib, batch, tokens, vocab):
    return (lib.arange(batch * tokens) * 7 % vocab).reshape(batch, tokens)


def python_forward_ms(model, ids, calls, stride):
    with stride.no_grad():
        model(ids)
        start = time.perf_counter()
        for _ in range(calls):
            model(ids)
    return (time.perf_counter() - start) / calls * 1e3


def cpp_forward_ms(binary, directory, batch, tokens, calls):
    out = subprocess.run(
        [binary, directory, str(batch), str(tokens), str(calls), "1"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(out.split()[-1])


def gpt2_python_against_cpp(args, directory, stride):
    model = stride.models.from_pretrained(directory)
    ids = ids_for(stride, args.batch, args.tokens, model.config.vocab_size)
    python, cpp, ratios = [], [], []
    for r in range(args.rounds):
        order = ["python", "cpp"] if r % 2 == 0 else ["cpp", "python"]
        got = {}
        for side in order:
            if side == "python":
                got[side] = python_forward_ms(model, ids, args.calls, stride)
            else:
                got[side] = cpp_forward_ms(args.cpp, directory, args.batch, args.tokens, args.calls)
        python.append(got["python"])
        cpp.append(got["cpp"])
        ratios.append(got["cpp"] / got["python"])
    print("| case | stride.models, Python (ms/forward) | C++ path (ms/forward) |", end="")
    print(" C++ / Python (median of paired ratios) |")
    print("|---|---:|---:|---:|")
    print(
        f"| GPT-2 124M forward ({args.batch}, {args.tokens}) | {statistics.median(python):.1f} "
        f"| {statistics.median(cpp):.1f} | {statistics.median(ratios):.3f} |"
    )


def bert_against_transformers(args, directory, stride, torch, transformers):
    ours = stride.models.from_pretrained(directory)
    theirs = transformers.BertForMaskedLM.from_pretrained(directory).eval()
    vocab = ours.config.vocab_size
    ours_ids = ids_for(stride, args.batch, args.tokens, vocab)
    their_ids = ids_for(torch, args.batch, args.tokens, vocab)
    with torch.no_grad(), stride.no_grad():
        ours_logits = torch.from_numpy(ours(ours_ids).logits.numpy())
        difference = (theirs(their_ids).logits - ours_logits).abs().max()
    name = f"BERT-base forward ({args.batch}, {args.tokens})"

    def run_ours():
        with stride.no_grad():
            ours(ours_ids)

    def run_theirs():
        with torch.no_grad():
            theirs(their_ids)

    sides = {"stride": {name: (run_ours, args.calls)}, "torch": {name: (run_theirs, args.calls)}}
    print_table(compare(sides, args.rounds))
    print(f"\nlargest logit difference, stride against transformers: {difference.item():.2e}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpp", default="build-bench/bench/hf_forward_bench")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=128)
    args = parser.parse_args()
    import stride
    import torch
    import transformers

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", os.cpu_count())))
    print(
        f"torch {torch.__version__}, transformers {transformers.__version__}, "
        f"{torch.get_num_threads()} threads\n"
    )
    with tempfile.TemporaryDirectory() as root:
        gpt2, bert = make_directories(root, torch, transformers)
        gpt2_python_against_cpp(args, gpt2, stride)
        print()
        bert_against_transformers(args, bert, stride, torch, transformers)


if __name__ == "__main__":
    main()
