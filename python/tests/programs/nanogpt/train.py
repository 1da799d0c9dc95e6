"""Trains model.py's GPT as nanoGPT's train.py does, in one process.

    python train.py --dataset_dir=data --out_dir=out --max_iters=50

Two departures from nanoGPT, so that PyTorch and stride (python -m
stride.compat train.py ...) start from the same weights and see the same
batches, their random generators being different: batch offsets come from
NumPy's generator, and init_weights names a file of initial weights, written
by the first run and loaded by later ones.
"""

import math
import os
import pickle
import time
from contextlib import nullcontext

import numpy as np
import torch
from model import GPT, GPTConfig

# I/O
out_dir = "out"
dataset_dir = "data"
init_weights = ""
eval_interval = 25
log_interval = 1
eval_iters = 2
always_save_checkpoint = True
# data
gradient_accumulation_steps = 1
batch_size = 8
block_size = 32
# model
n_layer = 2
n_head = 2
n_embd = 32
dropout = 0.0
bias = False
# AdamW and its learning-rate schedule
learning_rate = 1e-3
max_iters = 50
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.99
grad_clip = 1.0
decay_lr = True
warmup_iters = 10
lr_decay_iters = 50
min_lr = 1e-4
# system
device = "cpu"
dtype = "float32"  # 'float32', 'bfloat16' or 'float16'
compile = False
seed = 1337
config_keys = [
    k
    for k, v in globals().items()
    if not k.startswith("_") and isinstance(v, (int, float, bool, str))
]
exec(open(os.path.join(os.path.dirname(__file__), "configurator.py")).read())
config = {k: globals()[k] for k in config_keys}

os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(seed)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
device_type = "cuda" if "cuda" in device else "cpu"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = (
    nullcontext()
    if dtype == "float32"
    else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
)

batch_rng = np.random.default_rng(seed)


def get_batch(split):
    # A new memmap every batch, as nanoGPT does, to avoid a memory leak.
    data = np.memmap(os.path.join(dataset_dir, f"{split}.bin"), dtype=np.uint16, mode="r")
    ix = torch.from_numpy(batch_rng.integers(len(data) - block_size, size=(batch_size,)))
    x = torch.stack([torch.from_numpy((data[i : i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack(
        [torch.from_numpy((data[i + 1 : i + 1 + block_size]).astype(np.int64)) for i in ix]
    )
    return x.to(device), y.to(device)


iter_num = 0
best_val_loss = 1e9

with open(os.path.join(dataset_dir, "meta.pkl"), "rb") as f:
    meta_vocab_size = pickle.load(f)["vocab_size"]
model_args = dict(
    n_layer=n_layer,
    n_head=n_head,
    n_embd=n_embd,
    block_size=block_size,
    bias=bias,
    vocab_size=meta_vocab_size,
    dropout=dropout,
)
model = GPT(GPTConfig(**model_args))
if init_weights and os.path.exists(init_weights):
    model.load_state_dict(torch.load(init_weights, weights_only=True))
elif init_weights:
    torch.save(model.state_dict(), init_weights)
model.to(device)

scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
if compile:
    print("compiling the model...")
    model = torch.compile(model)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            with ctx:
                logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


def get_lr(it):
    # linear warmup, then cosine decay down to min_lr
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


X, Y = get_batch("train")
t0 = time.time()
raw_model = model
while True:
    lr = get_lr(iter_num) if decay_lr else learning_rate
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr

    if iter_num % eval_interval == 0:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        if losses["val"] < best_val_loss or always_save_checkpoint:
            best_val_loss = losses["val"]
            if iter_num > 0:
                checkpoint = {
                    "model": raw_model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "model_args": model_args,
                    "iter_num": iter_num,
                    "best_val_loss": best_val_loss,
                    "config": config,
                }
                print(f"saving checkpoint to {out_dir}")
                torch.save(checkpoint, os.path.join(out_dir, "ckpt.pt"))

    for _micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch("train")
        scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)

    t1 = time.time()
    dt = t1 - t0
    t0 = t1
    if iter_num % log_interval == 0:
        lossf = loss.item() * gradient_accumulation_steps
        print(f"iter {iter_num}: loss {lossf:.9g}, time {dt * 1000:.2f}ms")
    iter_num += 1
    if iter_num > max_iters:
        break
