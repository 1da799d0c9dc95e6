#!/usr/bin/python3
"""Generates tests/golden/optim.safetensors: PyTorch's optimizer trajectories,
learning-rate schedules and gradient clipping, which tests/optim/golden_test.cpp
recomputes with stride.

Run with the PyTorch of tools/requirements-torch.txt (`make venv-torch`):

    build-venv/bin/python tools/gen_optim_goldens.py

The file is data-driven: "__metadata__" holds, as JSON, each case's
configuration (optimizer and hyperparameters, scheduler and arguments, clip
arguments), and the C++ test builds the same objects from it, so a new case is
one entry here and a re-run of this script.

Tensors:
  params/p<i>              initial parameters (float32; float64 cases cast them)
  grads/p<i>               (STEPS, *shape): the gradient of parameter i at each step
  opt/<case>/p<i>          (STEPS, *shape): parameter i after each step
  opt/<case>/state.<i>.<name>  the optimizer's state buffers after the last step
                           (not its numbers: "step", NAdam's "mu_product")
  sched/<case>/lr          (SCHED_STEPS + 1, groups) float64: get_last_lr() after
                           construction and after each step()
  clip/<case>/g<i>         gradients before clipping; clip/<case>/out<i> after
  clip/<case>/total        the returned total norm (norm cases)

Optimizers run PyTorch's single-tensor path (foreach=False) on two param
groups: group 0 = [p0, p1] with the case's options, group 1 = [p2] with the
case's "group1" overrides. Parameter 1 has no gradient at the steps listed in
"missing_grads" (PyTorch skips it; so must stride). The safetensors writer is
tools/gen_goldens.py's.
"""

import json
import math
import os
import sys
import zlib

os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_goldens  # noqa: E402  (the safetensors writer and dtype table)
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_PATH = os.path.join(ROOT, "tests", "golden", "optim.safetensors")
COMMAND = "build-venv/bin/python tools/gen_optim_goldens.py"

STEPS = 10
SCHED_STEPS = 50
SHAPES = [(4, 3), (5,), (2, 3, 2)]
MISSING_GRADS = [(3, 1)]  # (step, parameter): no gradient there
GRAD_SCALES = [1.0, 3.0, 0.5, 0.1, 2.0, 0.05, 1.5, 0.2, 4.0, 0.7]  # so amsgrad's max matters

