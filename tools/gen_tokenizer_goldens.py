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

Two WordPiece tokenizers as BERT's (BertNormalizer, BertPreTokenizer,
[CLS] $A [SEP]): bert_uncased.json (lowercase, accents stripped), with its
vocabulary also as bert_uncased.vocab.txt (a vocab.txt-only directory), and
bert_cased.json. Their golden entries hold, for bert_samples (the samples
and texts with BERT's edge cases: [MASK], controls, Chinese characters,
Unicode punctuation, over-long words), the ids with special tokens, the
decoded texts, and one pair's ids and token types, as transformers'
BertTokenizerFast and BertTokenizer give them.
"""

import json
import os
import sys

import sentencepiece as spm
from tokenizers import (
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from transformers import BertTokenizer, BertTokenizerFast, LlamaTokenizer

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

BERT_SAMPLES = SAMPLES + [
    "The capital of France is [MASK].",
    "[CLS] already [SEP] inside [UNK][MASK][PAD]",
    "HeLLo WORLD \u0130stanbul \u03a3\u0391\u03a3 stra\u00dfe \u01c5 \u00c5ngstr\u00f6m",
    "control\x00chars\x07 and \ufffd replacement\u0085next\u200bjoined",
    "mixed\u4e2d\u6587text\u3001\u65e5\u672c\u8a9e\uff01 \u2f800",
    "ascii symbols $+<=>^`|~ unicode \u00bf\u00a1\u203c\u00b6\u00a7\u2026\u301c",
    "unaffable " + "x" * 99 + " " + "y" * 101,
    "e\u0301 vs \u00e9, \u1e9b\u0323 and \ud55c\uad6d\uc5b4",
]


def train_wordpiece(data: str, lowercase: bool) -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=1000,
        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
        initial_alphabet=list("\u4e2d\u6587\u65e5\u672c\u8a9e\u00e9\u00c5\u00df\u03c3\u1100\u1161"),
        show_progress=False,
    )
    tok.train([data], trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
    )
    return tok


def wordpiece_golden(out: str, name: str, tok: Tokenizer, lowercase: bool) -> dict:
    path = os.path.join(out, f"{name}.json")
    tok.save(path)
    fast = BertTokenizerFast(tokenizer_file=path, do_lower_case=lowercase)
    golden = {"ids": [], "decoded": [], "decoded_skip": []}
    for s in BERT_SAMPLES:
        ids = fast(s)["input_ids"]
        assert ids == tok.encode(s).ids, (name, s)
        golden["ids"].append(ids)
        golden["decoded"].append(fast.decode(ids))
        golden["decoded_skip"].append(fast.decode(ids, skip_special_tokens=True))
    pair = fast("To be, or not to be:", "that is the question.")
    golden["pair"] = {"ids": pair["input_ids"], "type_ids": pair["token_type_ids"]}
    if lowercase:
        # The same vocabulary as a vocab.txt, which transformers' BertTokenizer reads.
        vocab = os.path.join(out, f"{name}.vocab.txt")
        with open(vocab, "w", encoding="utf-8") as f:
            for token, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1]):
                f.write(token + "\n")
        slow = BertTokenizer(vocab, do_lower_case=True)
        for s, ids in zip(BERT_SAMPLES, golden["ids"]):
            assert slow(s)["input_ids"] == ids, ("BertTokenizer", s)
    return golden


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
    golden["bert_samples"] = BERT_SAMPLES
    for name, lowercase in (("bert_uncased", True), ("bert_cased", False)):
        golden[name] = wordpiece_golden(out, name, train_wordpiece(data, lowercase), lowercase)
    with open(os.path.join(out, "samples.json"), "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
