#!/usr/bin/python3
"""PyTorch's side of bench/autograd_bench.cpp: the same workloads, medians of
repeated timings after warm-up, in microseconds per iteration.

    OMP_WAIT_POLICY=passive /usr/bin/python3 bench/pytorch_autograd.py
"""

import statistics
import time

import torch


def bench(fn, reps=7, min_time=0.2):
    for _ in range(100):
        fn()
    n, t = 1, 0.0
    while t < min_time:
        n *= 2
        start = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - start
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(samples)


def main():
    torch.set_num_threads(1)
    a, b = torch.randn(128), torch.randn(128)
    ag = torch.randn(128, requires_grad=True)
    print(f"add no-grad            {bench(lambda: torch.add(a, b)):10.2f} us")
    print(f"add recording          {bench(lambda: torch.add(ag, b)):10.2f} us")

    def add_fwd_bwd():
        torch.add(ag, b).sum().backward()
        ag.grad = None

    print(f"add forward+backward   {bench(add_fwd_bwd):10.2f} us")
    for threads in (1, 2):
        torch.set_num_threads(threads)
        x = torch.randn(512, 128)
        w = torch.randn(128, 128, requires_grad=True)
        bias = torch.randn(128, requires_grad=True)

        def linear(x=x, w=w, bias=bias):  # this iteration's tensors
            (x @ w.t() + bias).sum().backward()
            w.grad = None
            bias.grad = None

        print(f"linear fwd+bwd t={threads}     {bench(linear):10.2f} us")


if __name__ == "__main__":
    main()
