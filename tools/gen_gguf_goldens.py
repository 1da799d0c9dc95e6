#!/usr/bin/env python3
"""Generates tests/golden/gguf_blocks.safetensors: blocks of each ggml
encoding stride decodes (src/io/gguf_blocks.h) and their float32 values as
llama.cpp's own Python package `gguf` decodes them, which
tests/io/gguf_blocks_test.cpp reproduces; and float32 weights with their
Q8_0, Q4_0 and BF16 encodings as `gguf` quantizes them, which stride's
pack_weight reproduces byte for byte (tests/nn/packed_linear_test.cpp).

    build-venv/bin/pip install -r tools/requirements-gguf.txt
    build-venv/bin/python tools/gen_gguf_goldens.py

For each encoding, `<name>.raw` (uint8, the blocks' bytes) and
`<name>.values` (float32); `quantize.weights` (float32, rows of 256) and
`quantize.<q8_0|q4_0|bf16>` (uint8, each row's encoding). The blocks are
random bytes, with every half scale drawn as a finite half of either sign,
so that every bit pattern of the quants, the packed k-quant scales and the
mins occurs.
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


QUANTIZED = {
    "q8_0": gguf.GGMLQuantizationType.Q8_0,
    "q4_0": gguf.GGMLQuantizationType.Q4_0,
    "bf16": gguf.GGMLQuantizationType.BF16,
}


def weights_to_quantize(rng):
    """Rows of 256: normal weights at several scales, and blocks that test
    the quantizers' edges: all zeros, one weight far larger than the rest
    (either sign), equal magnitudes of both signs, and subnormal halves."""
    w = rng.standard_normal((12, 256)).astype(np.float32)
    w[1] *= 1e-3
    w[2] *= 50
    w[3, :32] = 0
    w[3, 32:64] = 0.01
    w[3, 40] = -3.0
    w[3, 64:96] = rng.choice([-1.0, 1.0], 32)
    w[3, 96:128] = 1e-6 * rng.standard_normal(32)
    w[4, :32] = np.arange(-16, 16) / 8.0
    w[4, 45] = 7.5
    return w


def main():
    rng = np.random.default_rng(1234)
    tensors = {}
    for name, (qtype, blocks, scales) in ENCODINGS.items():
        raw = random_blocks(rng, qtype, blocks, scales)
        values = gguf.quants.dequantize(raw, qtype).astype(np.float32).reshape(-1)
        assert np.isfinite(values).all(), name
        tensors[f"{name}.raw"] = raw
        tensors[f"{name}.values"] = values
    weights = weights_to_quantize(rng)
    tensors["quantize.weights"] = weights
    for name, qtype in QUANTIZED.items():
        tensors[f"quantize.{name}"] = np.ascontiguousarray(gguf.quants.quantize(weights, qtype))
    save_file(tensors, OUT, metadata={"generator": f"gguf {version('gguf')}"})


if __name__ == "__main__":
    main()
