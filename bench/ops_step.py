"""sort, topk, cumsum and einsum, stride beside PyTorch in the same run:
the shapes a model's code hands them (sampling from a vocabulary's logits,
row-wise sorts, a running sum over a sequence, attention scores and batched
products written as einsum), forward alone and, where a model trains
through the op, forward and backward.

    OMP_NUM_THREADS=2 build-venv/bin/python bench/ops_step.py [--rounds 7]

Both sides get the same inputs. Timing and ratios as bench/paired.py says:
above 1, stride is faster.
"""

import argparse

import numpy as np
from paired import compare, print_table


def forward(lib, fn, *inputs):
    def run():
        with lib.no_grad():
            fn(*inputs)

    return run


def forward_backward(fn, *inputs):
    def run():
        fn(*inputs).sum().backward()
        for t in inputs:
            t.grad = None

    return run


def cases(lib, arrays):
    t = {name: lib.tensor(a) for name, a in arrays.items()}
    grad = {name: lib.tensor(a).requires_grad_() for name, a in arrays.items()}
    return {
        "sort 1-d (1M floats)": (forward(lib, lib.sort, t["long"]), 5),
        "sort rows (256x4096, dim=-1)": (forward(lib, lambda x: lib.sort(x, dim=-1), t["rows"]), 5),
        "argsort rows, stable (256x4096)": (
            forward(lib, lambda x: lib.argsort(x, dim=-1, stable=True), t["rows"]),
            5,
        ),
        "topk k=50 of logits (32x50257)": (
            forward(lib, lambda x: lib.topk(x, 50), t["logits"]),
            20,
        ),
        "topk k=10 of 1M floats": (forward(lib, lambda x: lib.topk(x, 10), t["long"]), 20),
        "topk k=50, forward + backward": (
            forward_backward(lambda x: lib.topk(x, 50).values, grad["logits"]),
            10,
        ),
        "cumsum (1024x1024, dim=1)": (forward(lib, lambda x: lib.cumsum(x, 1), t["square"]), 20),
        "cumsum (1024x1024, dim=0)": (forward(lib, lambda x: lib.cumsum(x, 0), t["square"]), 20),
        "cumsum dim=1, forward + backward": (
            forward_backward(lambda x: lib.cumsum(x, 1), grad["square"]),
            10,
        ),
        "einsum bij,bjk->bik (16x128x64 @ 16x64x128)": (
            forward(lib, lambda a, b: lib.einsum("bij,bjk->bik", a, b), t["a"], t["b"]),
            50,
        ),
        "einsum bhqd,bhkd->bhqk (4x8x128x64)": (
            forward(lib, lambda q, k: lib.einsum("bhqd,bhkd->bhqk", q, k), t["q"], t["k"]),
            50,
        ),
        "einsum ij,ij->i (4096x256)": (
            forward(lib, lambda x, y: lib.einsum("ij,ij->i", x, y), t["x"], t["y"]),
            50,
        ),
        "einsum bhqd,bhkd->bhqk, forward + backward": (
            forward_backward(
                lambda q, k: lib.einsum("bhqd,bhkd->bhqk", q, k), grad["q"], grad["k"]
            ),
            20,
        ),
    }


def inputs():
    rng = np.random.default_rng(0)

    def normal(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    return {
        "long": normal(1 << 20),
        "rows": normal(256, 4096),
        "logits": normal(32, 50257),
        "square": normal(1024, 1024),
        "a": normal(16, 128, 64),
        "b": normal(16, 64, 128),
        "q": normal(4, 8, 128, 64),
        "k": normal(4, 8, 128, 64),
        "x": normal(4096, 256),
        "y": normal(4096, 256),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    opts = parser.parse_args()
    import stride
    import torch

    arrays = inputs()
    results = compare({"stride": cases(stride, arrays), "torch": cases(torch, arrays)}, opts.rounds)
    print(f"torch {torch.__version__}, {opts.rounds} rounds, {torch.get_num_threads()} threads")
    print_table(results, "ms")


if __name__ == "__main__":
    main()
