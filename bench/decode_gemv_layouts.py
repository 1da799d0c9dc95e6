"""The decode GEMV (one row times a weight) on the two layouts a weight
comes in: an (in, out) matrix used through its transposed view, as GPT-2's
Conv1D stores it, and an (out, in) matrix, as nn.Linear stores it.

    OMP_NUM_THREADS=2 build-venv/bin/python bench/decode_gemv_layouts.py

Twelve 768 x 3072 weights (113 MB, more than the caches hold), each
multiplied by x (1, 1, 768) in turn, ten times; 7 rounds alternating the
layouts; prints each layout's median time per GEMV.
"""

import statistics
import time

import stride

F = stride.nn.functional


def per_gemv_us(x, weights):
    start = time.perf_counter()
    for _ in range(10):
        for w in weights:
            F.linear(x, w)
    return (time.perf_counter() - start) / (10 * len(weights)) * 1e6


def main():
    stored = [stride.randn(768, 3072) for _ in range(12)]  # (in, out)
    contiguous = [w.t().contiguous() for w in stored]  # (out, in)
    x = stride.randn(1, 1, 768)
    times = {"(in, out) weight, transposed view": [], "(out, in) weight": []}
    for _ in range(7):
        times["(in, out) weight, transposed view"].append(per_gemv_us(x, [w.t() for w in stored]))
        times["(out, in) weight"].append(per_gemv_us(x, contiguous))
    for name, values in times.items():
        print(f"{name}: {statistics.median(values):.0f} us per 768 x 3072 GEMV")


if __name__ == "__main__":
    main()
