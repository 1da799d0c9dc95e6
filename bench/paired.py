"""Paired timings of stride beside PyTorch in one process, shared by the
Python benchmarks (conv_step.py, ops_step.py, python_overhead.py).

Each round times every case on both sides back to back, alternating which
side goes first, so that a burst of load on a shared host hits both alike;
a case's ratio is torch's time / stride's (above 1: stride is faster, as
bench/RESULTS.md reads every ratio), and the table shows the median of the
paired ratios beside each side's median time per call.
"""

import statistics
import time


def per_call(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def compare(sides, rounds, warmup_calls=lambda calls: 1):
    """sides: {"stride": cases, "torch": cases}, each case name -> (fn, calls).
    Returns {name: (stride times, torch times, paired ratios)}."""
    names = list(sides["stride"])
    results = {n: ([], [], []) for n in names}
    for r in range(rounds):
        for n in names:
            order = ["stride", "torch"] if r % 2 == 0 else ["torch", "stride"]
            got = {}
            for side in order:
                fn, calls = sides[side][n]
                per_call(fn, warmup_calls(calls))
                got[side] = per_call(fn, calls)
            results[n][0].append(got["stride"])
            results[n][1].append(got["torch"])
            results[n][2].append(got["torch"] / got["stride"])
    return results


def print_table(results, unit="ms"):
    scale = {"ms": 1e3, "us": 1e6}[unit]
    ratio = "torch / stride (median of paired ratios)"
    print(f"| case | stride ({unit}/call) | torch ({unit}/call) | {ratio} |")
    print("|---|---:|---:|---:|")
    for name, (s, t, ratios) in results.items():
        s_med = statistics.median(s) * scale
        t_med = statistics.median(t) * scale
        print(f"| {name} | {s_med:.2f} | {t_med:.2f} | {statistics.median(ratios):.2f} |")
