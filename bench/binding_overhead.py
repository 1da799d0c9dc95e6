"""Per-call overhead of the binding library: stride over nanobind (the
installed `stride` package) beside the same libstride over pybind11
(bench/pybind11, built by bench/pybind11/build.sh) and beside torch, in the
same process: `a + b` on 128 floats without grad, with a requiring grad,
with a and b requiring grad, and the small MLP training step of
bench/python_overhead.py.

    make python-test venv-torch && build-venv/bin/pip install pybind11
    bench/pybind11/build.sh
    OMP_NUM_THREADS=1 build-venv/bin/python bench/binding_overhead.py [--rounds 12]

Each round times every case on the three sides back to back, the order
going through all six permutations of the sides over six rounds, and
records pybind11's time / nanobind's and torch's time / nanobind's (above 1:
nanobind is faster, as bench/RESULTS.md reads every ratio); the table shows
the median and the range of the paired ratios and each side's median time
per call. The pybind11 module binds the same C++ calls with the same
overloads as python/src (bench/pybind11/bindings.cpp), and the MLP step's
`no_grad` is stride's own Python guard over each module's switch, so the
two stride columns differ only in the binding library.
"""

import argparse
import glob
import importlib.metadata
import itertools
import os
import statistics
import sys

from python_overhead import cases as overhead_cases
from python_overhead import per_call

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cases(lib):
    """bench/python_overhead.py's cases, and `a + b` with both requiring grad."""
    out = overhead_cases(lib)
    ag = lib.randn(128, requires_grad=True)
    bg = lib.randn(128, requires_grad=True)
    mlp = out.pop("MLP step (16x32 -> 64 -> 10)")
    out["a + b, a and b require grad"] = (lambda: ag + bg, 20000)
    out["MLP step (16x32 -> 64 -> 10)"] = mlp
    return out


def load_pybind11(build_dir):
    """The pybind11 module, with the names cases() calls."""
    found = glob.glob(os.path.join(build_dir, "_stride_pybind11.*.so"))
    if not found:
        sys.exit(f"no _stride_pybind11 in {build_dir}: run bench/pybind11/build.sh first")
    sys.path.insert(0, build_dir)
    import _stride_pybind11 as pb
    import stride.autograd

    class no_grad(stride.autograd.no_grad):
        _get = staticmethod(pb.is_grad_enabled)
        _set = staticmethod(pb.set_grad_enabled)

    pb.no_grad = no_grad
    return pb


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument(
        "--pybind11-build",
        default=os.path.join(ROOT, "build-pybind11", "release"),
        help="where bench/pybind11/build.sh put the module",
    )
    opts = parser.parse_args()
    load_start = os.getloadavg()
    import stride
    import torch

    pb = load_pybind11(opts.pybind11_build)
    torch.set_num_threads(1)
    sides = {"nanobind": cases(stride), "pybind11": cases(pb), "torch": cases(torch)}
    names = list(sides["nanobind"])
    orders = list(itertools.permutations(sides))
    times = {(side, n): [] for side in sides for n in names}
    ratios = {(side, n): [] for side in ("pybind11", "torch") for n in names}
    for r in range(opts.rounds):
        for n in names:
            got = {}
            for side in orders[r % len(orders)]:
                fn, calls = sides[side][n]
                per_call(fn, calls // 10)  # warm up
                got[side] = per_call(fn, calls)
                times[(side, n)].append(got[side])
            for side in ("pybind11", "torch"):
                ratios[(side, n)].append(got[side] / got["nanobind"])
    load_end = os.getloadavg()
    version = importlib.metadata.version
    print(
        f"nanobind {version('nanobind')}, pybind11 {version('pybind11')}, "
        f"torch {torch.__version__}; {opts.rounds} rounds, one thread; "
        f"load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end"
    )
    print(
        "| case | nanobind (us/call) | pybind11 (us/call) | torch (us/call) "
        "| pybind11 / nanobind | torch / nanobind |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for n in names:
        us = [statistics.median(times[(side, n)]) * 1e6 for side in sides]
        cells = [f"{u:.2f}" for u in us]
        for side in ("pybind11", "torch"):
            rs = ratios[(side, n)]
            cells.append(f"{statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})")
        print(f"| {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
