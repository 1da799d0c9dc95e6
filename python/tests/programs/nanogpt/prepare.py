"""Character-level data, as nanoGPT's data/shakespeare_char/prepare.py:
train.bin and val.bin (uint16 token ids) and meta.pkl (the vocabulary).

    python prepare.py INPUT_TXT OUT_DIR [MAX_CHARS]
"""

import os
import pickle
import sys

import numpy as np

input_path, out_dir = sys.argv[1], sys.argv[2]
max_chars = int(sys.argv[3]) if len(sys.argv) > 3 else None
with open(input_path, encoding="utf-8") as f:
    data = f.read()[:max_chars]

chars = sorted(set(data))
vocab_size = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}

n = len(data)
train_ids = np.array([stoi[c] for c in data[: int(n * 0.9)]], dtype=np.uint16)
val_ids = np.array([stoi[c] for c in data[int(n * 0.9) :]], dtype=np.uint16)
os.makedirs(out_dir, exist_ok=True)
train_ids.tofile(os.path.join(out_dir, "train.bin"))
val_ids.tofile(os.path.join(out_dir, "val.bin"))
with open(os.path.join(out_dir, "meta.pkl"), "wb") as f:
    pickle.dump({"vocab_size": vocab_size, "itos": itos, "stoi": stoi}, f)
print(f"vocab size {vocab_size}, train {len(train_ids):,} tokens, val {len(val_ids):,} tokens")
