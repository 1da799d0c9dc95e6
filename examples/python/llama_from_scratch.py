"""The "Llama from scratch" article's ladder, written the way the article
writes it (its classes, its OrderedDict of blocks, its get_batches /
evaluate_loss / train loop), on stride: the article's code with
`import torch` changed to `import stride as torch`.

    python examples/python/llama_from_scratch.py --data tinyshakespeare.txt
    python examples/python/llama_from_scratch.py --stages 2 5 --steps-scale 0.2 --json out.json

What differs from the article's text, and why:
  * the data is held as uint8 (stride has no int8) and widened with .long();
  * as stride's C++ ladder does (models/llama/article.cpp), the multi-head
    attention runs all heads as one linear_groups and one fused
    rotary_attention over the heads' own parameters, the RMSNorm as one
    fused rms_norm and the SwiGLU as one fused swiglu (evaluating
    linear_gate once, where the article evaluates it twice); the article's
    code is kept as the forward_reference methods (the per-head code as
    RoPEMaskedAttentionHead.forward), and the tests check they agree;
  * generation (torch.multinomial) is left out: the ladder reports losses.
The article's bugs are kept on purpose (the softmax fed to cross_entropy,
the per-sequence RMSNorm that reads the future, the residual stream that is
overwritten, attention dropout in eval mode, RoPE's theta with i - 1): the
point is to reproduce its numbers; docs/llama.md lists them.
"""

import argparse
import json
import math
import os
import time
from collections import OrderedDict

import stride as torch
import stride.nn.functional as F
from stride import nn

MASTER_CONFIG = {
    "vocab_size": 65,
    "batch_size": 32,
    "context_window": 16,
    "d_model": 128,
    "n_heads": 8,
    "n_layers": 4,
    "epochs": 1000,
    "log_interval": 10,
}


# ---- data (the article's section 0) ----


def load_dataset(path):
    text = open(path, encoding="utf-8").read()
    vocab = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(vocab)}
    dataset = torch.tensor([stoi[ch] for ch in text], dtype=torch.uint8)
    return dataset, vocab


def split_bounds(n):
    return int(0.8 * n), int(0.9 * n)


def get_batches(data, split, batch_size, context_window, config=MASTER_CONFIG):
    train_end, val_end = split_bounds(len(data))
    batch_data = {
        "train": data[:train_end],
        "val": data[train_end:val_end],
        "test": data[val_end:],
    }[split]
    ix = torch.randint(0, batch_data.size(0) - context_window - 1, (batch_size,))
    x = torch.stack([batch_data[i : i + context_window] for i in ix.tolist()]).long()
    y = torch.stack([batch_data[i + 1 : i + context_window + 1] for i in ix.tolist()]).long()
    return x, y


@torch.no_grad()
def evaluate_loss(model, dataset, config=MASTER_CONFIG):
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = []
        for _ in range(10):
            xb, yb = get_batches(dataset, split, config["batch_size"], config["context_window"])
            _, loss = model(xb, yb)
            losses.append(loss.item())
        out[split] = sum(losses) / len(losses)
    model.train()
    return out


@torch.no_grad()
def whole_split_loss(model, dataset, split="val", context_window=16, batch_size=256):
    """Every position of the split scored once, with sequential windows (the
    C++ ladder's "val, whole split"): a deterministic number to compare."""
    train_end, val_end = split_bounds(len(dataset))
    data = dataset[train_end:val_end] if split == "val" else dataset[:train_end]
    n = (data.size(0) - 1) // context_window
    x = data[: n * context_window].long().view(n, context_window)
    y = data[1 : n * context_window + 1].long().view(n, context_window)
    model.eval()
    total = 0.0
    for start in range(0, n, batch_size):
        logits = model(x[start : start + batch_size])
        total += F.cross_entropy(
            logits.reshape(-1, logits.size(-1)),
            y[start : start + batch_size].reshape(-1),
            reduction="sum",
        ).item()
    model.train()
    return total / (n * context_window)


def train(model, optimizer, dataset, scheduler=None, config=MASTER_CONFIG, print_logs=False):
    losses = []
    start_time = time.time()
    for epoch in range(config["epochs"]):
        optimizer.zero_grad()
        xs, ys = get_batches(dataset, "train", config["batch_size"], config["context_window"])
        logits, loss = model(xs, targets=ys)
        loss.backward()
        optimizer.step()
        if scheduler:
            scheduler.step()
        if epoch % config["log_interval"] == 0:
            batch_time = time.time() - start_time
            x = evaluate_loss(model, dataset, config)
            losses.append(x)
            if print_logs:
                print(f"Epoch {epoch} | val loss {x['val']:.3f} | Time {batch_time:.3f}")
            start_time = time.time()
    return losses


