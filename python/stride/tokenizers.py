"""stride.tokenizers: the tokenizer of a Hugging Face model directory, with
transformers' calls.

    tokenizer = stride.tokenizers.from_pretrained("path/to/model")   # or AutoTokenizer
    batch = tokenizer(["To be, or not", "to be"], padding=True, return_tensors="pt")
    model(batch["input_ids"], attention_mask=batch["attention_mask"])
    tokenizer.decode(model.generate(batch["input_ids"][:1])[0])

The directory's tokenizer.model (SentencePiece, as Llama 2's) or its
tokenizer.json (byte-level BPE, as GPT-2's and Llama 3's) runs in stride's
C++ tokenizers (include/stride/data/tokenizer.h), whose ids equal
transformers'. WordPiece (BERT's vocab.txt) is not supported yet.
"""

import json
import os

from . import _stride

_tokenizers = _stride._tokenizers


class BatchEncoding(dict):
    """What a tokenizer call returns: input_ids and attention_mask, by key
    or attribute (transformers' BatchEncoding)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _read_json(path):
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"[tokenizers] {path} is not valid JSON ({e}).") from None


class PreTrainedTokenizer:
    """A model directory's tokenizer (from_pretrained builds it)."""

    def __init__(self, path):
        self.name_or_path = os.fspath(path)
        self._impl = _tokenizers.load(self.name_or_path)
        settings = _read_json(os.path.join(self.name_or_path, "tokenizer_config.json"))
        model = _read_json(os.path.join(self.name_or_path, "config.json"))
        self.padding_side = settings.get("padding_side", "right")
        self.model_max_length = settings.get("model_max_length")
        self.eos_token_id = model.get("eos_token_id")
        self.bos_token_id = model.get("bos_token_id")
        pad = model.get("pad_token_id")
        # A model without a pad token (GPT-2, Llama) pads with its EOS, as
        # transformers' generate does; the attention mask hides them.
        self.pad_token_id = pad if pad is not None else self.eos_token_id
        if isinstance(self.pad_token_id, list):
            self.pad_token_id = self.pad_token_id[0]
        if self.pad_token_id is None:
            self.pad_token_id = 0

    @property
    def vocab_size(self):
        return self._impl.vocab_size

    def __len__(self):
        return self._impl.vocab_size

    def encode(self, text, add_special_tokens=True):
        """The ids of text, after the special tokens that start a sequence
        (a BOS) when add_special_tokens."""
        if not isinstance(text, str):
            raise TypeError(f"encode() takes a str; got {type(text).__name__}.")
        prefix = self._impl.prefix_ids() if add_special_tokens else []
        return list(prefix) + self._impl.encode(text)

    def decode(self, ids, skip_special_tokens=False):
        """The text of ids (a list, or a 1-d tensor); skip_special_tokens
        leaves out the BOS, EOS and pad ids."""
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        if ids and isinstance(ids[0], list):
            raise ValueError("decode() takes one sequence of ids; use batch_decode for a batch.")
        if skip_special_tokens:
            special = {self.bos_token_id, self.pad_token_id}
            special.update(
                self.eos_token_id if isinstance(self.eos_token_id, list) else [self.eos_token_id]
            )
            special.update(self._impl.prefix_ids())
            ids = [i for i in ids if i not in special]
        return self._impl.decode([int(i) for i in ids])

    def batch_decode(self, sequences, skip_special_tokens=False):
        rows = sequences.tolist() if hasattr(sequences, "tolist") else sequences
        return [self.decode(row, skip_special_tokens) for row in rows]

    def __call__(
        self,
        text,
        add_special_tokens=True,
        padding=False,
        truncation=False,
        max_length=None,
        return_tensors=None,
    ):
        """input_ids and attention_mask of a text or a list of texts. padding
        True or "longest" pads every row to the longest ("max_length": to
        max_length) with pad_token_id on the padding_side, attention_mask 0
        there; truncation cuts rows to max_length. return_tensors "pt" (or
        "stride") gives (batch, T) int64 tensors, which needs rows of one
        length; None gives lists (one list for a single text)."""
        single = isinstance(text, str)
        texts = [text] if single else list(text)
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("a tokenizer call takes a str or a list of str.")
        rows = [self.encode(t, add_special_tokens) for t in texts]
        if truncation:
            if max_length is None:
                raise ValueError("truncation needs max_length.")
            rows = [row[:max_length] for row in rows]
        masks = [[1] * len(row) for row in rows]
        if padding:
            if padding == "max_length":
                if max_length is None:
                    raise ValueError('padding="max_length" needs max_length.')
                width = max_length
            elif padding in (True, "longest"):
                width = max((len(row) for row in rows), default=0)
            else:
                raise ValueError(
                    f'padding must be True, "longest" or "max_length"; got {padding!r}.'
                )
            rows, masks = zip(*(self._pad(row, mask, width) for row, mask in zip(rows, masks)))
            rows, masks = list(rows), list(masks)
        if return_tensors is None:
            return BatchEncoding(
                input_ids=rows[0] if single else rows, attention_mask=masks[0] if single else masks
            )
        if return_tensors not in ("pt", "stride"):
            raise ValueError(
                f'return_tensors must be "pt" (stride tensors) or None; got {return_tensors!r}.'
            )
        if len({len(row) for row in rows}) > 1:
            raise ValueError(
                "the texts' ids differ in length, so they make no tensor; pass padding=True."
            )
        import stride

        return BatchEncoding(
            input_ids=stride.tensor(rows, dtype=stride.int64),
            attention_mask=stride.tensor(masks, dtype=stride.int64),
        )

    def _pad(self, row, mask, width):
        fill = width - len(row)
        if fill <= 0:
            return row, mask
        if self.padding_side == "left":
            return [self.pad_token_id] * fill + row, [0] * fill + mask
        return row + [self.pad_token_id] * fill, mask + [0] * fill

    def __repr__(self):
        return (
            f"PreTrainedTokenizer(name_or_path={self.name_or_path!r}, "
            f"vocab_size={self.vocab_size}, padding_side={self.padding_side!r})"
        )


def from_pretrained(path):
    """The tokenizer of a Hugging Face model directory (its tokenizer.model,
    else its tokenizer.json; OSError when it has neither)."""
    return PreTrainedTokenizer(path)


class AutoTokenizer:
    """transformers' AutoTokenizer: from_pretrained(path)."""

    @staticmethod
    def from_pretrained(path, **unused):
        return from_pretrained(path)
