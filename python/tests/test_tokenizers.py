"""stride.tokenizers against transformers' ids: the tokenizer goldens of
tests/golden/tokenizers (tools/gen_tokenizer_goldens.py: byte-level BPE and
SentencePiece, texts with spaces, newlines, emoji, CJK and accents) in model
directories, and transformers' call conventions (padding, masks, tensors)."""

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
