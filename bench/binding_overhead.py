"""Per-call overhead of the binding library: stride over nanobind (the
installed `stride` package) beside the same libstride over pybind11
(bench/pybind11, built by bench/pybind11/build.sh with PyPI's pybind11 and,
where built, Debian's) and beside torch, in the same process: `a + b` on 128
floats without grad, with a requiring grad, with a and b requiring grad, and
the small MLP training step of bench/python_overhead.py.

    make python-test venv-torch && build-venv/bin/pip install pybind11
    bench/pybind11/build.sh                    # and: apt-get install pybind11-dev
    PYBIND11=debian bench/pybind11/build.sh    #      for Debian's
    OMP_NUM_THREADS=1 build-venv/bin/python bench/binding_overhead.py [--rounds 32]

Each round times every case on every side back to back, the order going
through each rotation of the sides and its reverse, and records each side's
time / nanobind's (above 1: nanobind is faster, as bench/RESULTS.md reads
every ratio); the table shows the median and the range of the paired ratios
and each side's median time per call. The pybind11 modules bind the same C++
calls with the same overloads as python/src (bench/pybind11/bindings.cpp),
and the MLP step's `no_grad` is stride's own Python guard over each module's
switch, so the stride columns differ only in the binding library.
"""

import argparse
import glob
import importlib.metadata
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


def load_pybind11(path):
    """A module bench/pybind11/build.sh built, with the names cases() calls."""
    import importlib.util

    import stride.autograd

    name = os.path.basename(path).split(".")[0]
    spec = importlib.util.spec_from_file_location(name, path)
    pb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pb)

    class no_grad(stride.autograd.no_grad):
        _get = staticmethod(pb.is_grad_enabled)
        _set = staticmethod(pb.set_grad_enabled)

    pb.no_grad = no_grad
    return pb


def orders_of(sides):
    """Every rotation of the sides and its reverse: each side runs first,
    and before and after each other, equally often."""
    rotations = [sides[i:] + sides[:i] for i in range(len(sides))]
    return rotations + [list(reversed(r)) for r in rotations]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=32)
    parser.add_argument(
        "--pybind11-build",
        action="append",
        help="a folder where bench/pybind11/build.sh put a module (repeatable; "
        "default: build-pybind11/pypi and build-pybind11/debian where built)",
    )
    opts = parser.parse_args()
    builds = opts.pybind11_build or [
        os.path.join(ROOT, "build-pybind11", d) for d in ("pypi", "debian")
    ]
    modules = [m for d in builds for m in glob.glob(os.path.join(d, "_stride_pybind11_*.so"))]
    if not modules:
        sys.exit("no pybind11 module built: run bench/pybind11/build.sh first")
    load_start = os.getloadavg()
    import stride
    import torch

    torch.set_num_threads(1)
    libs = {"nanobind": stride}
    for path in modules:
        pb = load_pybind11(path)
        libs[f"pybind11 {pb.pybind11_version}"] = pb
    libs["torch"] = torch
    sides = {side: cases(lib) for side, lib in libs.items()}
    others = [side for side in sides if side != "nanobind"]
    names = list(sides["nanobind"])
    orders = orders_of(list(sides))
    times = {(side, n): [] for side in sides for n in names}
    ratios = {(side, n): [] for side in others for n in names}
    for r in range(opts.rounds):
        for n in names:
            got = {}
            for side in orders[r % len(orders)]:
                fn, calls = sides[side][n]
                per_call(fn, calls // 10)  # warm up
                got[side] = per_call(fn, calls)
                times[(side, n)].append(got[side])
            for side in others:
                ratios[(side, n)].append(got[side] / got["nanobind"])
    load_end = os.getloadavg()
    print(
        f"nanobind {importlib.metadata.version('nanobind')}, torch {torch.__version__}; "
        f"{opts.rounds} rounds, one thread; "
        f"load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end"
    )
    head = [f"{side} (us/call)" for side in sides] + [f"{side} / nanobind" for side in others]
    print("| case | " + " | ".join(head) + " |")
    print("|---|" + "---:|" * len(head))
    for n in names:
        cells = [f"{statistics.median(times[(side, n)]) * 1e6:.2f}" for side in sides]
        for side in others:
            rs = ratios[(side, n)]
            cells.append(f"{statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})")
        print(f"| {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
