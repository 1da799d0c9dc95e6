"""stride.tokenizers: the tokenizer of a Hugging Face model directory, with
transformers' calls.

    tokenizer = stride.tokenizers.from_pretrained("path/to/model")   # or AutoTokenizer
    batch = tokenizer(["To be, or not", "to be"], padding=True, return_tensors="pt")
    model(batch["input_ids"], attention_mask=batch["attention_mask"])
    tokenizer.decode(model.generate(batch["input_ids"][:1])[0])

The directory's tokenizer.model (SentencePiece, as Llama 2's), else its
tokenizer.json (byte-level BPE, as GPT-2's and Llama 3's, or WordPiece, as
BERT's), else its vocab.txt (WordPiece) runs in stride's C++ tokenizers
(include/stride/data/tokenizer.h), whose ids equal transformers'. Special
tokens come from the tokenizer's post-processor (BERT's [CLS] a [SEP] b
[SEP]); a WordPiece tokenizer also returns token_type_ids, as BERT's does.
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


# transformers' clean_up_tokenization: spaces before punctuation and
# contractions, taken out of a decoded text when the tokenizer's
# configuration asks for it.
_CLEAN_UP = [
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
]


def _token_name(value):
    """A special token of tokenizer_config.json: a string, or an AddedToken
    dictionary with its "content"."""
    return value.get("content") if isinstance(value, dict) else value


class PreTrainedTokenizer:
    """A model directory's tokenizer (from_pretrained builds it)."""

    def __init__(self, path):
        self.name_or_path = os.fspath(path)
        self._impl = _tokenizers.load(self.name_or_path)
        settings = _read_json(os.path.join(self.name_or_path, "tokenizer_config.json"))
        model = _read_json(os.path.join(self.name_or_path, "config.json"))
        self.padding_side = settings.get("padding_side", "right")
        self.model_max_length = settings.get("model_max_length")
        self.clean_up_tokenization_spaces = bool(settings.get("clean_up_tokenization_spaces"))
        self.eos_token_id = model.get("eos_token_id")
        self.bos_token_id = model.get("bos_token_id")
        # BERT's named special tokens, where the vocabulary has them.
        for name in ("mask", "cls", "sep", "unk"):
            token = _token_name(settings.get(f"{name}_token")) or f"[{name.upper()}]"
            token_id = self._impl.token_to_id(token)
            setattr(self, f"{name}_token", token if token_id is not None else None)
            setattr(self, f"{name}_token_id", token_id)
        pad = model.get("pad_token_id")
        if pad is None and settings.get("pad_token") is not None:
            pad = self._impl.token_to_id(_token_name(settings["pad_token"]))
        # A model without a pad token (GPT-2, Llama) pads with its EOS, as
        # transformers' generate does; the attention mask hides them.
        self.pad_token_id = pad if pad is not None else self.eos_token_id
        if isinstance(self.pad_token_id, list):
            self.pad_token_id = self.pad_token_id[0]
        if self.pad_token_id is None:
            self.pad_token_id = 0
        # BERT's tokenizer also gives each token its segment (token type).
        self.model_input_names = ["input_ids", "attention_mask"]
        if self._impl.kind == "wordpiece":
            self.model_input_names.insert(1, "token_type_ids")

    @property
    def vocab_size(self):
        return self._impl.vocab_size

    def __len__(self):
        return self._impl.vocab_size

    def convert_tokens_to_ids(self, tokens):
        """The id of a token of the vocabulary (or a list of ids for a list);
        the unknown token's id, else None, for one it lacks."""
        if isinstance(tokens, str):
            token_id = self._impl.token_to_id(tokens)
            return token_id if token_id is not None else self.unk_token_id
        return [self.convert_tokens_to_ids(t) for t in tokens]

    @property
    def all_special_ids(self):
        """The ids decode(skip_special_tokens=True) leaves out."""
        special = set(self._impl.special_ids()) | set(self._impl.prefix_ids())
        special.update([self.bos_token_id, self.pad_token_id])
        special.update(
            self.eos_token_id if isinstance(self.eos_token_id, list) else [self.eos_token_id]
        )
        special.discard(None)
        return sorted(special)

    def _encode_pair(self, text, text_pair, add_special_tokens, max_length=None):
        """(ids, token type ids) of a text and an optional second one, cut
        to max_length (their longer one first) when given."""
        for t in (text, text_pair):
            if t is not None and not isinstance(t, str):
                raise TypeError(f"a tokenizer takes str texts; got {type(t).__name__}.")
        first = self._impl.encode(text)
        # An empty second text is none, as in transformers.
        second = self._impl.encode(text_pair) if text_pair else None
        if max_length is not None:
            added = len(self._impl.with_special_tokens([], [] if second is not None else None)[0])
            room = max(max_length - (added if add_special_tokens else 0), 0)
            first, second = _truncate_longest_first(first, second, room)
        if add_special_tokens:
            return self._impl.with_special_tokens(first, second)
        ids = first + (second or [])
        return ids, [0] * len(first) + [1] * len(second or [])

    def encode(self, text, text_pair=None, add_special_tokens=True):
        """The ids of text (and text_pair), with the special tokens the
        tokenizer puts around them (a BOS; BERT's [CLS] and [SEP]) when
        add_special_tokens."""
        return self._encode_pair(text, text_pair, add_special_tokens)[0]

    def decode(self, ids, skip_special_tokens=False, clean_up_tokenization_spaces=None):
        """The text of ids (a list, or a 1-d tensor); skip_special_tokens
        leaves out all_special_ids. clean_up_tokenization_spaces (default:
        the tokenizer configuration's) takes spaces out before punctuation."""
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        if ids and isinstance(ids[0], list):
            raise ValueError("decode() takes one sequence of ids; use batch_decode for a batch.")
        if skip_special_tokens:
            special = set(self.all_special_ids)
            ids = [i for i in ids if i not in special]
        text = self._impl.decode([int(i) for i in ids])
        if clean_up_tokenization_spaces is None:
            clean_up_tokenization_spaces = self.clean_up_tokenization_spaces
        if clean_up_tokenization_spaces:
            for before, after in _CLEAN_UP:
                text = text.replace(before, after)
        return text

    def batch_decode(self, sequences, skip_special_tokens=False):
        rows = sequences.tolist() if hasattr(sequences, "tolist") else sequences
        return [self.decode(row, skip_special_tokens) for row in rows]

    def __call__(
        self,
        text,
        text_pair=None,
        add_special_tokens=True,
        padding=False,
        truncation=False,
        max_length=None,
        return_tensors=None,
        return_token_type_ids=None,
    ):
        """input_ids and attention_mask (and BERT's token_type_ids) of a text
        or a list of texts, with text_pair as the second sequence of each.
        padding True or "longest" pads every row to the longest
        ("max_length": to max_length) with pad_token_id on the padding_side,
        attention_mask 0 there; truncation cuts each row's texts, the longer
        first, so that it fits max_length with its special tokens.
        return_tensors "pt" (or "stride") gives (batch, T) int64 tensors,
        which needs rows of one length; None gives lists (one list for a
        single text)."""
        single = isinstance(text, str)
        texts = [text] if single else list(text)
        pairs = [None] * len(texts)
        if text_pair is not None:
            pairs = [text_pair] if isinstance(text_pair, str) else list(text_pair)
            if len(pairs) != len(texts):
                raise ValueError(
                    f"text_pair has {len(pairs)} texts for {len(texts)} texts; give one each."
                )
        if truncation and max_length is None:
            raise ValueError("truncation needs max_length.")
        cut = max_length if truncation else None
        encoded = [self._encode_pair(t, p, add_special_tokens, cut) for t, p in zip(texts, pairs)]
        rows = [list(ids) for ids, _ in encoded]
        types = [list(type_ids) for _, type_ids in encoded]
        masks = [[1] * len(row) for row in rows]
        if padding:
            width = self._padded_width(padding, rows, max_length)
            rows = [self._pad(row, width, self.pad_token_id) for row in rows]
            types = [self._pad(row, width, 0) for row in types]
            masks = [self._pad(row, width, 0) for row in masks]
        columns = {"input_ids": rows, "token_type_ids": types, "attention_mask": masks}
        if return_token_type_ids is None:
            return_token_type_ids = "token_type_ids" in self.model_input_names
        if not return_token_type_ids:
            del columns["token_type_ids"]
        if return_tensors is None:
            return BatchEncoding({k: v[0] if single else v for k, v in columns.items()})
        if return_tensors not in ("pt", "stride"):
            raise ValueError(
                f'return_tensors must be "pt" (stride tensors) or None; got {return_tensors!r}.'
            )
        if len({len(row) for row in rows}) > 1:
            raise ValueError(
                "the texts' ids differ in length, so they make no tensor; pass padding=True."
            )
        import stride

        return BatchEncoding({k: stride.tensor(v, dtype=stride.int64) for k, v in columns.items()})

    @staticmethod
    def _padded_width(padding, rows, max_length):
        if padding == "max_length":
            if max_length is None:
                raise ValueError('padding="max_length" needs max_length.')
            return max_length
        if padding in (True, "longest"):
            return max((len(row) for row in rows), default=0)
        raise ValueError(f'padding must be True, "longest" or "max_length"; got {padding!r}.')

    def _pad(self, row, width, value):
        fill = max(width - len(row), 0)
        return [value] * fill + row if self.padding_side == "left" else row + [value] * fill

    def __repr__(self):
        return (
            f"PreTrainedTokenizer(name_or_path={self.name_or_path!r}, "
            f"vocab_size={self.vocab_size}, padding_side={self.padding_side!r})"
        )


def _truncate_longest_first(first, second, room):
    """Cuts the two sequences to fit in room as Hugging Face tokenizers'
    "longest_first" does: the shorter one keeps its length where the
    longer can give way; else each keeps half of room, the longer one the
    odd token."""
    if second is None:
        return first[:room], None
    if len(first) + len(second) <= room:
        return first, second
    short, long = sorted((len(first), len(second)))
    long = short if short > room else max(short, room - short)
    if short + long > room:
        short = room // 2
        long = short + room % 2
    n1, n2 = (long, short) if len(first) > len(second) else (short, long)
    return first[:n1], second[:n2]


def from_pretrained(path):
    """The tokenizer of a Hugging Face model directory (its tokenizer.model,
    else its tokenizer.json, else its vocab.txt; OSError when it has none of
    them)."""
    return PreTrainedTokenizer(path)


class AutoTokenizer:
    """transformers' AutoTokenizer: from_pretrained(path)."""

    @staticmethod
    def from_pretrained(path, **unused):
        return from_pretrained(path)