OPT_CASES = {
    "sgd_plain": {"optimizer": "SGD", "lr": 0.1},
    "sgd_momentum": {
        "optimizer": "SGD",
        "lr": 0.05,
        "momentum": 0.9,
        "dampening": 0.1,
        "weight_decay": 0.01,
        "group1": {"lr": 0.02, "weight_decay": 0.0},
    },
    "sgd_nesterov": {
        "optimizer": "SGD",
        "lr": 0.05,
        "momentum": 0.9,
        "nesterov": True,
        "weight_decay": 0.001,
        "group1": {"lr": 0.02, "momentum": 0.5},
    },
    "sgd_maximize": {"optimizer": "SGD", "lr": 0.1, "momentum": 0.5, "maximize": True},
    "adam_default": {"optimizer": "Adam", "lr": 0.01},
    "adam_amsgrad_wd": {
        "optimizer": "Adam",
        "lr": 0.01,
        "betas": [0.8, 0.99],
        "eps": 1e-6,
        "weight_decay": 0.1,
        "amsgrad": True,
        "group1": {"lr": 0.005, "weight_decay": 0.0},
    },
    "adam_amsgrad_wd_f64": {
        "optimizer": "Adam",
        "lr": 0.01,
        "betas": [0.8, 0.99],
        "eps": 1e-6,
        "weight_decay": 0.1,
        "amsgrad": True,
        "dtype": "float64",
        "group1": {"lr": 0.005, "weight_decay": 0.0},
    },
    "adam_maximize": {"optimizer": "Adam", "lr": 0.001, "maximize": True},
    "adamw": {
        "optimizer": "AdamW",
        "lr": 0.01,
        "weight_decay": 0.1,
        "group1": {"weight_decay": 0.0},
    },
    "adamw_amsgrad": {
        "optimizer": "AdamW",
        "lr": 0.003,
        "betas": [0.9, 0.95],
        "amsgrad": True,
        "weight_decay": 0.05,
        "group1": {"lr": 0.01},
    },
    "rmsprop": {"optimizer": "RMSprop", "lr": 0.01},
    "rmsprop_centered_momentum": {
        "optimizer": "RMSprop",
        "lr": 0.005,
        "alpha": 0.9,
        "eps": 1e-6,
        "weight_decay": 0.01,
        "momentum": 0.8,
        "centered": True,
        "group1": {"lr": 0.01, "centered": False, "momentum": 0.0},
    },
    "rmsprop_maximize_f64": {
        "optimizer": "RMSprop",
        "lr": 0.01,
        "momentum": 0.5,
        "maximize": True,
        "dtype": "float64",
    },
    "adagrad": {"optimizer": "Adagrad", "lr": 0.1},
    "adagrad_decay": {
        "optimizer": "Adagrad",
        "lr": 0.1,
        "lr_decay": 0.05,
        "weight_decay": 0.01,
        "initial_accumulator_value": 0.1,
        "eps": 1e-8,
        "maximize": True,
        "group1": {"lr": 0.05, "lr_decay": 0.0},
    },
    "adamax": {"optimizer": "Adamax", "lr": 0.02},
    "adamax_wd_maximize": {
        "optimizer": "Adamax",
        "lr": 0.01,
        "betas": [0.8, 0.99],
        "eps": 1e-6,
        "weight_decay": 0.1,
        "maximize": True,
        "group1": {"lr": 0.002, "weight_decay": 0.0},
    },
    "nadam": {"optimizer": "NAdam", "lr": 0.01},
    "nadam_wd": {
        "optimizer": "NAdam",
        "lr": 0.01,
        "betas": [0.8, 0.99],
        "weight_decay": 0.1,
        "momentum_decay": 0.01,
        "maximize": True,
        "group1": {"lr": 0.005, "decoupled_weight_decay": True},
    },
    "nadam_decoupled_f64": {
        "optimizer": "NAdam",
        "lr": 0.01,
        "weight_decay": 0.05,
        "decoupled_weight_decay": True,
        "dtype": "float64",
    },
    "radam": {"optimizer": "RAdam", "lr": 0.01},
    "radam_wd": {
        "optimizer": "RAdam",
        "lr": 0.01,
        "betas": [0.8, 0.99],
        "eps": 1e-6,
        "weight_decay": 0.1,
        "maximize": True,
        "group1": {"lr": 0.005, "decoupled_weight_decay": True},
    },
    "radam_decoupled_f64": {
        "optimizer": "RAdam",
        "lr": 0.01,
        "weight_decay": 0.05,
        "decoupled_weight_decay": True,
        "dtype": "float64",
    },
}

