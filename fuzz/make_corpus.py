#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets (fuzz/corpus/*): small valid
files that libFuzzer mutates. Rerun after a format change; the output is
deterministic."""
import json
import struct
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def safetensors(tensors, metadata=None):
    """tensors: list of (name, dtype, shape, raw bytes)."""
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def f32(*values):
    return struct.pack(f"<{len(values)}f", *values)


def checkpoint():
    tensors = [("model.bias", "F32", [2], f32(0.5, -0.25)),
               ("model.weight", "F32", [2, 2], f32(1, 2, 3, 4))]
    crc = {name: f"{zlib.crc32(raw):08x}" for name, _, _, raw in tensors}
    metadata = {
        "stride.format": "checkpoint-v1",
        "stride.step": "3",
        "stride.config": json.dumps({"model": {"d_model": 2}}),
        "stride.optimizer": "null",
        "stride.scheduler": "{}",
        "stride.rng": json.dumps({"default": {"seed": "1", "offset": "4"}}),
        "stride.crc32": json.dumps(crc),
    }
    return safetensors(tensors, metadata)


def gguf_string(text):
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def gguf(metadata, tensors, alignment=32):
    """A GGUF v3 file (src/io/gguf_format.h). metadata: (key, type number,
    packed value) triples; tensors: (name, ne, ggml type, raw bytes)."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for key, vtype, value in metadata:
        out += gguf_string(key) + struct.pack("<I", vtype) + value
    offset, data = 0, b""
    for name, ne, gtype, raw in tensors:
        out += gguf_string(name) + struct.pack("<I", len(ne))
        out += struct.pack(f"<{len(ne)}Q", *ne) + struct.pack("<IQ", gtype, offset)
        pad = b"\x00" * ((alignment - len(raw) % alignment) % alignment)
        data += raw + pad
        offset += len(raw) + len(pad)
    out += b"\x00" * ((alignment - len(out) % alignment) % alignment)
    return out + data


def gguf_llama():
    """A two-tensor Llama header with tokenizer arrays, in f32, q8_0 and q4_K."""
    tokens = [b"<s>", b"a", b"b"]
    metadata = [
        ("general.architecture", 8, gguf_string("llama")),
        ("llama.block_count", 4, struct.pack("<I", 1)),
        ("llama.rope.freq_base", 6, struct.pack("<f", 10000.0)),
        ("tokenizer.ggml.add_bos_token", 7, b"\x01"),
        (
            "tokenizer.ggml.tokens",
            9,
            struct.pack("<IQ", 8, len(tokens)) + b"".join(gguf_string(t.decode()) for t in tokens),
        ),
        ("tokenizer.ggml.scores", 9, struct.pack("<IQ3f", 6, 3, 0.0, -1.0, -2.0)),
    ]
    tensors = [
        ("token_embd.weight", [4, 3], 0, f32(*range(12))),
        ("blk.0.attn_q.weight", [32, 1], 8, b"\x00" * 34),
        ("output.weight", [256, 1], 12, b"\x00" * 144),
    ]
    return gguf(metadata, tensors)


def gguf_tokenizer(model, tokens, types, extra=()):
    """A GGUF whose metadata carries a tokenizer of `model` ("llama" or
    "gpt2"): its tokens and token types, and `extra` metadata."""
    metadata = [
        ("general.architecture", 8, gguf_string("llama")),
        ("tokenizer.ggml.model", 8, gguf_string(model)),
        (
            "tokenizer.ggml.tokens",
            9,
            struct.pack("<IQ", 8, len(tokens)) + b"".join(gguf_string(t) for t in tokens),
        ),
        ("tokenizer.ggml.token_type", 9, struct.pack(f"<IQ{len(types)}i", 5, len(types), *types)),
        ("tokenizer.ggml.bos_token_id", 4, struct.pack("<I", 1)),
        *extra,
    ]
    return gguf(metadata, [("output_norm.weight", [4], 0, f32(1, 2, 3, 4))])


def gguf_tokenizers():
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["\u2581a", "b"]
    types = [2, 3, 3] + [6] * 256 + [1, 1]
    scores = struct.pack(f"<IQ{len(pieces)}f", 6, len(pieces), *[-float(i) for i in range(len(pieces))])
    llama = gguf_tokenizer("llama", pieces, types, [("tokenizer.ggml.scores", 9, scores)])
    vocab = ["a", "b", "ab", "\u0120", "<|end|>"]
    merges = ["a b"]
    gpt2 = gguf_tokenizer(
        "gpt2",
        vocab,
        [1, 1, 1, 1, 3],
        [
            ("tokenizer.ggml.pre", 8, gguf_string("gpt2")),
            ("tokenizer.ggml.merges", 9, struct.pack("<IQ", 8, 1) + gguf_string(merges[0])),
        ],
    )
    return llama, gpt2


