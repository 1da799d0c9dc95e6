#!/usr/bin/python3
"""The workloads of bench/ops_bench.cpp, timed in PyTorch.

    /usr/bin/python3 bench/pytorch_ops.py --threads 1 --repetitions 5

Same ops, shapes and float32 inputs as ops_bench.cpp; names read
<op>/<shape>/threads:<t> as there. Each workload is warmed up, then timed in
`repetitions` batches of calibrated length (about --min-time seconds each, as
Google Benchmark does); the median of the per-call times is reported. Prints
one JSON object per workload: {"name", "op", "shape", "threads", "median_us",
"repetitions", "iterations"}. Inputs are made outside the timing and the result
of every call is kept alive until the next call replaces it, as in the C++
benchmark.
"""

import argparse
import json
import re
import statistics
import time

import torch


def workloads():
    """(op, shape label, make inputs, run) in the order of ops_bench.cpp."""
    r = torch.randn
    w = []
    for op, f in (("add", torch.add), ("mul", torch.mul)):
        w.append((op, "512x1024", lambda: (r(512, 1024), r(512, 1024)), lambda a, b, f=f: f(a, b)))
        w.append(
            (
                op,
                "T(1024x512)",
                lambda: (r(1024, 512), r(1024, 512)),
                lambda a, b, f=f: f(a.t(), b.t()),
            )
        )
        w.append((op, "512x1024+1024", lambda: (r(512, 1024), r(1024)), lambda a, b, f=f: f(a, b)))
    w.append(("exp", "512x1024", lambda: (r(512, 1024),), torch.exp))
    w.append(("gelu", "512x1024", lambda: (r(512, 1024),), torch.nn.functional.gelu))
    w.append(("sum", "512x1024,dim=0", lambda: (r(512, 1024),), lambda x: x.sum(0)))
    w.append(("sum", "512x1024,dim=1", lambda: (r(512, 1024),), lambda x: x.sum(1)))
    w.append(("sum", "512x1024,all", lambda: (r(512, 1024),), lambda x: x.sum()))
    for rows, cols in ((512, 65), (4096, 256)):
        w.append(
            (
                "softmax",
                f"{rows}x{cols}",
                lambda rows=rows, cols=cols: (r(rows, cols),),
                lambda x: x.softmax(-1),
            )
        )
    for a, b, name in (
        ((512, 128), (128, 128), "512x128@128x128"),
        ((512, 128), (128, 65), "512x128@128x65"),
        ((256, 16, 16), (256, 16, 16), "256x(16x16@16x16)"),
        ((512, 512), (512, 512), "512x512@512x512"),
        ((1024, 1024), (1024, 1024), "1024x1024@1024x1024"),
    ):
        w.append(("matmul", name, lambda a=a, b=b: (r(*a), r(*b)), torch.matmul))
    w.append(("rms_norm", "512x128", lambda: (r(512, 128), r(128)), rms_norm))
    w.append(
        (
            "swiglu",
            "512x352",
            lambda: (r(512, 352), r(512, 352)),
            lambda a, b: torch.nn.functional.silu(a) * b,
        )
    )
    for e in (16, 128):
        w.append(
            (
                "sdpa_causal",
                f"32x8x16x{e}",
                lambda e=e: (r(32, 8, 16, e), r(32, 8, 16, e), r(32, 8, 16, e)),
                sdpa_causal,
            )
        )
    return w


def rms_norm(x, w, eps=1e-5):
    """torch's own RMSNorm where it has one (2.4+), else the usual composition."""
    if hasattr(torch.nn.functional, "rms_norm"):
        return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, eps)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def sdpa_causal(q, k, v):
    """torch's fused attention where it has one (2.0+), else the composition."""
    if hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    L = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    mask = torch.ones(L, L, dtype=torch.bool).tril()
    return scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v


def time_batch(fn, inputs, iters):
    out = None
    start = time.perf_counter_ns()
    for _ in range(iters):
        out = fn(*inputs)
    end = time.perf_counter_ns()
    del out
    return (end - start) / iters / 1e3  # microseconds per call


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument(
        "--min-time", type=float, default=0.1, help="seconds per repetition (default 0.1)"
    )
    p.add_argument("--filter", default="", help="regex on the workload name")
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    # Inputs do not require grad, so autograd records nothing (as in stride).
    for op, shape, make, fn in workloads():
        name = f"{op}/{shape}/threads:{args.threads}"
        if args.filter and not re.search(args.filter, name):
            continue
        inputs = make()
        # Warm-up, then grow the batch until it lasts min_time.
        iters = 1
        while True:
            per_call = time_batch(fn, inputs, iters)
            if per_call * iters >= args.min_time * 1e6 * 0.5 or iters >= 1 << 20:
                break
            iters *= 4
        iters = max(1, int(args.min_time * 1e6 / per_call))
        times = [time_batch(fn, inputs, iters) for _ in range(args.repetitions)]
        print(
            json.dumps(
                {
                    "name": name,
                    "op": op,
                    "shape": shape,
                    "threads": args.threads,
                    "median_us": statistics.median(times),
                    "repetitions": args.repetitions,
                    "iterations": iters,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