# ---- the ladder's models (the article's section 1) ----


class SimpleBrokenModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config["vocab_size"], config["d_model"])
        self.linear = nn.Sequential(
            nn.Linear(config["d_model"], config["d_model"]),
            nn.ReLU(),
            nn.Linear(config["d_model"], config["vocab_size"]),
        )

    def forward(self, idx, targets=None):
        x = self.embedding(idx)
        a = self.linear(x)
        logits = F.softmax(a, dim=-1)  # the bug: probabilities fed to cross_entropy
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, self.config["vocab_size"]), targets.view(-1))
            return logits, loss
        return logits


class SimpleModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config["vocab_size"], config["d_model"])
        self.linear = nn.Sequential(
            nn.Linear(config["d_model"], config["d_model"]),
            nn.ReLU(),
            nn.Linear(config["d_model"], config["vocab_size"]),
        )

    def forward(self, idx, targets=None):
        x = self.embedding(idx)
        logits = self.linear(x)
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, self.config["vocab_size"]), targets.view(-1))
            return logits, loss
        return logits


class RMSNorm(nn.Module):
    """The article's RMSNorm: one scalar per sequence, a per-position scale."""

    def __init__(self, layer_shape, eps=1e-8, bias=False):
        super().__init__()
        self.register_parameter("scale", nn.Parameter(torch.ones(layer_shape)))

    def forward(self, x):
        # forward_reference's five ops as one fused rms_norm over each
        # sequence's (T, d) entries as one row, eps 0 (the same numbers).
        b, t, d = x.shape
        weight = self.scale[:t, :].reshape(t * d)
        return F.rms_norm(x.reshape(b, t * d), (t * d,), weight, eps=0.0).view(b, t, d)

    def forward_reference(self, x):
        """The article's forward."""
        ff_rms = x.norm(dim=(1, 2)) * x[0].numel() ** -0.5
        raw = x / ff_rms.unsqueeze(-1).unsqueeze(-1)
        return self.scale[: x.shape[1], :].unsqueeze(0) * raw


class SimpleModel_RMS(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config["vocab_size"], config["d_model"])
        self.rms = RMSNorm((config["context_window"], config["d_model"]))
        self.linear = nn.Sequential(
            nn.Linear(config["d_model"], config["d_model"]),
            nn.ReLU(),
            nn.Linear(config["d_model"], config["vocab_size"]),
        )

    def forward(self, idx, targets=None):
        x = self.embedding(idx)
        x = self.rms(x)
        logits = self.linear(x)
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, self.config["vocab_size"]), targets.view(-1))
            return logits, loss
        return logits