SCHED_GROUP_LRS = [0.1, 0.01]
SCHED_CASES = {
    "step_lr": {"type": "StepLR", "step_size": 7, "gamma": 0.5},
    "linear_lr": {"type": "LinearLR", "start_factor": 0.1, "end_factor": 1.0, "total_iters": 10},
    "linear_lr_defaults": {"type": "LinearLR"},
    "linear_lr_decay": {
        "type": "LinearLR",
        "start_factor": 1.0,
        "end_factor": 0.2,
        "total_iters": 30,
    },
    "cosine": {"type": "CosineAnnealingLR", "T_max": 50, "eta_min": 0.001},
    "cosine_short": {"type": "CosineAnnealingLR", "T_max": 12},
    "lambda_exp": {"type": "LambdaLR", "base": 0.95},
    "sequential_warmup_cosine": {
        "type": "SequentialLR",
        "milestones": [5],
        "schedulers": [
            {"type": "LinearLR", "start_factor": 0.1, "total_iters": 5},
            {"type": "CosineAnnealingLR", "T_max": 20, "eta_min": 1e-4},
        ],
    },
    "sequential_three": {
        "type": "SequentialLR",
        "milestones": [4, 20],
        "schedulers": [
            {"type": "LinearLR", "start_factor": 0.25, "total_iters": 4},
            {"type": "StepLR", "step_size": 5, "gamma": 0.5},
            {"type": "CosineAnnealingLR", "T_max": 10},
        ],
    },
    "multistep": {"type": "MultiStepLR", "milestones": [12, 5, 30, 12], "gamma": 0.5},
    "exponential": {"type": "ExponentialLR", "gamma": 0.95},
    "constant": {"type": "ConstantLR", "factor": 0.25, "total_iters": 8},
    "constant_defaults": {"type": "ConstantLR"},
    "warm_restarts": {"type": "CosineAnnealingWarmRestarts", "T_0": 7},
    "warm_restarts_mult": {
        "type": "CosineAnnealingWarmRestarts",
        "T_0": 3,
        "T_mult": 2,
        "eta_min": 0.001,
    },
    "one_cycle": {"type": "OneCycleLR", "max_lr": 0.5, "total_steps": 50},
    "one_cycle_three_phase_linear": {
        "type": "OneCycleLR",
        "max_lr": [0.5, 0.05],
        "total_steps": 60,
        "pct_start": 0.25,
        "anneal_strategy": "linear",
        "three_phase": True,
        "div_factor": 10.0,
        "final_div_factor": 100.0,
    },
    "sequential_constant_exponential": {
        "type": "SequentialLR",
        "milestones": [6],
        "schedulers": [
            {"type": "ConstantLR", "factor": 0.2, "total_iters": 6},
            {"type": "ExponentialLR", "gamma": 0.9},
        ],
    },
    "sequential_warm_restarts": {
        "type": "SequentialLR",
        "milestones": [5],
        "schedulers": [
            {"type": "LinearLR", "start_factor": 0.1, "total_iters": 5},
            {"type": "CosineAnnealingWarmRestarts", "T_0": 10, "T_mult": 2},
        ],
    },
    "warmup_cosine": {
        "type": "warmup_cosine",
        "warmup_steps": 10,
        "total_steps": 40,
        "min_lr_ratio": 0.1,
    },
    "warmup_cosine_no_warmup": {
        "type": "warmup_cosine",
        "warmup_steps": 0,
        "total_steps": 30,
        "min_lr_ratio": 0.0,
    },
}

CLIP_CASES = {
    "norm2": {"kind": "norm", "max_norm": 1.0, "norm_type": 2.0},
    "norm2_no_clip": {"kind": "norm", "max_norm": 100.0, "norm_type": 2.0},
    "norm1": {"kind": "norm", "max_norm": 2.0, "norm_type": 1.0},
    "norm3": {"kind": "norm", "max_norm": 0.5, "norm_type": 3.0},
    "norm_inf": {"kind": "norm", "max_norm": 0.5, "norm_type": "inf"},
    "norm_inf_one": {"kind": "norm", "max_norm": 0.25, "norm_type": "inf", "nparams": 1},
    "value": {"kind": "value", "clip_value": 0.3},
}


def gen(name):
    return torch.Generator().manual_seed(zlib.crc32(name.encode()))


def make_optimizer(cfg, groups):
    kw = {k: v for k, v in cfg.items() if k not in ("optimizer", "group1", "dtype")}
    if "betas" in kw:
        kw["betas"] = tuple(kw["betas"])
    return getattr(torch.optim, cfg["optimizer"])(groups, foreach=False, **kw)


def optimizer_cases(entries):
    g = gen("params")
    params0 = [torch.randn(*s, generator=g) for s in SHAPES]
    grads = [
        torch.stack([torch.randn(*s, generator=g) * GRAD_SCALES[t] for t in range(STEPS)])
        for s in SHAPES
    ]
    for step, i in MISSING_GRADS:
        grads[i][step].zero_()
    for i, p in enumerate(params0):
        entries.append((f"params/p{i}", p))
    for i, gr in enumerate(grads):
        entries.append((f"grads/p{i}", gr))
    for name, cfg in OPT_CASES.items():
        dtype = torch.float64 if cfg.get("dtype") == "float64" else torch.float32
        params = [p.to(dtype).clone().requires_grad_() for p in params0]
        groups = [{"params": params[:2]}, {"params": params[2:], **cfg.get("group1", {})}]
        opt = make_optimizer(cfg, groups)
        trajectory = [[] for _ in params]
        for t in range(STEPS):
            for i, p in enumerate(params):
                p.grad = None if (t, i) in MISSING_GRADS else grads[i][t].to(dtype).clone()
            opt.step()
            for i, p in enumerate(params):
                trajectory[i].append(p.detach().clone())
        for i in range(len(params)):
            entries.append((f"opt/{name}/p{i}", torch.stack(trajectory[i])))
        for i, p in enumerate(params):
            for key, value in sorted(opt.state[p].items()):
                if key in ("step", "mu_product") or value is None:  # stride's are numbers
                    continue
                entries.append((f"opt/{name}/state.{i}.{key}", value.detach().clone()))


