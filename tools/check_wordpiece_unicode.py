#!/usr/bin/env python3
"""Compares stride's WordPiece tokenizer with Hugging Face tokenizers on
every Unicode code point, and on random mixed texts: the check behind the
ranges of Note [Unicode 8 in BERT's normalizer] (src/data/wordpiece.cpp).

    PYTHONPATH=<stride's package> build-venv/bin/python tools/check_wordpiece_unicode.py

Needs `tokenizers` (tools/requirements-hf.txt) and stride's Python package.
Each code point c is encoded inside "the" + c + "king" by the golden
tokenizers of tests/golden/tokenizers (cased, and lowercased with accents
stripped); it prints the code points whose ids differ, as ranges, and
exits 1 when there are any.
"""

import random
import shutil
import sys
import tempfile
import unicodedata
from pathlib import Path

from stride import _stride
from tokenizers import Tokenizer

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden" / "tokenizers"


def load_both(name):
    path = GOLDEN / f"{name}.json"
    directory = tempfile.mkdtemp()
    shutil.copy(path, Path(directory) / "tokenizer.json")
    return Tokenizer.from_file(str(path)), _stride._tokenizers.load(directory)


def as_ranges(code_points):
    ranges = []
    for c in code_points:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    return " ".join(
        f"{a:04X}" + (f"-{b:04X}" if b != a else "") + f" ({unicodedata.category(chr(a))})"
        for a, b in ranges
    )


def random_text(rng):
    words = "the king and queen, of Rome! [MASK] [SEP] café naïve".split()
    out = []
    for _ in range(rng.randint(1, 60)):
        r = rng.random()
        if r < 0.2:
            out.append(rng.choice([" ", "\t", "\n", "\u3000"]))
        elif r < 0.45:
            out.append(rng.choice(words))
        else:
            c = rng.randint(0x20, 0x10FFFF)
            out.append(chr(c) if not 0xD800 <= c <= 0xDFFF else "A")
    return "".join(out)


def main():
    failed = False
    for name in ("bert_cased", "bert_uncased"):
        reference, stride = load_both(name)
        code_points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
        texts = [f"the{chr(c)}king" for c in code_points]
        wanted = reference.encode_batch(texts, add_special_tokens=False)
        differ = [c for c, t, w in zip(code_points, texts, wanted) if w.ids != stride.encode(t)]
        rng = random.Random(0)
        mixed = [random_text(rng) for _ in range(20000)]
        wrong = [
            t
            for t, w in zip(mixed, reference.encode_batch(mixed, add_special_tokens=False))
            if w.ids != stride.encode(t)
            or reference.decode(w.ids, skip_special_tokens=False) != stride.decode(w.ids)
        ]
        print(f"{name}: {len(differ)} code points and {len(wrong)} of {len(mixed)} texts differ")
        if differ:
            print("  " + as_ranges(differ))
        for t in wrong[:5]:
            print(f"  {t!r}")
        failed |= bool(differ or wrong)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