def rotary_angles(context_window, embedding_dim):
    """The angle of pair i at each position: the article's theta uses i - 1."""
    return [
        [position * 10000.0 ** (-2.0 * (i - 1) / embedding_dim) for i in range(embedding_dim // 2)]
        for position in range(context_window)
    ]


def get_rotary_matrix(context_window, embedding_dim):
    R = torch.zeros((context_window, embedding_dim, embedding_dim))
    for position, row in enumerate(rotary_angles(context_window, embedding_dim)):
        for i, m_theta in enumerate(row):
            R[position, 2 * i, 2 * i] = math.cos(m_theta)
            R[position, 2 * i, 2 * i + 1] = -math.sin(m_theta)
            R[position, 2 * i + 1, 2 * i] = math.sin(m_theta)
            R[position, 2 * i + 1, 2 * i + 1] = math.cos(m_theta)
    return R


class RoPEMaskedAttentionHead(nn.Module):
    def __init__(self, config, causal=True):
        super().__init__()
        self.config = config
        self.causal = causal
        self.w_q = nn.Linear(config["d_model"], config["d_model"], bias=False)
        self.w_k = nn.Linear(config["d_model"], config["d_model"], bias=False)
        self.w_v = nn.Linear(config["d_model"], config["d_model"], bias=False)
        self.R = get_rotary_matrix(config["context_window"], config["d_model"])

    def forward(self, x, dropout_p=0.1):
        b, m, d = x.shape
        q = self.w_q(x)
        k = self.w_k(x)
        v = self.w_v(x)
        q_rotated = torch.bmm(q.transpose(0, 1), self.R[:m]).transpose(0, 1)
        k_rotated = torch.bmm(k.transpose(0, 1), self.R[:m]).transpose(0, 1)
        return F.scaled_dot_product_attention(
            q_rotated, k_rotated, v, dropout_p=dropout_p, is_causal=self.causal
        )


class RoPEMaskedMultiheadAttention(nn.Module):
    def __init__(self, config, causal=True):
        super().__init__()
        self.config = config
        self.causal = causal
        self.dropout_p = 0.1  # attention dropout, on in eval too (the article's SDPA call)
        self.heads = nn.ModuleList(
            [RoPEMaskedAttentionHead(config, causal) for _ in range(config["n_heads"])]
        )
        self.linear = nn.Linear(config["n_heads"] * config["d_model"], config["d_model"])
        self.dropout = nn.Dropout(0.1)
        angles = torch.tensor(
            rotary_angles(config["context_window"], config["d_model"]), dtype=torch.float64
        )
        self.register_buffer("rope_cos", angles.cos().float(), persistent=False)
        self.register_buffer("rope_neg_sin", (-angles.sin()).float(), persistent=False)

    def forward(self, x):
        b, m, d = x.shape
        h = len(self.heads)
        q, k, v = F.linear_groups(
            x,
            [
                [head.w_q.weight for head in self.heads],
                [head.w_k.weight for head in self.heads],
                [head.w_v.weight for head in self.heads],
            ],
        )

        def by_head(t):
            return t.view(b, m, h, d).transpose(1, 2)

        # x . R[p] of the article is the rotation by -angle: tables cos, -sin.
        y = F.rotary_attention(
            by_head(q),
            by_head(k),
            by_head(v),
            self.rope_cos[:m],
            self.rope_neg_sin[:m],
            dropout_p=self.dropout_p,
            is_causal=self.causal,
        )
        x = self.linear(y.transpose(1, 2).reshape(b, m, h * d))
        return self.dropout(x)

    def forward_reference(self, x):
        """The article's forward: each head on its own, outputs concatenated."""
        heads = [h(x, dropout_p=self.dropout_p) for h in self.heads]
        x = torch.cat(heads, dim=-1)
        x = self.linear(x)
        return self.dropout(x)


class RopeModel(nn.Module):
    def __init__(self, config, causal=True, swiglu=False):
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config["vocab_size"], config["d_model"])
        self.rms = RMSNorm((config["context_window"], config["d_model"]))
        self.rope_attention = RoPEMaskedMultiheadAttention(config, causal)
        self.linear = nn.Sequential(
            nn.Linear(config["d_model"], config["d_model"]),
            SwiGLU(config["d_model"]) if swiglu else nn.ReLU(),
        )
        self.last_linear = nn.Linear(config["d_model"], config["vocab_size"])

    def forward(self, idx, targets=None):
        x = self.embedding(idx)
        x = self.rms(x)
        x = x + self.rope_attention(x)
        x = self.rms(x)
        x = x + self.linear(x)
        logits = self.last_linear(x)
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, self.config["vocab_size"]), targets.view(-1))
            return logits, loss
        return logits


