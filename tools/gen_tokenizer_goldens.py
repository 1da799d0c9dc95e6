#!/usr/bin/env python3
"""Generates tests/golden/tokenizers/: byte-level BPE tokenizers trained with
Hugging Face `tokenizers` on TinyShakespeare, saved as tokenizer.json, a
SentencePiece model trained as Llama 2's was, and the ids they give a varied
text sample, which tests/data/bpe_test.cpp and sentencepiece_test.cpp
reproduce with stride's BPETokenizer and SentencePieceTokenizer.

    build-venv/bin/pip install -r tools/requirements-hf.txt
    build-venv/bin/python tools/gen_tokenizer_goldens.py [DATA]

Two tokenizers: gpt2_style.json (GPT-2's ByteLevel pre-tokenizer, its
regex) and llama3_style.json (Llama 3's Split regex, then ByteLevel without
its own regex, and ignore_merges), each with an <|endoftext|> special token;
llama2_style.model, a SentencePiece BPE model with Llama 2's trainer settings
(byte fallback, split digits, identity normalization, a dummy prefix), whose
ids the `sentencepiece` package and transformers' LlamaTokenizer (legacy,
without BOS) must agree on. samples.json holds the sample texts and, per
tokenizer, their ids.
"""

import json
import os
import sys

import sentencepiece as spm
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaTokenizer

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

SAMPLES = [
    "First Citizen:\nBefore we proceed any further, hear me speak.",
    "  leading spaces,\ttabs\t\tand   runs of   spaces   \n\n\nand newlines\r\n",
    "def f(x):\n    return x ** 2  # squares 1234567 numbers, 3.14159\n",
    "emoji: 😀🎉👍🏽 and CJK: 中文字符 日本語のテキスト 한국어",
    "Don't you'll we've I'M THEY'RE she'd... <|endoftext|>next document",
    "accents: café naïve Ærøskøbing — “quotes” ‘single’ «guillemets»",
    "",
    " ",
    "a",
    "\u00a0non-breaking\u2003em-space\u200bzero-width",
]


def train(data: str, pre_tokenizer, ignore_merges: bool) -> Tokenizer:
    tok = Tokenizer(models.BPE(ignore_merges=ignore_merges))
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1000,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train([data], trainer)
    return tok


def train_sentencepiece(data: str, prefix: str) -> spm.SentencePieceProcessor:
    spm.SentencePieceTrainer.train(
        input=data,
        model_prefix=prefix,
        model_type="bpe",
        vocab_size=1000,
        byte_fallback=True,
        split_digits=True,
        allow_whitespace_only_pieces=True,
        normalization_rule_name="identity",
        add_dummy_prefix=True,
        remove_extra_whitespaces=False,
        character_coverage=0.99995,
        unk_id=0,
        bos_id=1,
        eos_id=2,
        pad_id=-1,
        num_threads=1,
        minloglevel=2,
    )
    os.remove(prefix + ".vocab")
    return spm.SentencePieceProcessor(model_file=prefix + ".model")


def main() -> None:
    data = sys.argv[1] if len(sys.argv) > 1 else os.environ["STRIDE_DATA"]
    out = os.path.join("tests", "golden", "tokenizers")
    os.makedirs(out, exist_ok=True)
    tokenizers = {
        "gpt2_style": train(data, pre_tokenizers.ByteLevel(add_prefix_space=False), False),
        "llama3_style": train(
            data,
            pre_tokenizers.Sequence(
                [
                    pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated"),
                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
                ]
            ),
            True,
        ),
    }
    golden = {"samples": SAMPLES}
    for name, tok in tokenizers.items():
        tok.save(os.path.join(out, f"{name}.json"))
        golden[name] = [tok.encode(s).ids for s in SAMPLES]
        for s, ids in zip(SAMPLES, golden[name]):
            assert tok.decode(ids, skip_special_tokens=False) == s, (name, s)
    sp = train_sentencepiece(data, os.path.join(out, "llama2_style"))
    hf = LlamaTokenizer(
        os.path.join(out, "llama2_style.model"),
        legacy=True,
        add_bos_token=False,
        add_eos_token=False,
    )
    golden["llama2_style"] = [sp.encode(s) for s in SAMPLES]
    for s, ids in zip(SAMPLES, golden["llama2_style"]):
        assert hf.encode(s) == ids, ("LlamaTokenizer", s, hf.encode(s), ids)
        assert sp.decode(ids) == s, ("llama2_style", s)
    with open(os.path.join(out, "samples.json"), "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
