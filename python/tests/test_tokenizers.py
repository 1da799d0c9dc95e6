"""stride.tokenizers against transformers' ids: the tokenizer goldens of
tests/golden/tokenizers (tools/gen_tokenizer_goldens.py: byte-level BPE,
SentencePiece and BERT's WordPiece, texts with spaces, newlines, emoji, CJK
and accents) in model directories, and transformers' call conventions
(padding, masks, token types, pairs, truncation, tensors)."""

import json
import shutil
from pathlib import Path

import pytest
import stride

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden"
pytestmark = pytest.mark.skipif(
    not (GOLDEN / "tokenizers").is_dir(), reason="tests/golden is not in this tree"
)


@pytest.fixture(scope="module")
def samples():
    return json.loads((GOLDEN / "tokenizers" / "samples.json").read_text(encoding="utf-8"))


def model_dir(tmp_path, name):
    """A directory holding one of the golden tokenizers as a model's."""
    source = GOLDEN / "tokenizers" / name
    target = tmp_path / name.split(".")[0]
    target.mkdir()
    file = "tokenizer.model" if name.endswith(".model") else "tokenizer.json"
    shutil.copy(source, target / file)
    return target


@pytest.mark.parametrize("name", ["gpt2_style.json", "llama3_style.json", "llama2_style.model"])
def test_ids_are_transformers(tmp_path, name, samples):
    tokenizer = stride.tokenizers.AutoTokenizer.from_pretrained(model_dir(tmp_path, name))
    for text, want in zip(samples["samples"], samples[name.split(".")[0]]):
        assert tokenizer.encode(text, add_special_tokens=False) == want, text
        assert tokenizer.decode(want) == text or name.endswith(".model"), text


def test_a_batch_pads_and_masks(tmp_path):
    tokenizer = stride.tokenizers.from_pretrained(model_dir(tmp_path, "gpt2_style.json"))
    short, long = tokenizer.encode("to be"), tokenizer.encode("To be, or not to be")
    batch = tokenizer(["To be, or not to be", "to be"], padding=True, return_tensors="pt")
    assert batch.input_ids.shape == (2, len(long)) and batch["input_ids"].dtype == stride.int64
    assert batch.input_ids[1, : len(short)].tolist() == short
    assert batch.attention_mask.tolist() == [
        [1] * len(long),
        [1] * len(short) + [0] * (len(long) - len(short)),
    ]
    one = tokenizer("to be")
    assert one["input_ids"] == short and one["attention_mask"] == [1] * len(short)
    with pytest.raises(ValueError, match="padding=True"):
        tokenizer(["To be, or not to be", "to be"], return_tensors="pt")
    cut = tokenizer("To be, or not to be", truncation=True, max_length=2)
    assert cut["input_ids"] == long[:2]


def test_a_sentencepiece_model_starts_with_its_bos(tmp_path):
    tokenizer = stride.tokenizers.from_pretrained(model_dir(tmp_path, "llama2_style.model"))
    ids = tokenizer.encode("First Citizen")
    assert ids[0] == 1 and ids[1:] == tokenizer.encode("First Citizen", add_special_tokens=False)
    assert tokenizer.decode(ids, skip_special_tokens=True) == "First Citizen"


def test_a_directory_without_a_tokenizer_says_so(tmp_path):
    with pytest.raises(OSError, match=str(tmp_path)):
        stride.tokenizers.from_pretrained(tmp_path)


@pytest.mark.parametrize("name", ["bert_uncased", "bert_cased"])
def test_wordpiece_gives_transformers_ids_and_texts(tmp_path, name, samples):
    tokenizer = stride.tokenizers.from_pretrained(model_dir(tmp_path, f"{name}.json"))
    golden = samples[name]
    for i, text in enumerate(samples["bert_samples"]):
        ids = golden["ids"][i]
        assert tokenizer.encode(text) == ids, text
        assert tokenizer(text)["input_ids"] == ids, text
        assert tokenizer.decode(ids) == golden["decoded"][i], text
        assert tokenizer.decode(ids, skip_special_tokens=True) == golden["decoded_skip"][i], text
    pair = tokenizer("To be, or not to be:", "that is the question.")
    assert pair["input_ids"] == golden["pair"]["ids"]
    assert pair["token_type_ids"] == golden["pair"]["type_ids"]
    assert pair["attention_mask"] == [1] * len(golden["pair"]["ids"])


def test_a_vocab_txt_directory_is_bert_s_tokenizer(tmp_path, samples):
    directory = tmp_path / "bert"
    directory.mkdir()
    shutil.copy(GOLDEN / "tokenizers" / "bert_uncased.vocab.txt", directory / "vocab.txt")
    (directory / "tokenizer_config.json").write_text('{"do_lower_case": true}')
    tokenizer = stride.tokenizers.AutoTokenizer.from_pretrained(directory)
    for text, ids in zip(samples["bert_samples"], samples["bert_uncased"]["ids"]):
        assert tokenizer.encode(text) == ids, text
    assert tokenizer.mask_token == "[MASK]"
    assert tokenizer.convert_tokens_to_ids("[MASK]") == tokenizer.mask_token_id
    assert tokenizer.convert_tokens_to_ids(["[CLS]", "no such token"]) == [
        tokenizer.cls_token_id,
        tokenizer.unk_token_id,
    ]


def test_wordpiece_batches_carry_token_types_and_truncate_pairs(tmp_path):
    tokenizer = stride.tokenizers.from_pretrained(model_dir(tmp_path, "bert_uncased.json"))
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    king, queen = (
        tokenizer.encode("the king", add_special_tokens=False),
        tokenizer.encode("a queen of rome", add_special_tokens=False),
    )
    batch = tokenizer(["the king", "a queen of rome"], padding=True, return_tensors="pt")
    assert set(batch) == {"input_ids", "token_type_ids", "attention_mask"}
    assert batch.input_ids[0].tolist() == [cls, *king, sep] + [0] * (len(queen) - len(king))
    assert batch.token_type_ids.tolist() == [[0] * (len(queen) + 2)] * 2
    # transformers' longest_first: with room for 3 of the texts' 3 + 2 ids,
    # the shorter keeps one and the longer two (half each, the odd one to
    # the longer); with room for 4 the shorter keeps its 2.
    three, two = [cls, *queen[:3]], queen[:2]
    assert len(queen) >= 3
    text3, text2 = tokenizer.decode(queen[:3]), tokenizer.decode(queen[:2])
    cut = tokenizer(text3, text2, truncation=True, max_length=6)
    assert cut["input_ids"] == [*three[:3], sep, two[0], sep]
    assert cut["token_type_ids"] == [0, 0, 0, 0, 1, 1]
    cut = tokenizer(text3, text2, truncation=True, max_length=7)
    assert cut["input_ids"] == [*three[:3], sep, *two, sep]
    one = tokenizer("a queen of rome", truncation=True, max_length=3)
    assert one["input_ids"] == [cls, queen[0], sep]
    assert "token_type_ids" not in tokenizer("x", return_token_type_ids=False)