def warmup_cosine_factor(cfg):
    w, total, r = cfg["warmup_steps"], cfg["total_steps"], cfg["min_lr_ratio"]

    def factor(epoch):
        if epoch < w:
            return (epoch + 1) / w
        if epoch > total:
            return r
        progress = (epoch - w) / (total - w)
        return r + (1 - r) * (1 + math.cos(math.pi * progress)) / 2

    return factor


def make_scheduler(cfg, opt):
    S = torch.optim.lr_scheduler
    kw = {k: v for k, v in cfg.items() if k != "type"}
    t = cfg["type"]
    if t == "LambdaLR":
        base = cfg["base"]
        return S.LambdaLR(opt, lambda e: base**e)
    if t == "warmup_cosine":
        return S.LambdaLR(opt, warmup_cosine_factor(cfg))
    if t == "SequentialLR":
        subs = [make_scheduler(c, opt) for c in cfg["schedulers"]]
        return S.SequentialLR(opt, subs, milestones=cfg["milestones"])
    return getattr(S, t)(opt, **kw)


def scheduler_cases(entries):
    import warnings

    warnings.simplefilter("ignore")  # step(0) in SequentialLR warns about the epoch argument
    for name, cfg in SCHED_CASES.items():
        params = [torch.zeros(1, requires_grad=True) for _ in SCHED_GROUP_LRS]
        opt = torch.optim.SGD(
            [{"params": [p], "lr": lr} for p, lr in zip(params, SCHED_GROUP_LRS)], lr=1.0
        )
        sched = make_scheduler(cfg, opt)
        rows = [list(sched.get_last_lr())]
        for _ in range(SCHED_STEPS):
            opt.step()
            sched.step()
            rows.append(list(sched.get_last_lr()))
        entries.append((f"sched/{name}/lr", torch.tensor(rows, dtype=torch.float64)))


def clip_cases(entries):
    for name, cfg in CLIP_CASES.items():
        g = gen("clip/" + name)
        shapes = SHAPES[: cfg.get("nparams", len(SHAPES))]
        params = [torch.zeros(*s, requires_grad=True) for s in shapes]
        for p, s in zip(params, shapes):
            p.grad = torch.randn(*s, generator=g) * 2
        for i, p in enumerate(params):
            entries.append((f"clip/{name}/g{i}", p.grad.clone()))
        if cfg["kind"] == "norm":
            norm_type = math.inf if cfg["norm_type"] == "inf" else cfg["norm_type"]
            total = torch.nn.utils.clip_grad_norm_(params, cfg["max_norm"], norm_type)
            entries.append((f"clip/{name}/total", total.detach().clone()))
        else:
            torch.nn.utils.clip_grad_value_(params, cfg["clip_value"])
        for i, p in enumerate(params):
            entries.append((f"clip/{name}/out{i}", p.grad.clone()))


def build():
    torch.set_num_threads(1)
    entries = []
    optimizer_cases(entries)
    scheduler_cases(entries)
    clip_cases(entries)
    header, chunks, offset = {}, [], 0
    for key, t in entries:
        assert t.dtype in gen_goldens.ST_DTYPES, key
        data = gen_goldens.tensor_bytes(t)
        header[key] = {
            "dtype": gen_goldens.ST_DTYPES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    config = {
        "steps": STEPS,
        "sched_steps": SCHED_STEPS,
        "missing_grads": MISSING_GRADS,
        "sched_group_lrs": SCHED_GROUP_LRS,
        "optimizers": OPT_CASES,
        "schedulers": SCHED_CASES,
        "clip": CLIP_CASES,
    }
    header["__metadata__"] = {
        "generator": COMMAND,
        "torch_version": torch.__version__,
        "cpu_capability": gen_goldens.cpu_capability(),
        "config": json.dumps(config, sort_keys=True),
    }
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + b"".join(chunks)


def main():
    blob = build()
    os.makedirs(os.path.dirname(OUT_PATH), exist_ok=True)
    tmp = OUT_PATH + ".tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, OUT_PATH)
    print(f"wrote {os.path.relpath(OUT_PATH, ROOT)}: {len(blob)} bytes")


if __name__ == "__main__":
    main()