def regressions():
    """Inputs that once got past stride, kept so that they never do again."""
    header = HERE / "regressions" / "safetensors_header"
    header.mkdir(parents=True, exist_ok=True)
    text = b'{}\x00 garbage after a NUL, once ignored'
    (header / "nul_then_garbage.safetensors").write_bytes(struct.pack("<Q", len(text)) + text)
    ckpt = HERE / "regressions" / "checkpoint"
    ckpt.mkdir(parents=True, exist_ok=True)
    good = checkpoint()
    for name, old, new in [("negative_step", b'"stride.step":"3"', b'"stride.step":"-5"'),
                           ("suffixed_step", b'"stride.step":"3"', b'"stride.step":"5abc"'),
                           ("negative_seed", b'\\"seed\\": \\"1\\"', b'\\"seed\\": \\"-1\\"')]:
        assert old in good, name
        bad = good.replace(old, new)
        length = struct.unpack("<Q", bad[:8])[0] + len(new) - len(old)
        (ckpt / f"{name}.safetensors").write_bytes(struct.pack("<Q", length) + bad[8:])
    flipped = bytearray(good)
    flipped[-3] ^= 0x5A  # a byte of model.weight: its CRC-32 no longer matches
    (ckpt / "damaged_weight.safetensors").write_bytes(bytes(flipped))


def main():
    header = HERE / "corpus" / "safetensors_header"
    header.mkdir(parents=True, exist_ok=True)
    (header / "empty.safetensors").write_bytes(safetensors([]))
    (header / "two_tensors.safetensors").write_bytes(safetensors(
        [("a", "F32", [2], f32(1, 2)), ("b", "I64", [1, 1], struct.pack("<q", 7)),
         ("c", "BOOL", [0], b"")], {"note": "seed"}))
    (header / "every_dtype.safetensors").write_bytes(safetensors(
        [(t, t, [1], b"\x00" * n) for t, n in
         [("BOOL", 1), ("U8", 1), ("I32", 4), ("I64", 8), ("F16", 2), ("BF16", 2), ("F32", 4),
          ("F64", 8)]]))
    gguf_dir = HERE / "corpus" / "gguf"
    gguf_dir.mkdir(parents=True, exist_ok=True)
    (gguf_dir / "llama.gguf").write_bytes(gguf_llama())
    (gguf_dir / "aligned_64.gguf").write_bytes(
        gguf(
            [("general.alignment", 4, struct.pack("<I", 64))],
            [("a", [3], 0, f32(1, 2, 3)), ("b", [2], 30, b"\x00" * 4)],
            alignment=64,
        )
    )
    model_dir = HERE / "corpus" / "gguf_model"
    model_dir.mkdir(parents=True, exist_ok=True)
    llama, gpt2 = gguf_tokenizers()
    (model_dir / "llama_tokenizer.gguf").write_bytes(llama)
    (model_dir / "gpt2_tokenizer.gguf").write_bytes(gpt2)
    (model_dir / "llama.gguf").write_bytes(gguf_llama())
    ckpt = HERE / "corpus" / "checkpoint"
    ckpt.mkdir(parents=True, exist_ok=True)
    (ckpt / "linear.safetensors").write_bytes(checkpoint())
    regressions()
    store = HERE / "corpus" / "store_protocol"
    store.mkdir(parents=True, exist_ok=True)
    (store / "rendezvous.bin").write_bytes(
        store_set(b"world/0", b"\x02" * 40) + store_get(b"world/1") + store_get(b"world/0"))
    (store / "empty_value.bin").write_bytes(store_set(b"k", b"") + store_get(b""))
    (store / "truncated.bin").write_bytes(store_set(b"key", b"value")[:-2])


def store_field(data):
    return struct.pack("<I", len(data)) + data


def store_set(key, value):
    """The rendezvous store's set request (src/distributed/store_protocol.h)."""
    return b"S" + store_field(key) + store_field(value)


def store_get(key):
    return b"G" + store_field(key)


if __name__ == "__main__":
    main()
