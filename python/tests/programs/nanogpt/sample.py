"""Samples from train.py's checkpoint as nanoGPT's sample.py does.

python sample.py --out_dir=out --dataset_dir=data --top_k=1
"""

import os
import pickle
from contextlib import nullcontext

import torch
from model import GPT, GPTConfig

out_dir = "out"
dataset_dir = "data"
start = "\n"
num_samples = 1
max_new_tokens = 100
temperature = 0.8
top_k = 200
seed = 1337
device = "cpu"
dtype = "float32"
compile = False
exec(open(os.path.join(os.path.dirname(__file__), "configurator.py")).read())

torch.manual_seed(seed)
device_type = "cuda" if "cuda" in device else "cpu"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = (
    nullcontext()
    if dtype == "float32"
    else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
)

checkpoint = torch.load(os.path.join(out_dir, "ckpt.pt"), map_location=device, weights_only=True)
model = GPT(GPTConfig(**checkpoint["model_args"]))
state_dict = checkpoint["model"]
unwanted_prefix = "_orig_mod."
for k in list(state_dict):
    if k.startswith(unwanted_prefix):
        state_dict[k[len(unwanted_prefix) :]] = state_dict.pop(k)
model.load_state_dict(state_dict)
model.eval()
model.to(device)
if compile:
    model = torch.compile(model)

with open(os.path.join(dataset_dir, "meta.pkl"), "rb") as f:
    meta = pickle.load(f)
stoi, itos = meta["stoi"], meta["itos"]


def encode(s):
    return [stoi[c] for c in s]


def decode(tokens):
    return "".join([itos[i] for i in tokens])


x = torch.tensor(encode(start), dtype=torch.long, device=device)[None, ...]
with torch.no_grad():
    with ctx:
        for _ in range(num_samples):
            y = model.generate(x, max_new_tokens, temperature=temperature, top_k=top_k)
            print(decode(y[0].tolist()))
            print("---------------")