class SwiGLU(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.linear_gate = nn.Linear(size, size)
        self.linear = nn.Linear(size, size)
        self.beta = torch.randn(1, requires_grad=True)
        self.beta = nn.Parameter(torch.ones(1))
        self.register_parameter("beta", self.beta)

    def forward(self, x):
        # forward_reference evaluates linear_gate(x) twice; once gives the
        # same value, and the fused swiglu computes g * sigmoid(beta * g) * u.
        return F.swiglu(self.linear_gate(x), self.linear(x), self.beta)

    def forward_reference(self, x):
        """The article's forward."""
        swish_gate = self.linear_gate(x) * torch.sigmoid(self.beta * self.linear_gate(x))
        out = swish_gate * self.linear(x)
        return out


class LlamaBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.rms = RMSNorm((config["context_window"], config["d_model"]))
        self.attention = RoPEMaskedMultiheadAttention(config)
        self.feedforward = nn.Sequential(
            nn.Linear(config["d_model"], config["d_model"]),
            SwiGLU(config["d_model"]),
        )

    def forward(self, x):
        x = self.rms(x)
        x = x + self.attention(x)
        x = self.rms(x)
        x = x + self.feedforward(x)
        return x


class Llama(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embeddings = nn.Embedding(config["vocab_size"], config["d_model"])
        self.llama_blocks = nn.Sequential(
            OrderedDict([(f"llama_{i}", LlamaBlock(config)) for i in range(config["n_layers"])])
        )
        self.ffn = nn.Sequential(
            nn.Linear(config["d_model"], config["d_model"]),
            SwiGLU(config["d_model"]),
            nn.Linear(config["d_model"], config["vocab_size"]),
        )

    def forward(self, idx, targets=None):
        x = self.embeddings(idx)
        x = self.llama_blocks(x)
        logits = self.ffn(x)
        if targets is None:
            return logits
        loss = F.cross_entropy(logits.view(-1, self.config["vocab_size"]), targets.view(-1))
        return logits, loss


# ---- the ladder: stage number -> (article class, model, article params,
# the cumulative steps at which the article printed a loss: a stage that
# goes on training reuses its model and optimizer, as the article's
# "continue training" cells do) ----

STAGES = {
    1: ("SimpleBrokenModel", lambda c: SimpleBrokenModel(c), 33_217, (1000,)),
    2: ("SimpleModel", lambda c: SimpleModel(c), 33_217, (1000,)),
    3: ("SimpleModel_RMS", lambda c: SimpleModel_RMS(c), 35_265, (1000,)),
    4: ("RopeModel (no mask)", lambda c: RopeModel(c, causal=False), 559_681, (1000,)),
    5: ("RopeModel (masked)", lambda c: RopeModel(c), 559_681, (1000, 6000)),
    6: ("RopeModel + SwiGLU", lambda c: RopeModel(c, swiglu=True), 592_706, (5000,)),
    7: ("Llama", lambda c: Llama(c), 2_370_246, (5000, 15000, 25000)),
}


def count_params(model):
    return sum(p.numel() for p in model.parameters())


def run_stage(stage, dataset, steps_scale, log_interval):
    name, build, article_params, milestones = STAGES[stage]
    torch.manual_seed(1337 + stage)
    model = build(MASTER_CONFIG)
    optimizer = torch.optim.Adam(model.parameters())
    steps, val_estimates, done, seconds = [], [], 0, 0.0
    for milestone in milestones:
        target = max(1, round(milestone * steps_scale))
        config = dict(MASTER_CONFIG, epochs=target - done, log_interval=log_interval)
        start = time.time()
        train(model, optimizer, dataset, config=config)
        seconds += time.time() - start
        done = target
        steps.append(done)
        val_estimates.append(evaluate_loss(model, dataset)["val"])
    return {
        "stage": stage,
        "article_class": name,
        "params": count_params(model),
        "article_params": article_params,
        "steps": steps,
        "val_estimate": val_estimates,
        "val_whole_split": whole_split_loss(
            model, dataset, context_window=MASTER_CONFIG["context_window"]
        ),
        "seconds_per_step": seconds / done,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.environ.get("STRIDE_DATA", "data/tinyshakespeare.txt"))
    parser.add_argument("--stages", type=int, nargs="+", default=list(STAGES))
    parser.add_argument(
        "--steps-scale", type=float, default=1.0, help="multiply the article's step counts"
    )
    parser.add_argument(
        "--log-interval",
        type=int,
        default=MASTER_CONFIG["log_interval"],
        help="steps between the article's loss estimates (10 in the article)",
    )
    parser.add_argument("--params", action="store_true", help="print only the parameter counts")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()

    if args.params:
        for stage in args.stages:
            name, build, article_params, _ = STAGES[stage]
            print(
                f"{name:22s} {count_params(build(MASTER_CONFIG)):>9,d} params "
                f"(article {article_params:,d})"
            )
        return
    dataset, vocab = load_dataset(args.data)
    assert len(vocab) == MASTER_CONFIG["vocab_size"]
    results = []
    for stage in args.stages:
        r = run_stage(stage, dataset, args.steps_scale, args.log_interval)
        results.append(r)
        vals = "  ".join(f"{v:.4f}@{n}" for v, n in zip(r["val_estimate"], r["steps"]))
        print(
            f"{r['article_class']:22s} {r['params']:>9,d} params  val {vals}  "
            f"whole {r['val_whole_split']:.4f}  {1000 * r['seconds_per_step']:.1f} ms/step"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"stages": results}, f, indent=2)


if __name__ == "__main__":
    main()
