#!/usr/bin/env python3
"""Generates tests/golden/gguf/: a tiny Llama converted to GGUF by llama.cpp's
own converter, in several weight types, and what transformers computes for
it, which tests/models/gguf_test.cpp reproduces.

    python -m venv /tmp/gv && /tmp/gv/bin/pip install -r tools/requirements-hf.txt torch
    pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36   # its sdist holds llama.cpp
    /tmp/gv/bin/python tools/gen_gguf_model_goldens.py LLAMA_CPP_DIR

LLAMA_CPP_DIR is llama.cpp's source (the sdist's vendor/llama.cpp): its
convert_hf_to_gguf.py converts the model, and its gguf-py package writes the
Q4_0 file, which the converter cannot (llama.cpp quantizes to Q4_0 with a C++
tool; gguf-py's Q4_0 quantizer is its reference, byte for byte).

The model: LlamaForCausalLM, d 64, 2 layers, 4 query and 2 key/value heads,
SwiGLU 128, untied head, with tests/golden/tokenizers/llama2_style.model as
its SentencePiece tokenizer (1000 pieces). Files:

  tiny_f32.gguf, tiny_bf16.gguf, tiny_q8_0.gguf   convert_hf_to_gguf.py --outtype f32|bf16|q8_0
  tiny_q4_0.gguf    tiny_f32.gguf's linear weights as Q4_0, the embedding as Q8_0
  outputs.safetensors
    ids                 (1, T) int64: the prompt's ids as transformers' tokenizer
                        gives them (BOS first)
    logits.<type>       (1, T, V) float32: transformers' logits for ids, with every
                        weight the GGUF file stores quantized replaced by its
                        quantize-then-dequantize (gguf-py's), so each file's own function
    encode.<i>          int64: the ids of sample i of tokenizers/samples' texts, without BOS
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "tests", "golden")
OUT = os.path.join(GOLDEN, "gguf")
PROMPT = "ROMEO: But soft, what light through yonder window breaks?"
SAMPLES = ["Hello world", "  two  spaces", "First Citizen:\nBefore we proceed", "naïve café ☃"]


def make_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=1000,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
        tie_word_embeddings=False,
        bos_token_id=1,
        eos_token_id=2,
    )
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        # Norm weights away from 1, so that a norm read as ones is caught.
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1 + 0.1 * torch.randn_like(p))
    return model


def save_hf(model, directory):
    from transformers import LlamaTokenizer

    model.save_pretrained(directory, safe_serialization=True)
    tokenizer = LlamaTokenizer(
        os.path.join(GOLDEN, "tokenizers", "llama2_style.model"), legacy=True
    )
    tokenizer.save_pretrained(directory)
    return tokenizer


def convert(llama_cpp, directory, outtype, out):
    subprocess.run(
        [
            sys.executable,
            os.path.join(llama_cpp, "convert_hf_to_gguf.py"),
            directory,
            "--outtype",
            outtype,
            "--outfile",
            out,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def requantize_q4_0(gguf, src, dst):
    """src's metadata and tensors, with every 2-D weight but the embedding
    as Q4_0 and the embedding as Q8_0 (as llama.cpp's quantizer leaves the
    embedding at a higher type)."""
    reader = gguf.GGUFReader(src)
    arch = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(dst, arch)
    for field in reader.fields.values():
        if field.name.startswith("GGUF.") or field.name == "general.architecture":
            continue
        value_type = field.types[0]
        if value_type == gguf.GGUFValueType.ARRAY:
            writer.add_key_value(field.name, field.contents(), value_type, sub_type=field.types[-1])
        else:
            writer.add_key_value(field.name, field.contents(), value_type)
    for t in reader.tensors:
        data = np.array(t.data, dtype=np.float32).reshape([int(n) for n in reversed(t.shape)])
        qtype = gguf.GGMLQuantizationType.F32
        if data.ndim == 2:
            qtype = (
                gguf.GGMLQuantizationType.Q8_0
                if t.name == "token_embd.weight"
                else gguf.GGMLQuantizationType.Q4_0
            )
        stored = (
            gguf.quants.quantize(data, qtype) if qtype != gguf.GGMLQuantizationType.F32 else data
        )
        writer.add_tensor(t.name, stored, raw_shape=stored.shape, raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def stored_types(gguf, path):
    return {t.name: t.tensor_type for t in gguf.GGUFReader(path).tensors}


# transformers' parameter names for each GGUF tensor name of a Llama.
def hf_name(gguf_name):
    top = {
        "token_embd.weight": "model.embed_tokens.weight",
        "output_norm.weight": "model.norm.weight",
        "output.weight": "lm_head.weight",
    }
    if gguf_name in top:
        return top[gguf_name]
    _, layer, rest = gguf_name.split(".", 2)
    block = {
        "attn_norm.weight": "input_layernorm.weight",
        "attn_q.weight": "self_attn.q_proj.weight",
        "attn_k.weight": "self_attn.k_proj.weight",
        "attn_v.weight": "self_attn.v_proj.weight",
        "attn_output.weight": "self_attn.o_proj.weight",
        "ffn_norm.weight": "post_attention_layernorm.weight",
        "ffn_gate.weight": "mlp.gate_proj.weight",
        "ffn_up.weight": "mlp.up_proj.weight",
        "ffn_down.weight": "mlp.down_proj.weight",
    }
    return f"model.layers.{layer}.{block[rest]}"


def logits_as_stored(gguf, model, types, ids):
    """transformers' logits with each weight rounded as the file stores it.
    Quantization runs along rows, so the converter's permutation of q and k
    rows commutes with it: rounding transformers' rows gives the file's."""
    rounded = make_model()
    rounded.load_state_dict(model.state_dict())
    params = dict(rounded.named_parameters())
    with torch.no_grad():
        for name, qtype in types.items():
            if qtype == gguf.GGMLQuantizationType.F32:
                continue
            p = params[hf_name(name)]
            w = p.detach().numpy().astype(np.float32)
            back = gguf.quants.dequantize(gguf.quants.quantize(w, qtype), qtype).reshape(w.shape)
            p.copy_(torch.from_numpy(back.astype(np.float32)))
        return rounded(torch.tensor(ids)).logits.float().numpy()


def main():
    llama_cpp = sys.argv[1]
    sys.path.insert(0, os.path.join(llama_cpp, "gguf-py"))
    import gguf

    os.makedirs(OUT, exist_ok=True)
    model = make_model()
    goldens = {}
    with tempfile.TemporaryDirectory() as directory:
        tokenizer = save_hf(model, directory)
        for outtype in ["f32", "bf16", "q8_0"]:
            convert(llama_cpp, directory, outtype, os.path.join(OUT, f"tiny_{outtype}.gguf"))
    requantize_q4_0(gguf, os.path.join(OUT, "tiny_f32.gguf"), os.path.join(OUT, "tiny_q4_0.gguf"))
    ids = [tokenizer(PROMPT)["input_ids"]]
    goldens["ids"] = np.array(ids, dtype=np.int64)
    for name in ["f32", "bf16", "q8_0", "q4_0"]:
        types = stored_types(gguf, os.path.join(OUT, f"tiny_{name}.gguf"))
        goldens[f"logits.{name}"] = logits_as_stored(gguf, model, types, ids)
    for i, text in enumerate(SAMPLES):
        goldens[f"encode.{i}"] = np.array(
            tokenizer(text, add_special_tokens=False)["input_ids"], dtype=np.int64
        )
    save_file(
        goldens,
        os.path.join(OUT, "outputs.safetensors"),
        metadata={
            "prompt": PROMPT,
            "samples": json.dumps(SAMPLES),
            "llama.cpp": os.path.basename(os.path.dirname(os.path.normpath(llama_cpp))),
        },
    )


if __name__ == "__main__":
    main()
