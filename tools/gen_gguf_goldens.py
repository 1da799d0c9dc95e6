#!/usr/bin/env python3
"""Generates tests/golden/gguf_blocks.safetensors: blocks of each ggml
encoding stride decodes (src/io/gguf_blocks.h) and their float32 values as
llama.cpp's own Python package `gguf` decodes them, which
tests/io/gguf_blocks_test.cpp reproduces.

    build-venv/bin/pip install -r tools/requirements-gguf.txt
    build-venv/bin/python tools/gen_gguf_goldens.py

For each encoding, `<name>.raw` (uint8, the blocks' bytes) and
`<name>.values` (float32). The blocks are random bytes, with every half
scale drawn as a finite half of either sign, so that every bit pattern of
the quants, the packed k-quant scales and the mins occurs.
"""

import os
from importlib.metadata import version

import gguf
import numpy as np
from safetensors.numpy import save_file

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "gguf_blocks.safetensors")

# name: (ggml type, blocks, byte offsets of the block's half scales)
ENCODINGS = {
    "f16": (gguf.GGMLQuantizationType.F16, 64, None),
    "bf16": (gguf.GGMLQuantizationType.BF16, 64, None),
    "q8_0": (gguf.GGMLQuantizationType.Q8_0, 16, [0]),
    "q4_0": (gguf.GGMLQuantizationType.Q4_0, 16, [0]),
    "q4_k": (gguf.GGMLQuantizationType.Q4_K, 8, [0, 2]),
    "q6_k": (gguf.GGMLQuantizationType.Q6_K, 8, [208]),
}


def random_blocks(rng, qtype, blocks, scale_offsets):
    block_size, type_size = gguf.GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, size=(blocks, type_size), dtype=np.uint8)
    if qtype == gguf.GGMLQuantizationType.F16:
        raw = rng.standard_normal(blocks * block_size).astype(np.float16).view(np.uint8)
    elif qtype == gguf.GGMLQuantizationType.BF16:
        wide = rng.standard_normal(blocks * block_size).astype(np.float32).view(np.uint32)
        raw = (wide >> 16).astype(np.uint16).view(np.uint8)
    for offset in scale_offsets or []:
        scale = (rng.standard_normal(blocks) * 0.05).astype(np.float16)
        raw[:, offset : offset + 2] = scale.view(np.uint8).reshape(blocks, 2)
    return np.ascontiguousarray(raw).reshape(-1)


def main():
    rng = np.random.default_rng(1234)
    tensors = {}
    for name, (qtype, blocks, scales) in ENCODINGS.items():
        raw = random_blocks(rng, qtype, blocks, scales)
        values = gguf.quants.dequantize(raw, qtype).astype(np.float32).reshape(-1)
        assert np.isfinite(values).all(), name
        tensors[f"{name}.raw"] = raw
        tensors[f"{name}.values"] = values
    save_file(tensors, OUT, metadata={"generator": f"gguf {version('gguf')}"})


if __name__ == "__main__":
    main()
