#!/usr/bin/python3
"""Generates tests/golden/ops.safetensors: inputs and PyTorch's outputs for the
op cases that tests/ops/golden_test.cpp recomputes with stride.

Run with the PyTorch of tools/requirements-torch.txt (`make venv-torch`):

    build-venv/bin/python tools/gen_goldens.py

Layout of the file: for a case NAME, its inputs are NAME/in0, NAME/in1, ...
and PyTorch's results NAME/out0, NAME/out1, ...; "__metadata__" records the
torch version and this command. The C++ test keeps a table of the same case
names and fails for a case present on one side only, so a new case is one
@case function here, one entry there, and a re-run of this script.

Every case draws its inputs from its own generator, seeded by a hash of its
name, so adding a case leaves the other cases' values unchanged; PyTorch runs
on one thread; re-running the script reproduces the file byte for byte. The
safetensors format is written here directly (there is no `safetensors`
package on this machine): an 8-byte little-endian header length, the JSON
header padded with spaces to a multiple of 8, then the tensors' bytes packed
in header order.
"""

import json
import math
import os
import struct
import sys
import zlib

# PyTorch's vector kernels round differently per ISA (see arange_f32 and
# unary_16bit); pin the one the committed file was made with.
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_PATH = os.path.join(ROOT, "tests", "golden", "ops.safetensors")
COMMAND = "build-venv/bin/python tools/gen_goldens.py"
MAX_BYTES = 1_600_000

f32, f64, i64, i32 = torch.float32, torch.float64, torch.int64, torch.int32
bf16, f16, boolean = torch.bfloat16, torch.float16, torch.bool
INF, NAN = math.inf, math.nan

CASES = []  # (name, builder); builder(gen) -> (inputs, outputs)


def case(name):
    assert name.replace("_", "").isalnum() and name.islower(), name
    assert all(n != name for n, _ in CASES), f"duplicate case {name}"

    def register(builder):
        CASES.append((name, builder))
        return builder

    return register


# ---- input builders (all from the case's own generator) ----
def randn(g, *shape, dtype=f32, scale=1.0):
    return (torch.randn(*shape, generator=g, dtype=f64) * scale).to(dtype)


def rand(g, *shape, lo=0.0, hi=1.0, dtype=f32):
    return (torch.rand(*shape, generator=g, dtype=f64) * (hi - lo) + lo).to(dtype)


def randint(g, lo, hi, *shape, dtype=i64):
    return torch.randint(lo, hi, shape, generator=g, dtype=dtype)


def mask(g, *shape, p=0.5):
    return torch.rand(*shape, generator=g) < p


def bits_f32(*words):
    return torch.from_numpy(np.array(words, dtype=np.uint32).view(np.float32).copy())


def with_specials(x, specials):
    return torch.cat([x.flatten(), torch.tensor(specials, dtype=x.dtype)])


# ---- elementwise: binary ----
@case("add_f32")
def _(g):
    a, b = randn(g, 3, 4, 5), randn(g, 3, 4, 5)
    return [a, b], [a + b]


@case("add_alpha_f32")
def _(g):
    a, b = randn(g, 3, 4, 5), randn(g, 3, 4, 5)
    return [a, b], [torch.add(a, b, alpha=-2.5)]


@case("add_broadcast_f32")
def _(g):
    a, b = randn(g, 4, 1, 5), randn(g, 3, 1)
    return [a, b], [a + b]


@case("add_scalar_f32")
def _(g):
    a = randn(g, 3, 7)
    return [a], [a + 2.5]


@case("mul_large_strided_f32")  # big enough for threads and vector loops
def _(g):
    a, b = randn(g, 200, 50), randn(g, 50, 200)
    return [a, b], [a.t() * b, torch.exp(a.t()) + b]


@case("add_f64")
def _(g):
    a, b = randn(g, 4, 6, dtype=f64), randn(g, 6, dtype=f64)
    return [a, b], [torch.add(a, b, alpha=0.3)]


@case("add_i64")
def _(g):
    a, b = randint(g, -100, 100, 3, 5), randint(g, -100, 100, 3, 5)
    return [a, b], [torch.add(a, b, alpha=3)]


@case("sub_f32")
def _(g):
    a, b = randn(g, 3, 4, 5), randn(g, 3, 4, 5)
    return [a, b], [a - b]


@case("sub_alpha_f32")
def _(g):
    a, b = randn(g, 6, 5), randn(g, 6, 5)
    return [a, b], [torch.sub(a, b, alpha=0.5)]


@case("sub_broadcast_f32")
def _(g):
    a, b = randn(g, 3, 1), randn(g, 4, 1, 5)
    return [a, b], [a - b]


@case("sub_scalar_i64")
def _(g):
    a = randint(g, -50, 50, 10)
    return [a], [a - 7]


@case("mul_f32")
def _(g):
    a, b = randn(g, 3, 4, 5), randn(g, 3, 4, 5)
    return [a, b], [a * b]


@case("mul_broadcast_f32")
def _(g):
    a, b = randn(g, 2, 3, 1, 4), randn(g, 5, 1)
    return [a, b], [a * b]


@case("mul_scalar_f32")
def _(g):
    a = randn(g, 4, 5)
    return [a], [a * -0.125]


@case("mul_f64")
def _(g):
    a, b = randn(g, 5, 4, dtype=f64), randn(g, 5, 4, dtype=f64)
    return [a, b], [a * b]


@case("mul_i64")
def _(g):
    a, b = randint(g, -1000, 1000, 12), randint(g, -1000, 1000, 12)
    return [a, b], [a * b]


@case("div_f32")
def _(g):
    a = randn(g, 3, 4, 5)
    b = randn(g, 3, 4, 5).abs().add(0.1) * torch.where(mask(g, 3, 4, 5), 1.0, -1.0)
    return [a, b], [a / b]


@case("div_broadcast_f32")
def _(g):
    a, b = randn(g, 4, 1, 5), rand(g, 3, 1, lo=0.5, hi=2.0)
    return [a, b], [a / b]


@case("div_scalar_f32")
def _(g):
    a = randn(g, 3, 5)
    return [a], [a / 3.0]


@case("div_by_zero_f32")
def _(g):
    a = torch.tensor([1.0, -1.0, 0.0, INF, NAN, -0.0])
    b = torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    return [a, b], [a / b]


@case("div_f64")
def _(g):
    a, b = randn(g, 4, 5, dtype=f64), rand(g, 4, 5, lo=0.5, hi=3.0, dtype=f64)
    return [a, b], [a / b]


@case("div_int_int")
def _(g):
    a = torch.tensor([7, -7, 6, 0, 1, -1, 0, 9007199254740993, 3])
    b = torch.tensor([2, 2, -4, 5, 0, 0, 0, 1, 7])
    return [a, b], [a / b]


@case("div_i32_scalar")
def _(g):
    a = randint(g, -20, 20, 8, dtype=i32)
    return [a], [a / 4]


@case("fmod_remainder_f32")
def _(g):
    a = randn(g, 4, 6, scale=5.0)
    b = (randn(g, 4, 6).abs() + 0.1) * torch.where(mask(g, 4, 6), 1.0, -1.0)
    return [a, b], [torch.fmod(a, b), torch.remainder(a, b)]


@case("fmod_remainder_specials_f64")  # signed zeros, infinities, NaN, division by 0
def _(g):
    a = torch.tensor([5.0, -5.0, 0.0, -0.0, 3.0, -3.0, INF, 1.0, NAN, 1e300, 2.5], dtype=f64)
    b = torch.tensor([0.0, 3.0, -2.0, 2.0, -3.0, 3.0, 2.0, INF, 1.0, 1e-300, -INF], dtype=f64)
    return [a, b], [torch.fmod(a, b), torch.remainder(a, b)]


@case("fmod_remainder_i64")  # the most negative value by -1 too
def _(g):
    a = torch.tensor([7, -7, 7, -7, 0, -(2**63), 2**63 - 1, 5, -5, -(2**63)])
    b = torch.tensor([3, 3, -3, -3, 4, -1, 2, 1, 7, 3])
    return [a, b], [torch.fmod(a, b), torch.remainder(a, b)]


@case("remainder_scalars_bf16")  # the number rounded to bfloat16 first
def _(g):
    a = randn(g, 16, dtype=bf16, scale=4.0)
    return [a], [torch.remainder(a, 0.3), torch.fmod(a, -0.3), torch.remainder(1.5, a)]


@case("div_floor_trunc_f32")  # PyTorch's div_floor from fmod: 1 // 0.1 is 9
def _(g):
    a = torch.tensor([1.0, -1.0, 0.3, -0.3, 7.0, -7.0, 0.0, -0.0, 1.0, INF, 5.0, 1e30, -1.0])
    b = torch.tensor([0.1, 0.1, 0.1, 0.1, 2.0, 2.0, 3.0, 3.0, 0.0, 2.0, -INF, 1e-10, 3.0])
    floor = torch.div(a, b, rounding_mode="floor")
    return [a, b], [floor, torch.div(a, b, rounding_mode="trunc")]


@case("div_floor_bf16")  # computed in float and rounded once
def _(g):
    a, b = randn(g, 64, dtype=bf16, scale=4.0), randn(g, 64, dtype=bf16)
    floor = torch.div(a, b, rounding_mode="floor")
    return [a, b], [floor, torch.floor_divide(a, b), torch.div(a, b, rounding_mode="trunc")]


@case("div_floor_trunc_i64")  # exact past 2^53
def _(g):
    a = torch.tensor([7, -7, 7, -7, 2**53 + 1, -(2**53 + 1), 0, -(2**63)])
    b = torch.tensor([2, 2, -2, -2, 2, 3, -5, 3])
    floor = torch.div(a, b, rounding_mode="floor")
    return [a, b], [floor, torch.div(a, b, rounding_mode="trunc")]


@case("frexp_f32")
def _(g):
    specials = torch.tensor([0.0, -0.0, 1.0, 0.5, -8.0, 1e-40, INF, -INF, NAN, 3.4e38])
    x = torch.cat([randn(g, 8, scale=100.0), specials])
    return [x], [*torch.frexp(x)]


@case("pow_tensor_f32")
def _(g):
    a, e = rand(g, 4, 5, lo=0.1, hi=3.0), randn(g, 4, 5)
    return [a, e], [torch.pow(a, e)]


@case("pow_negative_base_f32")
def _(g):
    a = torch.tensor([-2.0, -2.0, -2.0, -0.5, 0.0, 0.0, -1.0, 2.0])
    e = torch.tensor([3.0, 2.0, 0.5, -1.0, -1.0, 0.0, INF, -INF])
    return [a, e], [torch.pow(a, e)]


@case("pow_broadcast_f32")
def _(g):
    a, e = rand(g, 3, 1, lo=0.5, hi=2.0), randn(g, 4)
    return [a, e], [torch.pow(a, e)]


@case("pow_scalar2_f32")
def _(g):
    a = randn(g, 3, 5)
    return [a], [torch.pow(a, 2)]


@case("pow_scalar3_f32")
def _(g):
    a = randn(g, 3, 5)
    return [a], [torch.pow(a, 3.0)]


@case("pow_scalar_half_f32")
def _(g):
    a = with_specials(rand(g, 12, lo=0.0, hi=5.0), [0.0, -1.0, INF])
    return [a], [torch.pow(a, 0.5)]


@case("pow_scalar_neg1_f32")
def _(g):
    a = randn(g, 3, 5)
    return [a], [torch.pow(a, -1)]


@case("pow_scalar_neg_half_f32")
def _(g):
    a = rand(g, 10, lo=0.1, hi=4.0)
    return [a], [torch.pow(a, -0.5)]


@case("pow_f64")
def _(g):
    a, e = rand(g, 10, lo=0.1, hi=3.0, dtype=f64), randn(g, 10, dtype=f64)
    return [a, e], [torch.pow(a, e)]


@case("pow_i64")
def _(g):
    a, e = randint(g, -6, 7, 12), randint(g, 0, 8, 12)
    return [a, e], [torch.pow(a, e)]


@case("pow_i64_float_scalar")
def _(g):
    a = randint(g, 0, 20, 8)
    return [a], [torch.pow(a, 0.5)]


@case("maximum_nan_f32")
def _(g):
    a = torch.tensor([1.0, NAN, 3.0, NAN, -INF, 0.0, -0.5, INF])
    b = torch.tensor([2.0, 1.0, NAN, NAN, 1.0, 0.0, -0.7, 2.0])
    return [a, b], [torch.maximum(a, b)]


@case("minimum_nan_f32")
def _(g):
    a = torch.tensor([1.0, NAN, 3.0, NAN, -INF, 0.0, -0.5, INF])
    b = torch.tensor([2.0, 1.0, NAN, NAN, 1.0, 0.0, -0.7, 2.0])
    return [a, b], [torch.minimum(a, b)]


@case("maximum_broadcast_f32")
def _(g):
    a, b = randn(g, 4, 1, 5), randn(g, 3, 1)
    return [a, b], [torch.maximum(a, b)]


@case("minimum_broadcast_f32")
def _(g):
    a, b = randn(g, 4, 1, 5), randn(g, 3, 1)
    return [a, b], [torch.minimum(a, b)]


@case("maximum_i64")
def _(g):
    a, b = randint(g, -10, 10, 12), randint(g, -10, 10, 12)
    return [a, b], [torch.maximum(a, b)]


# ---- type promotion ----
@case("promote_i64_plus_float_scalar")
def _(g):
    a = randint(g, -10, 10, 6)
    return [a], [a + 2.5]


@case("promote_i64_mul_int_scalar")
def _(g):
    a = randint(g, -10, 10, 6)
    return [a], [a * 3]


@case("promote_i32_plus_i64")
def _(g):
    a, b = randint(g, -10, 10, 6, dtype=i32), randint(g, -10, 10, 6)
    return [a, b], [a + b]


@case("promote_i32_plus_i64_0d")
def _(g):
    a, b = randint(g, -10, 10, 6, dtype=i32), torch.tensor(5)
    return [a, b], [a + b]


@case("promote_bool_plus_i64")
def _(g):
    a, b = mask(g, 6), randint(g, -10, 10, 6)
    return [a, b], [a + b]


@case("promote_bool_plus_bool")
def _(g):
    a, b = mask(g, 8), mask(g, 8)
    return [a, b], [a + b]


@case("promote_bool_mul_bool")
def _(g):
    a, b = mask(g, 8), mask(g, 8)
    return [a, b], [a * b]


@case("promote_bool_mul_f32")
def _(g):
    a, b = mask(g, 3, 4), randn(g, 3, 4)
    return [a, b], [a * b]


@case("promote_f32_plus_f64")
def _(g):
    a, b = randn(g, 3, 4), randn(g, 3, 4, dtype=f64)
    return [a, b], [a + b]


@case("promote_f32_plus_f64_0d")
def _(g):
    a, b = randn(g, 3, 4), torch.tensor(1.0 / 3.0, dtype=f64)
    return [a, b], [a + b]


@case("promote_f32_0d_plus_f64")
def _(g):
    a, b = torch.tensor(1.0 / 3.0, dtype=f32), randn(g, 3, 4, dtype=f64)
    return [a, b], [a + b]


@case("promote_i64_plus_f64_0d")
def _(g):
    a, b = randint(g, -10, 10, 5), torch.tensor(0.1, dtype=f64)
    return [a, b], [a + b]


@case("promote_i64_mul_f32")
def _(g):
    a, b = randint(g, -10, 10, 5), randn(g, 5)
    return [a, b], [a * b]


@case("promote_bf16_plus_f16")
def _(g):
    a, b = randn(g, 8, dtype=bf16), randn(g, 8, dtype=f16)
    return [a, b], [a + b]


@case("promote_bf16_plus_f32_0d")  # PyTorch rounds the 0-d operand to bfloat16 first
def _(g):
    a, b = randn(g, 8, dtype=bf16), torch.tensor(0.3)
    return [a, b], [a + b]


@case("promote_f16_mul_f64_0d")
def _(g):
    a, b = randn(g, 8, dtype=f16), torch.tensor(1.0 / 3.0, dtype=f64)
    return [a, b], [a * b]


@case("promote_bf16_plus_float_scalar")
def _(g):
    a = randn(g, 8, dtype=bf16)
    return [a], [a + 0.3]


@case("promote_bf16_mul_float_scalar")  # mul and div read the number in float
def _(g):
    a = randn(g, 64, dtype=bf16)
    return [a], [a * 0.3, a / 0.3, 0.3 * a]


@case("promote_f32_pow_f64_0d")
def _(g):
    a, e = rand(g, 6, lo=0.5, hi=2.0), torch.tensor(1.0 / 3.0, dtype=f64)
    return [a, e], [torch.pow(a, e)]


@case("promote_f32_gt_i64_0d")
def _(g):
    a, b = randn(g, 6, scale=2.0), torch.tensor(1)
    return [a, b], [a > b]


@case("promote_f16_mul_f32")
def _(g):
    a, b = randn(g, 8, dtype=f16), randn(g, 8)
    return [a, b], [a * b]


@case("promote_bf16_add_bf16")
def _(g):
    a, b = randn(g, 16, dtype=bf16), randn(g, 16, dtype=bf16)
    return [a, b], [a + b]


# ---- elementwise: unary ----
UNARY_SPECIALS = [0.0, -0.0, INF, -INF, NAN, 1e-30, -1e-30, 20.0, -20.0, 88.0, -88.0, 100.0, -100.0]
# abs and relu of -0.0 have their own cases (abs_signed_zero_f32, relu_signed_zero_f32).
NO_NEGATIVE_ZERO = [v for v in UNARY_SPECIALS if not (v == 0 and math.copysign(1, v) < 0)]
POSITIVE_DOMAIN = ("log", "sqrt", "rsqrt")
UNARY = [
    ("neg", torch.neg, UNARY_SPECIALS),
    ("abs", torch.abs, NO_NEGATIVE_ZERO),
    ("exp", torch.exp, UNARY_SPECIALS),
    ("log", torch.log, [0.0, -0.0, -1.0, INF, -INF, NAN, 1e-30, 1e30]),
    ("sqrt", torch.sqrt, [0.0, -0.0, -1.0, INF, -INF, NAN, 1e-30, 1e30]),
    ("rsqrt", torch.rsqrt, [0.0, -0.0, -1.0, INF, NAN, 1e-30, 1e30]),
    ("sin", torch.sin, [0.0, -0.0, INF, NAN, 100.0, -1000.0]),
    ("cos", torch.cos, [0.0, -0.0, INF, NAN, 100.0, -1000.0]),
    ("tanh", torch.tanh, UNARY_SPECIALS),
    ("sigmoid", torch.sigmoid, UNARY_SPECIALS),
    ("relu", torch.relu, NO_NEGATIVE_ZERO),
    ("silu", F.silu, [0.0, -0.0, INF, NAN, 20.0, -20.0, 88.0, -88.0, 100.0]),
    # No +inf: PyTorch 2.15's vectorised gelu gives NaN there, its scalar
    # loop inf (stride's answer).
    ("gelu", F.gelu, [0.0, -0.0, NAN, 20.0, -20.0, 88.0, -88.0, 100.0]),
    ("square", torch.square, UNARY_SPECIALS + [1e20]),
    ("reciprocal", torch.reciprocal, [0.0, -0.0, INF, -INF, NAN, 1e-30, 1e30]),
    ("expm1", torch.expm1, UNARY_SPECIALS),
    ("log1p", torch.log1p, [0.0, -0.0, -1.0, -2.0, INF, NAN, 1e-30, 1e30]),
    ("log2", torch.log2, [0.0, -0.0, -1.0, INF, NAN, 1e-30, 1e30]),
    ("log10", torch.log10, [0.0, -0.0, -1.0, INF, NAN, 1e-30, 1e30]),
    ("exp2", torch.exp2, UNARY_SPECIALS),
    ("tan", torch.tan, [0.0, -0.0, INF, NAN, 100.0, -1000.0]),
    ("asin", torch.asin, [0.0, -0.0, 1.0, -1.0, 2.0, INF, NAN]),
    ("acos", torch.acos, [0.0, -0.0, 1.0, -1.0, 2.0, INF, NAN]),
    ("atan", torch.atan, UNARY_SPECIALS),
    ("sinh", torch.sinh, UNARY_SPECIALS),
    ("cosh", torch.cosh, UNARY_SPECIALS),
    ("asinh", torch.asinh, UNARY_SPECIALS),
    ("acosh", torch.acosh, [0.0, 1.0, 1e30, INF, NAN]),
    ("atanh", torch.atanh, [0.0, -0.0, 1.0, -1.0, 2.0, INF, NAN]),
    ("erf", torch.erf, UNARY_SPECIALS),
    ("erfc", torch.erfc, UNARY_SPECIALS),
    ("sign", torch.sign, UNARY_SPECIALS),
    ("floor", torch.floor, UNARY_SPECIALS + [2.5, -2.5]),
    ("ceil", torch.ceil, UNARY_SPECIALS + [2.5, -2.5]),
    ("round", torch.round, UNARY_SPECIALS + [0.5, 1.5, 2.5, -0.5, -2.5]),
    ("trunc", torch.trunc, UNARY_SPECIALS + [2.5, -2.5]),
    ("frac", torch.frac, UNARY_SPECIALS + [2.5, -2.5]),
]
# Where the finite values of each op's cases are drawn: (low, high) of a
# uniform draw; the others draw normal values times 2.5.
UNARY_RANGE = {
    **{name: (0.01, 10.0) for name in POSITIVE_DOMAIN + ("log1p", "log2", "log10")},
    **{name: (-0.99, 0.99) for name in ("asin", "acos", "atanh")},
    "tan": (-1.5, 1.5),
    "acosh": (1.01, 10.0),
}

for _name, _fn, _specials in UNARY:

    def _register(name=_name, fn=_fn, specials=_specials):
        @case(f"{name}_f32")
        def _(g):
            if name in UNARY_RANGE:
                lo, hi = UNARY_RANGE[name]
                x = with_specials(rand(g, 24, lo=lo, hi=hi), specials)
            else:
                x = with_specials(randn(g, 24, scale=2.5), specials)
            return [x], [fn(x)]

        @case(f"{name}_f32_strided")
        def _(g):
            if name in POSITIVE_DOMAIN + ("reciprocal",):
                x = rand(g, 5, 6, lo=0.1, hi=5.0)
            elif name in UNARY_RANGE:
                lo, hi = UNARY_RANGE[name]
                x = rand(g, 5, 6, lo=lo, hi=hi)
            else:
                x = randn(g, 5, 6, scale=2.0)
            return [x], [fn(x.t())]

    _register()


# ---- elementwise: binary, computing in floating point ----
BINARY_SPECIALS = [0.0, -0.0, 1.0, -1.0, INF, -INF, NAN]
FLOAT_BINARY = [
    ("atan2", torch.atan2),
    ("hypot", torch.hypot),
    ("logaddexp", torch.logaddexp),
    ("logaddexp2", torch.logaddexp2),
    ("copysign", torch.copysign),
    ("xlogy", torch.xlogy),
]

for _name, _fn in FLOAT_BINARY:

    def _register(name=_name, fn=_fn):
        @case(f"{name}_f32")
        def _(g):
            # Every pair of specials, then random values.
            pairs = torch.tensor(BINARY_SPECIALS)
            a = torch.cat([pairs.repeat_interleave(len(BINARY_SPECIALS)), randn(g, 24, scale=3.0)])
            b = torch.cat([pairs.repeat(len(BINARY_SPECIALS)), randn(g, 24, scale=3.0)])
            if name == "xlogy":
                b = torch.cat([b[: len(BINARY_SPECIALS) ** 2], rand(g, 24, lo=0.01, hi=5.0)])
            return [a, b], [fn(a, b)]

    _register()


# ---- special functions (CPU only) ----
SPECIAL_SPECIALS = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 30.0, -30.0]
PROBABILITY_SPECIALS = [0.0, 1.0, -0.5, 1.5, INF, NAN, 1e-30, 0.5]
ts = torch.special
# name, PyTorch's function, its special values, and the uniform range of its
# random values (None: normal values times 2.5).
SPECIAL_UNARY = [
    ("lgamma", torch.lgamma, SPECIAL_SPECIALS + [-2.5, 1e-30, 1e30], None),
    ("digamma", torch.digamma, SPECIAL_SPECIALS + [-2.5, 1e-30, 1e30], None),
    ("erfinv", torch.erfinv, [0.0, -0.0, 1.0, -1.0, 2.0, INF, NAN, 0.999999], (-0.99, 0.99)),
    ("i0", torch.i0, SPECIAL_SPECIALS + [100.0, 1000.0], None),
    ("sinc", torch.sinc, SPECIAL_SPECIALS + [3.0, 1e-20, 1e20], None),
    ("special_i0e", ts.i0e, SPECIAL_SPECIALS + [100.0, 1000.0, -1e10], None),
    ("special_i1", ts.i1, SPECIAL_SPECIALS + [100.0, -100.0], None),
    ("special_i1e", ts.i1e, SPECIAL_SPECIALS + [100.0, 1000.0, -1e10], None),
    ("special_ndtr", ts.ndtr, SPECIAL_SPECIALS + [-10.0, 10.0], None),
    ("special_ndtri", ts.ndtri, PROBABILITY_SPECIALS, (0.001, 0.999)),
    ("special_log_ndtr", ts.log_ndtr, SPECIAL_SPECIALS + [-10.0, -100.0, 10.0], None),
    ("special_erfcx", ts.erfcx, SPECIAL_SPECIALS + [-10.0, 10.0, 100.0, 1e10], None),
    ("special_entr", ts.entr, SPECIAL_SPECIALS + [1e-30, 1e30], (0.0, 5.0)),
    ("special_bessel_j0", ts.bessel_j0, SPECIAL_SPECIALS + [100.0, 1e3], None),
    ("special_bessel_j1", ts.bessel_j1, SPECIAL_SPECIALS + [100.0, -1e3], None),
    ("special_bessel_y0", ts.bessel_y0, SPECIAL_SPECIALS + [1e-20, 100.0], (0.1, 20.0)),
    ("special_bessel_y1", ts.bessel_y1, SPECIAL_SPECIALS + [100.0], (0.1, 20.0)),
    ("special_modified_bessel_i0", ts.modified_bessel_i0, SPECIAL_SPECIALS + [80.0], None),
    ("special_modified_bessel_i1", ts.modified_bessel_i1, SPECIAL_SPECIALS + [80.0], None),
    ("special_modified_bessel_k0", ts.modified_bessel_k0, SPECIAL_SPECIALS + [80.0], (0.1, 20.0)),
    ("special_modified_bessel_k1", ts.modified_bessel_k1, SPECIAL_SPECIALS + [80.0], (0.1, 20.0)),
    (
        "special_scaled_modified_bessel_k0",
        ts.scaled_modified_bessel_k0,
        SPECIAL_SPECIALS + [1000.0],
        (0.1, 20.0),
    ),
    (
        "special_scaled_modified_bessel_k1",
        ts.scaled_modified_bessel_k1,
        SPECIAL_SPECIALS + [1000.0],
        (0.1, 20.0),
    ),
    ("special_airy_ai", ts.airy_ai, SPECIAL_SPECIALS + [-10.0, 10.0], None),
    ("special_spherical_bessel_j0", ts.spherical_bessel_j0, SPECIAL_SPECIALS + [1e-20], None),
]

for _name, _fn, _specials, _range in SPECIAL_UNARY:

    def _register(name=_name, fn=_fn, specials=_specials, value_range=_range):
        @case(f"{name}_f32")
        def _(g):
            if value_range is None:
                x = randn(g, 24, scale=2.5)
            else:
                x = rand(g, 24, lo=value_range[0], hi=value_range[1])
            x = with_specials(x, specials)
            return [x], [fn(x)]

        @case(f"{name}_f64")
        def _(g):
            if value_range is None:
                x = randn(g, 24, scale=2.5, dtype=f64)
            else:
                x = rand(g, 24, lo=value_range[0], hi=value_range[1], dtype=f64)
            return [x], [fn(x)]

    _register()


# The binary ones: random pairs in their domain, then pairs of specials.
SPECIAL_BINARY = [
    ("special_xlog1py", ts.xlog1py, (-3.0, 3.0), (-0.9, 5.0)),
    ("special_zeta", ts.zeta, (1.1, 6.0), (-3.0, 5.0)),
    ("igamma", torch.igamma, (0.1, 6.0), (0.0, 8.0)),
    ("igammac", torch.igammac, (0.1, 6.0), (0.0, 8.0)),
    ("nextafter", torch.nextafter, (-3.0, 3.0), (-3.0, 3.0)),
]
POLYNOMIALS = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]
# x in [-1.2, 1.2], degrees -1 to 12 (10.7 truncates to 10).
SPECIAL_BINARY += [(f"special_{p}", getattr(ts, p), (-1.2, 1.2), None) for p in POLYNOMIALS]

for _name, _fn, _range_a, _range_b in SPECIAL_BINARY:

    def _register(name=_name, fn=_fn, range_a=_range_a, range_b=_range_b):
        @case(f"{name}_f64")
        def _(g):
            specials = torch.tensor(BINARY_SPECIALS, dtype=f64)
            a = torch.cat(
                [
                    rand(g, 24, lo=range_a[0], hi=range_a[1], dtype=f64),
                    specials.repeat_interleave(len(BINARY_SPECIALS)),
                ]
            )
            if range_b is None:
                degrees = torch.arange(-1, 12, dtype=f64).repeat(2)[:24]
                degrees[-1] = 10.7
                b = torch.cat([degrees, torch.full((len(BINARY_SPECIALS) ** 2,), 3.0, dtype=f64)])
                a[24 : 24 + len(BINARY_SPECIALS)] = torch.tensor(
                    [1.0, -1.0, 0.0, 0.5, 2.0, INF, NAN]
                )
            else:
                b = torch.cat(
                    [
                        rand(g, 24, lo=range_b[0], hi=range_b[1], dtype=f64),
                        specials.repeat(len(BINARY_SPECIALS)),
                    ]
                )
            return [a, b], [fn(a, b)]

    _register()


@case("polygamma_f64")
def _(g):
    # No negative integers: PyTorch's trigamma gives a large finite number
    # there (sin(pi n) rounds away from 0), stride the pole's inf.
    x = with_specials(randn(g, 24, scale=2.5, dtype=f64), [0.0, -1.5, -2.5, INF, NAN, 1e-10, 1e10])
    return [x], [torch.polygamma(n, x) for n in range(5)]


@case("mvlgamma_f64")
def _(g):
    x = rand(g, 12, lo=1.1, hi=8.0, dtype=f64)
    return [x], [torch.mvlgamma(x, p) for p in (1, 3, 5)]


@case("deg2rad_f32")
def _(g):
    x = with_specials(randn(g, 12, scale=100.0), [0.0, -0.0, INF, NAN])
    return [x], [torch.deg2rad(x), torch.rad2deg(x)]


@case("rad2deg_i64")
def _(g):
    x = randint(g, -360, 360, 12)
    return [x], [torch.deg2rad(x), torch.rad2deg(x)]


@case("signbit_f32")
def _(g):
    x = with_specials(randn(g, 12), [0.0, -0.0, INF, -INF, NAN, -NAN])
    return [x], [torch.signbit(x), torch.isposinf(x), torch.isneginf(x)]


@case("isposinf_i64")
def _(g):
    x = randint(g, -5, 5, 12)
    return [x], [torch.signbit(x), torch.isposinf(x), torch.isneginf(x)]


@case("isneginf_f32")
def _(g):
    x = with_specials(randn(g, 6), [0.0, -0.0, INF, -INF, NAN])
    return [x], [torch.isneginf(x)]


@case("nan_to_num_f32")
def _(g):
    x = with_specials(randn(g, 12), [0.0, INF, -INF, NAN])
    return [x], [torch.nan_to_num(x), torch.nan_to_num(x, 1.0, 2.0, -3.0)]


@case("heaviside_f32")
def _(g):
    x = with_specials(torch.round(randn(g, 12)), [0.0, -0.0, INF, -INF, NAN])
    values = randn(g, 17)
    return [x, values], [torch.heaviside(x, values)]


@case("ldexp_f32")
def _(g):
    x, e = randn(g, 12), torch.round(randn(g, 12, scale=4.0))
    return [x, e], [torch.ldexp(x, e)]


@case("float_power_f32")
def _(g):
    x, e = rand(g, 12, lo=0.1, hi=4.0), randn(g, 12)
    return [x, e], [torch.float_power(x, e), torch.float_power(x, 2.5)]


@case("logit_f64")
def _(g):
    x = with_specials(rand(g, 12, lo=0.0, hi=1.0, dtype=f64), [0.0, 1.0, -0.5, NAN])
    return [x], [torch.logit(x), torch.logit(x, 0.2)]


# Computed in float32 and rounded once, so exact. (No gelu: in its
# cancellation tail, x < -4, PyTorch's vectorised erf and the scalar one
# differ by many float ulps, so even PyTorch's bfloat16 gelu depends on the
# lane.)
@case("unary_16bit")
def _(g):
    x, y = randn(g, 24, dtype=bf16, scale=2.0), randn(g, 24, dtype=f16, scale=2.0)
    return [x, y], [torch.exp(x), torch.sigmoid(x), torch.tanh(x), x * y, y * y, y + y]


for _name, _fn in [
    ("exp", torch.exp),
    ("log", torch.log),
    ("sqrt", torch.sqrt),
    ("tanh", torch.tanh),
    ("sigmoid", torch.sigmoid),
    ("gelu", F.gelu),
    ("silu", F.silu),
    ("sin", torch.sin),
    ("rsqrt", torch.rsqrt),
]:

    def _register(name=_name, fn=_fn):
        @case(f"{name}_f64")
        def _(g):
            if name in POSITIVE_DOMAIN:
                x = rand(g, 20, lo=0.01, hi=10.0, dtype=f64)
            else:
                x = randn(g, 20, dtype=f64, scale=2.0)
            return [x], [fn(x)]

    _register()


# Signed zeros. maximum/minimum(0, -0) are left out: PyTorch itself returns
# the first operand on its scalar path and the second on its vector path.
@case("abs_signed_zero_f32")  # abs clears the sign bit
def _(g):
    x = torch.tensor([-0.0, 0.0, -1.0])
    return [x], [torch.abs(x)]


@case("relu_signed_zero_f32")  # PyTorch's relu keeps -0 (it is clamp_min(x, 0))
def _(g):
    x = torch.tensor([-0.0, 0.0, -1.0])
    return [x], [torch.relu(x)]


@case("neg_i64")
def _(g):
    a = randint(g, -100, 100, 10)
    return [a], [torch.neg(a)]


@case("abs_i64")
def _(g):
    a = randint(g, -100, 100, 10)
    return [a], [torch.abs(a)]


@case("square_i64")
def _(g):
    a = randint(g, -100, 100, 10)
    return [a], [torch.square(a)]


@case("relu_i64")
def _(g):
    a = randint(g, -100, 100, 10)
    return [a], [torch.relu(a)]


@case("exp_i64")
def _(g):
    a = randint(g, -5, 5, 10)
    return [a], [torch.exp(a)]


@case("sqrt_i32")
def _(g):
    a = randint(g, 0, 50, 10, dtype=i32)
    return [a], [torch.sqrt(a)]


# ---- clamp, where, masked_fill, tril/triu ----
CLAMP_X = [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, NAN, INF, -INF]


@case("clamp_min_f32")
def _(g):
    x = with_specials(randn(g, 10), CLAMP_X)
    return [x], [torch.clamp(x, min=-0.5)]


@case("clamp_max_f32")
def _(g):
    x = with_specials(randn(g, 10), CLAMP_X)
    return [x], [torch.clamp(x, max=0.5)]


@case("clamp_both_f32")
def _(g):
    x = with_specials(randn(g, 10), CLAMP_X)
    return [x], [torch.clamp(x, min=-0.5, max=0.75)]


@case("clamp_min_gt_max_f32")
def _(g):
    x = randn(g, 6)
    return [x], [torch.clamp(x, min=0.5, max=-0.5)]


@case("clamp_nan_bound_f32")  # a NaN bound gives NaN since PyTorch 2
def _(g):
    x = randn(g, 5)
    return [x], [torch.clamp(x, min=NAN), torch.clamp(x, max=NAN)]


@case("clamp_i64")
def _(g):
    x = randint(g, -10, 10, 12)
    return [x], [torch.clamp(x, min=-3, max=4)]


@case("clamp_i64_float_bound")
def _(g):
    x = randint(g, -10, 10, 12)
    return [x], [torch.clamp(x, min=-2.5)]


@case("where_f32")
def _(g):
    c, a, b = mask(g, 3, 1), randn(g, 1, 4), randn(g, 3, 4)
    return [c, a, b], [torch.where(c, a, b)]


@case("where_promote")
def _(g):
    c, a, b = mask(g, 2, 5), randint(g, -5, 5, 2, 5), randn(g, 5)
    return [c, a, b], [torch.where(c, a, b)]


@case("where_0d_promote")
def _(g):
    c, a, b = mask(g, 2, 3), torch.tensor(-1.0, dtype=f64), randn(g, 2, 3)
    return [c, a, b], [torch.where(c, a, b)]


@case("where_f32_f64")
def _(g):
    c, a, b = mask(g, 6), randn(g, 6), randn(g, 6, dtype=f64)
    return [c, a, b], [torch.where(c, a, b)]


@case("masked_fill_f32")
def _(g):
    x, m = randn(g, 4, 5), mask(g, 1, 5)
    return [x, m], [x.masked_fill(m, -INF)]


@case("masked_fill_i64")
def _(g):
    x, m = randint(g, -9, 9, 3, 4), mask(g, 3, 4)
    return [x, m], [x.masked_fill(m, 42)]


for _d in (-1, 0, 2):

    def _register(d=_d):
        tag = f"m{-d}" if d < 0 else str(d)

        @case(f"tril_diag{tag}")
        def _(g):
            x = randn(g, 2, 4, 5)
            return [x], [torch.tril(x, d)]

        @case(f"triu_diag{tag}")
        def _(g):
            x = randn(g, 2, 4, 5)
            return [x], [torch.triu(x, d)]

    _register()


@case("tril_strided_f32")
def _(g):
    x = randn(g, 5, 4)
    return [x], [torch.tril(x.t(), 1), torch.triu(x.t(), -1)]


@case("tril_tall_i64")
def _(g):
    x = randint(g, 1, 9, 3, 5, 3)
    return [x], [torch.tril(x, -1)]


# ---- comparisons ----
def _compare_inputs(g):
    a = torch.tensor([1.0, 2.0, 3.0, NAN, NAN, INF, -INF, 0.0, -0.0, 5.0])
    b = torch.tensor([1.0, 3.0, 2.0, 1.0, NAN, INF, 1.0, -0.0, 0.0, 5.0])
    return a, b


for _name, _fn in [
    ("eq", torch.eq),
    ("ne", torch.ne),
    ("lt", torch.lt),
    ("le", torch.le),
    ("gt", torch.gt),
    ("ge", torch.ge),
]:

    def _register(name=_name, fn=_fn):
        @case(f"{name}_f32")
        def _(g):
            a, b = _compare_inputs(g)
            return [a, b], [fn(a, b)]

        @case(f"{name}_broadcast_i64")
        def _(g):
            a, b = randint(g, 0, 4, 3, 1), randint(g, 0, 4, 5)
            return [a, b], [fn(a, b)]

        @case(f"{name}_scalar_f32")
        def _(g):
            a = torch.tensor([-1.0, 0.0, 0.5, 1.0, NAN])
            return [a], [fn(a, 0.5)]

    _register()


# ---- integer ops: bitwise logic, shifts, gcd, lcm ----
# Shift counts past the width and negative ones (every bit shifted out).
SHIFT_COUNTS = [-3, -1, 0, 1, 2, 5, 31, 32, 62, 63, 64, 100]

for _name, _fn in [
    ("bitwise_and", torch.bitwise_and),
    ("bitwise_or", torch.bitwise_or),
    ("bitwise_xor", torch.bitwise_xor),
]:

    def _register(name=_name, fn=_fn):
        @case(f"{name}_broadcast_i64")
        def _(g):
            a, b = randint(g, -100, 100, 3, 1), randint(g, -100, 100, 5)
            return [a, b], [fn(a, b)]

        @case(f"{name}_bool")
        def _(g):
            a, b = mask(g, 12), mask(g, 12)
            return [a, b], [fn(a, b)]

        @case(f"{name}_scalar_i32")
        def _(g):
            a = randint(g, -100, 100, 12, dtype=i32)
            return [a], [fn(a, 6)]

    _register()

for _name, _fn in [
    ("bitwise_left_shift", torch.bitwise_left_shift),
    ("bitwise_right_shift", torch.bitwise_right_shift),
]:

    def _register(name=_name, fn=_fn):
        @case(f"{name}_i64")
        def _(g):
            a = torch.tensor([-1000, -7, -1, 0, 1, 3, 1000, -(2**62), 2**62, 5, -5, 2**40])
            b = torch.tensor(SHIFT_COUNTS)
            return [a, b], [fn(a, b)]

        @case(f"{name}_i32")
        def _(g):
            a = torch.tensor([-1000, -7, -1, 0, 1, 3, 1000, -(2**30), 2**30, 5, -5, 77], dtype=i32)
            b = torch.tensor(SHIFT_COUNTS, dtype=i32)
            return [a, b], [fn(a, b)]

    _register()


@case("bitwise_not_i64")
def _(g):
    a = torch.tensor([0, 1, -1, 7, -128, 2**62])
    return [a], [torch.bitwise_not(a)]


@case("bitwise_not_bool")
def _(g):
    a = mask(g, 10)
    return [a], [torch.bitwise_not(a)]


for _name, _fn in [("gcd", torch.gcd), ("lcm", torch.lcm)]:

    def _register(name=_name, fn=_fn):
        @case(f"{name}_i64")
        def _(g):
            a = torch.tensor([0, 0, 12, -12, 7, 35, -49, 2**40, 1, 360])
            b = torch.tensor([0, 5, 18, 18, 0, -14, -21, 2**20 * 3, -1, 84])
            return [a, b], [fn(a, b)]

        @case(f"{name}_broadcast_i32")
        def _(g):
            a, b = randint(g, -60, 60, 3, 1, dtype=i32), randint(g, -60, 60, 5, dtype=i32)
            return [a, b], [fn(a, b)]

    _register()


@case("gt_i64_float_scalar")  # compared in float32: 2^24 + 1 is not > 2^24
def _(g):
    x = torch.tensor([0, 1, 2, 2**24 + 1])
    return [x], [x > 0.5, x > 16777216.0]


@case("lt_i64_vs_f32")
def _(g):
    a, b = randint(g, -3, 3, 8), randn(g, 8, scale=2.0)
    return [a, b], [a < b]


# ---- optimizer-style in-place updates ----
for _w in (0.3, 0.5, 0.7):

    def _register(w=_w):
        @case(f"lerp_w{int(w * 10)}_f32")
        def _(g):
            s, e = randn(g, 3, 4), randn(g, 4)
            return [s, e], [s.clone().lerp_(e, w)]

    _register()


@case("lerp_strided_self_f32")  # in place through a transposed view
def _(g):
    s, e = randn(g, 4, 3), randn(g, 3, 4)
    base = s.clone()
    base.t().lerp_(e, 0.25)
    return [s, e], [base]


@case("addcmul_strided_self_f32")  # in place through a strided slice
def _(g):
    s, a, b = randn(g, 3, 8), randn(g, 3, 4), randn(g, 3, 4)
    base = s.clone()
    base[:, ::2].addcmul_(a, b, value=-1.5)
    return [s, a, b], [base]


@case("addcdiv_strided_self_f32")
def _(g):
    s, a, b = randn(g, 5, 4), randn(g, 4, 5), rand(g, 4, 5, lo=0.5, hi=2.0)
    base = s.clone()
    base.t().addcdiv_(a, b, value=0.01)
    return [s, a, b], [base]


@case("addcmul_f32")
def _(g):
    s, a, b = randn(g, 3, 4), randn(g, 3, 4), randn(g, 4)
    return [s, a, b], [s.clone().addcmul_(a, b, value=0.5)]


@case("addcdiv_f32")
def _(g):
    s, a, b = randn(g, 3, 4), randn(g, 3, 4), rand(g, 3, 4, lo=0.5, hi=2.0)
    return [s, a, b], [s.clone().addcdiv_(a, b, value=-2.0)]


@case("addcdiv_f64")
def _(g):
    s, a, b = (
        randn(g, 10, dtype=f64),
        randn(g, 10, dtype=f64),
        rand(g, 10, lo=0.5, hi=2.0, dtype=f64),
    )
    return [s, a, b], [s.clone().addcdiv_(a, b, value=1e-3)]


# ---- reductions ----
def _reduce_input(g, dtype=f32):
    return randn(g, 3, 4, 5, dtype=dtype)


REDUCE_DIMS = [
    ("all", None, False),
    ("d1", (1,), False),
    ("d02", (0, 2), False),
    ("dm1_keep", (-1,), True),
    ("d01_keep", (0, 1), True),
    ("alldims_keep", (0, 1, 2), True),
]

for _tag, _dims, _keep in REDUCE_DIMS:

    def _register(tag=_tag, dims=_dims, keep=_keep):
        def reduce(fn, x, **kw):
            return fn(x, **kw) if dims is None else fn(x, dim=dims, keepdim=keep, **kw)

        @case(f"sum_{tag}_f32")
        def _(g):
            x = _reduce_input(g)
            return [x], [reduce(torch.sum, x)]

        @case(f"mean_{tag}_f32")
        def _(g):
            x = _reduce_input(g)
            return [x], [reduce(torch.mean, x)]

        for c in (0, 1):

            @case(f"var_{tag}_c{c}_f32")
            def _(g, c=c):
                x = _reduce_input(g)
                if dims is None:
                    return [x], [torch.var(x, None, correction=c)]
                return [x], [torch.var(x, dims, correction=c, keepdim=keep)]

        @case(f"amax_{tag}_f32")
        def _(g):
            x = _reduce_input(g)
            return [x], [torch.amax(x) if dims is None else torch.amax(x, dims, keep)]

        @case(f"amin_{tag}_f32")
        def _(g):
            x = _reduce_input(g)
            return [x], [torch.amin(x) if dims is None else torch.amin(x, dims, keep)]

        @case(f"logsumexp_{tag}_f32")
        def _(g):
            x = _reduce_input(g)
            d = (0, 1, 2) if dims is None else dims
            return [x], [torch.logsumexp(x, d, keepdim=keep)]

    _register()


@case("sum_all_f64")
def _(g):
    x = _reduce_input(g, f64)
    return [x], [x.sum()]


@case("sum_d1_i64")
def _(g):
    x = randint(g, -100, 100, 3, 4, 5)
    return [x], [x.sum(1)]


@case("sum_all_i32")
def _(g):
    x = randint(g, -100, 100, 3, 4, dtype=i32)
    return [x], [x.sum()]


@case("sum_d0_bool")
def _(g):
    x = mask(g, 6, 3)
    return [x], [x.sum(0)]


@case("sum_dtype_f64_of_f32")
def _(g):
    x = _reduce_input(g)
    return [x], [x.sum(dtype=f64)]


@case("sum_strided_f32")
def _(g):
    x = randn(g, 5, 6, 7)
    return [x], [x.permute(2, 0, 1).sum((0, 2))]


@case("mean_d1_f64")
def _(g):
    x = _reduce_input(g, f64)
    return [x], [x.mean(1)]


@case("var_d1_c1_f64")
def _(g):
    x = _reduce_input(g, f64)
    return [x], [torch.var(x, 1, correction=1)]


@case("var_offset_f32")  # values far from 0: catches a one-pass E[x^2]-E[x]^2 var
def _(g):
    x = randn(g, 4, 50) + 1000.0
    return [x], [torch.var(x, 1, correction=1)]


@case("amax_nan_f32")
def _(g):
    x = torch.tensor([[1.0, NAN, 3.0], [-INF, 2.0, INF], [2.0, 5.0, NAN]])
    return [x], [torch.amax(x, 1), torch.amin(x, 1), torch.amax(x), torch.amin(x, 0)]


@case("amax_inf_rows_f32")  # the identity of max is -inf, not the lowest finite float
def _(g):
    x = torch.tensor([[-INF, -INF, -INF], [INF, INF, INF], [1.0, -INF, 2.0]])
    return [x], [torch.amax(x, 1), torch.amin(x, 1), x[0].max(), x[1].min()]


@case("long_rows_f32")  # more elements per output than one reduction chunk
def _(g):
    x = randn(g, 2, 20000)
    x[1, 17000] = 10.0  # the max of row 1 lies in its second chunk
    v, i = torch.max(x, 1)
    return [x], [
        x.sum(1),
        x.mean(1),
        torch.var(x, 1),
        torch.amax(x, 1),
        v,
        i,
        torch.argmin(x),
        torch.logsumexp(x, 1),
        torch.softmax(x, 1)[:, 16990:17010],
    ]


@case("reduce_empty_f32")  # inputs built in C++: zeros(3, 0)
def _(g):
    x = torch.zeros(3, 0)
    return [], [x.sum(1), x.mean(1), x.sum(), torch.norm(x, 2, dim=1)]


@case("var_empty_f32")  # inputs built in C++: zeros(3, 0); 0 / max(0 - 1, 0) = nan
def _(g):
    return [], [torch.var(torch.zeros(3, 0), 1)]


@case("logsumexp_empty_f32")  # inputs built in C++: zeros(3, 0); log(0) = -inf
def _(g):
    return [], [torch.logsumexp(torch.zeros(3, 0), 1)]


@case("reduce_bf16_f16")
def _(g):
    x, y = randn(g, 3, 40, dtype=bf16), randn(g, 3, 40, dtype=f16)
    v, i = torch.max(x, 1)
    return [x, y], [x.sum(1), y.sum(1), y.mean(1), v, i, torch.amin(y, 0)]


@case("var_single_c1_f32")
def _(g):
    x = randn(g, 3, 1)
    return [x], [torch.var(x, 1, correction=1)]


@case("var_large_correction_f32")
def _(g):
    x = randn(g, 3, 2)
    return [x], [torch.var(x, 1, correction=3)]


@case("sum_dtype_f32_of_i64")
def _(g):
    x = randint(g, -100, 100, 4, 5)
    return [x], [x.sum(dtype=f32)]


@case("amax_d1_i64")
def _(g):
    x = randint(g, -100, 100, 3, 4, 5)
    return [x], [torch.amax(x, 1), torch.amin(x, (0, 2))]


@case("max_all_f32")
def _(g):
    x = _reduce_input(g)
    return [x], [x.max(), x.min()]


def _ties_input():
    # Ties in every row and column, and a NaN row; small integers keep it readable.
    x = torch.tensor(
        [
            [
                [1.0, 3.0, 3.0, 1.0, 0.0],
                [2.0, 2.0, 0.0, 0.0, 2.0],
                [5.0, 5.0, 5.0, 5.0, 5.0],
                [0.0, -1.0, 4.0, -1.0, 4.0],
            ],
            [
                [1.0, NAN, 3.0, NAN, 0.0],
                [-2.0, -2.0, -3.0, -3.0, 9.0],
                [7.0, 7.0, 7.0, 7.0, 7.0],
                [0.0, 0.0, 0.0, 0.0, 0.0],
            ],
        ]
    )
    return x


for _d in (0, 1, 2, -1):
    for _keep in (False, True):

        def _register(d=_d, keep=_keep):
            tag = f"d{d}" if d >= 0 else f"dm{-d}"
            tag += "_keep" if keep else ""

            @case(f"max_{tag}_ties_f32")
            def _(g):
                x = _ties_input()
                v, i = torch.max(x, d, keepdim=keep)
                return [x], [v, i]

            @case(f"min_{tag}_ties_f32")
            def _(g):
                x = _ties_input()
                v, i = torch.min(x, d, keepdim=keep)
                return [x], [v, i]

            @case(f"argmax_{tag}_ties_f32")
            def _(g):
                x = _ties_input()
                return [x], [torch.argmax(x, d, keepdim=keep), torch.argmin(x, d, keepdim=keep)]

        _register()


@case("max_d1_random_f32")
def _(g):
    x = randn(g, 6, 40)
    v, i = torch.max(x, 1)
    w, j = torch.min(x, 0)
    return [x], [v, i, w, j]


@case("max_d1_ties_i64")
def _(g):
    x = randint(g, 0, 3, 5, 6)
    v, i = torch.max(x, 1)
    w, j = torch.min(x, 1)
    return [x], [v, i, w, j]


@case("argmax_all_ties_f32")
def _(g):
    x = torch.tensor([[1.0, 3.0, 3.0, 1.0], [2.0, 3.0, 0.0, 0.0]])
    return [x], [torch.argmax(x), torch.argmin(x), torch.argmax(x, keepdim=True)]


@case("argmax_all_random_f32")
def _(g):
    x = randn(g, 7, 9)
    return [x], [torch.argmax(x), torch.argmin(x)]


# ---- scans, sorting, all/any, isnan/isinf/isfinite ----
@case("cumsum_f32")
def _(g):
    x = randn(g, 3, 50)
    return [x], [torch.cumsum(x, 1), torch.cumsum(x, 0), torch.cumsum(x, -1, dtype=f64)]


@case("cumsum_i64")
def _(g):
    x, b = randint(g, -5, 5, 4, 6), mask(g, 4, 6)
    return [x, b], [torch.cumsum(x, 1), torch.cumsum(b, 0)]


@case("cumprod_f32")
def _(g):
    x = rand(g, 4, 6, lo=0.5, hi=1.5)
    x[1, 2] = 0.0
    x[2, 0] = 0.0
    x[2, 4] = 0.0
    return [x], [torch.cumprod(x, 1), torch.cumprod(x, 0)]


@case("cumprod_i64")
def _(g):
    x = randint(g, -3, 4, 3, 5)
    return [x], [torch.cumprod(x, 1)]


# ---- reductions beyond sum and max, order statistics, scans ----
@case("prod_f32")
def _(g):
    x = rand(g, 4, 6, lo=0.5, hi=1.5)
    x[1, 2] = 0.0
    return [x], [torch.prod(x, 1), torch.prod(x), torch.prod(x, 0, keepdim=True)]


@case("prod_i64")
def _(g):
    x = randint(g, -3, 4, 3, 5)
    return [x], [torch.prod(x, 1), torch.prod(x, 0, dtype=f64)]


@case("std_dev_f32")
def _(g):
    x = randn(g, 4, 6)
    return [x], [torch.std(x, (0, 1), correction=0.5), torch.std(x, 1, keepdim=True)]


@case("var_mean_f32")
def _(g):
    x = randn(g, 4, 6)
    return [x], [*torch.var_mean(x, 1, correction=2)]


@case("std_mean_f32")
def _(g):
    x = randn(g, 4, 6)
    return [x], [*torch.std_mean(x, (0,), correction=0, keepdim=True)]


@case("nansum_f32")
def _(g):
    x = randn(g, 4, 6)
    x[0, 1] = NAN
    x[3, 3] = NAN
    return [x], [torch.nansum(x, 1), torch.nansum(x)]


@case("nanmean_f32")
def _(g):
    x = randn(g, 4, 6)
    x[0, 1] = NAN
    x[2, :] = NAN
    return [x], [torch.nanmean(x, 1), torch.nanmean(x)]


@case("count_nonzero_f32")
def _(g):
    x = randint(g, -1, 2, 4, 6).to(f32)
    return [x], [torch.count_nonzero(x, 1), torch.count_nonzero(x)]


@case("aminmax_f32")
def _(g):
    x = randn(g, 4, 6)
    return [x], [*torch.aminmax(x, dim=1), *torch.aminmax(x)]


@case("median_f32")
def _(g):
    x = randint(g, 0, 5, 4, 6).to(f32)
    x[3, 2] = NAN
    return [x], [*torch.median(x, 1), torch.median(x[:3])]


@case("nanmedian_f32")
def _(g):
    x = randn(g, 4, 6)
    x[0, 1] = NAN
    x[2, 1:] = NAN
    return [x], [*torch.nanmedian(x, 1), torch.nanmedian(x)]


@case("kthvalue_f32")
def _(g):
    x = randn(g, 4, 6)
    return [x], [*torch.kthvalue(x, 3, 1), *torch.kthvalue(x, 1, 0, keepdim=True)]


@case("mode_i64")
def _(g):
    x = randint(g, 0, 4, 4, 9)
    return [x], [*torch.mode(x, 1)]


@case("quantile_f32")
def _(g):
    x = randn(g, 4, 7)
    q = torch.tensor([0.0, 0.3, 0.5, 1.0])
    out = [torch.quantile(x, q, 1), torch.quantile(x, 0.25, keepdim=True)]
    for how in ["lower", "higher", "nearest", "midpoint"]:
        out.append(torch.quantile(x, q, 0, interpolation=how))
    return [x, q], out


@case("nanquantile_f32")
def _(g):
    x = randn(g, 4, 7)
    x[1, 3] = NAN
    x[2, :] = NAN
    return [x], [torch.nanquantile(x, 0.4, 1), torch.quantile(x, 0.4, 1)]


@case("msort_f32")
def _(g):
    x = randn(g, 5, 3)
    return [x], [torch.msort(x)]


@case("cummax_f32")
def _(g):
    x = randint(g, 0, 4, 4, 7).to(f32)
    x[1, 3] = NAN
    return [x], [*torch.cummax(x, 1), *torch.cummax(x, 0)]


@case("cummin_i64")
def _(g):
    x = randint(g, -3, 3, 4, 7)
    return [x], [*torch.cummin(x, 1)]


@case("logcumsumexp_f32")
def _(g):
    x = randn(g, 4, 7, scale=3.0)
    x[0, 0] = -INF
    return [x], [torch.logcumsumexp(x, 1), torch.logcumsumexp(x, 0)]


# ---- scatters, index_* ops, selections ----
@case("scatter_f32")
def _(g):
    x, src = randn(g, 4, 6), randn(g, 4, 6)
    idx = torch.tensor([[0, 4], [1, 5], [2, 3], [3, 0]])
    return [x, idx, src], [x.scatter(1, idx, src), x.scatter(1, idx, 2.5)]


@case("scatter_reduce_f32")
def _(g):
    x, src = randn(g, 4, 6), randn(g, 4, 6)
    idx = torch.tensor([[0, 0, 1], [5, 2, 2], [3, 3, 3], [1, 0, 1]])
    out = []
    for how in ["sum", "prod", "mean", "amax", "amin"]:
        out.append(x.scatter_reduce(1, idx, src, how))
        out.append(x.scatter_reduce(1, idx, src, how, include_self=False))
    return [x, idx, src], out


@case("scatter_reduce_i64")
def _(g):
    x, src = randint(g, -5, 5, 4, 6), randint(g, -5, 5, 4, 6)
    idx = torch.tensor([[0, 0, 1], [5, 2, 2], [3, 3, 3], [1, 0, 1]])
    return [x, idx, src], [x.scatter_reduce(1, idx, src, "mean", include_self=False)]


@case("index_add_f32")
def _(g):
    x, src = randn(g, 4, 6), randn(g, 4, 3)
    idx = torch.tensor([5, 0, 5])
    return [x, idx, src], [x.index_add(1, idx, src, alpha=2.0)]


@case("index_copy_f32")
def _(g):
    x, src = randn(g, 4, 6), randn(g, 2, 6)
    idx = torch.tensor([3, 1])
    return [x, idx, src], [x.index_copy(0, idx, src)]


@case("index_fill_f32")
def _(g):
    x = randn(g, 4, 6)
    idx = torch.tensor([1, 4])
    return [x, idx], [x.index_fill(1, idx, -2.0)]


@case("index_reduce_f32")
def _(g):
    x, src = randn(g, 4, 6), randn(g, 3, 6)
    idx = torch.tensor([1, 1, 3])
    out = []
    for how in ["prod", "mean", "amax", "amin"]:
        out.append(x.index_reduce(0, idx, src, how))
        out.append(x.index_reduce(0, idx, src, how, include_self=False))
    return [x, idx, src], out


@case("take_f32")
def _(g):
    x = randn(g, 4, 6)
    idx = torch.tensor([[0, -1], [7, 23]])
    return [x, idx], [torch.take(x, idx)]


@case("put_f32")
def _(g):
    x, src = randn(g, 4, 6), randn(g, 3)
    idx = torch.tensor([2, -3, 2])
    return [x, idx, src], [x.put(idx, src, accumulate=True), x.put(idx[:2], src[:2])]


@case("take_along_dim_f32")
def _(g):
    x = randn(g, 4, 6)
    idx = torch.tensor([[5, 0, 2]])
    return [x, idx], [torch.take_along_dim(x, idx, 1), torch.take_along_dim(x, idx)]


@case("masked_select_f32")
def _(g):
    x, m = randn(g, 4, 6), mask(g, 6)
    return [x, m], [torch.masked_select(x, m)]


@case("masked_scatter_f32")
def _(g):
    x, m, src = randn(g, 4, 6), mask(g, 4, 6), randn(g, 30)
    return [x, m, src], [x.masked_scatter(m, src)]


@case("nonzero_f32")
def _(g):
    x = randint(g, -1, 2, 3, 4, 5).to(f32)
    return [x], [torch.nonzero(x)]


@case("argwhere_f32")
def _(g):
    x = randint(g, 0, 2, 4, 6).to(f32)
    return [x], [torch.argwhere(x)]


@case("select_scatter_f32")
def _(g):
    x, src = randn(g, 4, 6), randn(g, 4)
    return [x, src], [torch.select_scatter(x, src, 1, -2)]


@case("slice_scatter_f32")
def _(g):
    x, src = randn(g, 4, 6), randn(g, 4, 3)
    return [x, src], [torch.slice_scatter(x, src, 1, 1, None, 2)]


@case("as_strided_scatter_f32")
def _(g):
    # The transposed input: stride's copy is contiguous (PyTorch's keeps a
    # dense input's strides), so this row is one where the two agree.
    x, src, row = randn(g, 4, 6), randn(g, 3, 2), randn(g, 2, 2)
    return [x, src, row], [
        torch.as_strided_scatter(x, src, (3, 2), (5, 2), 1),
        torch.as_strided_scatter(x.t().contiguous(), row, (2, 2), (4, 1)),
    ]


@case("diagonal_scatter_f32")
def _(g):
    x, src = randn(g, 4, 6), randn(g, 3)
    return [x, src], [torch.diagonal_scatter(x, src, -1)]


# ---- searching and counting ----
@case("searchsorted_f32")
def _(g):
    s = torch.sort(randint(g, 0, 6, 3, 8).to(f32), 1).values
    v = randint(g, -1, 7, 3, 5).to(f32)
    flat = s[0]
    return [s, v], [
        torch.searchsorted(s, v),
        torch.searchsorted(s, v, right=True),
        torch.searchsorted(flat, v, out_int32=True),
    ]


@case("bucketize_f32")
def _(g):
    b = torch.tensor([-1.0, 0.0, 0.5, 2.0])
    x = randn(g, 4, 6)
    x[0, 0] = 0.5
    return [x, b], [torch.bucketize(x, b), torch.bucketize(x, b, right=True)]


@case("bincount_i64")
def _(g):
    x, w = randint(g, 0, 7, 20), rand(g, 20, dtype=f64)
    return [x, w], [torch.bincount(x), torch.bincount(x, w, minlength=10)]


@case("histc_f32")
def _(g):
    x = randn(g, 50)
    return [x], [torch.histc(x, 7, -1, 1), torch.histc(x, 5)]


@case("unique_f32")
def _(g):
    x = randint(g, 0, 5, 4, 6).to(f32)
    values, inverse, counts = torch.unique(x, return_inverse=True, return_counts=True)
    r = randint(g, 0, 2, 6, 3)
    rows = torch.unique(r, dim=0, return_inverse=True, return_counts=True)
    return [x, r], [values, inverse, counts, *rows]


@case("unique_consecutive_i64")
def _(g):
    x = randint(g, 0, 3, 20)
    return [x], [*torch.unique_consecutive(x, return_inverse=True, return_counts=True)]


@case("isin_f32")
def _(g):
    x, t = randint(g, 0, 9, 4, 6).to(f32), randint(g, 0, 9, 5).to(f32)
    return [x, t], [torch.isin(x, t), torch.isin(x, t, invert=True)]


@case("sort_ties_nan_f32")
def _(g):
    x = randint(g, 0, 4, 5, 9).to(f32)
    x[1, 3] = NAN
    x[1, 7] = NAN
    x[3, 0] = INF
    x[3, 1] = -INF
    asc = torch.sort(x, stable=True, dim=1)
    desc = torch.sort(x, stable=True, dim=1, descending=True)
    dim0 = torch.sort(x, stable=True, dim=0)
    return [x], [*asc, *desc, *dim0]


@case("sort_long_rows_f32")  # rows long enough for the radix path, with ties
def _(g):
    x = randint(g, -6, 6, 3, 700).to(f32) * 0.5
    x[0, ::7] = NAN
    x[1, ::5] = -0.0
    x[1, 1::5] = 0.0
    x[2, ::11] = INF
    x[2, 1::11] = -INF
    x[2, 2::13] = NAN
    return [x], [
        *torch.sort(x, stable=True, dim=1),
        *torch.sort(x, stable=True, dim=1, descending=True),
        *torch.sort(x, dim=1),  # ties: std::sort's choice
        *torch.sort(x, dim=1, descending=True),
    ]


@case("sort_long_rows_f64_i64")
def _(g):
    x = randn(g, 2, 600, dtype=f64)
    x[:, ::3] = x[:, 1::3].clone()[:, :200]  # ties
    x[1, ::9] = NAN
    n = randint(g, -(2**40), 2**40, 2, 600)
    n[:, ::4] = -7
    distinct = randn(g, 2, 600, dtype=f64)  # one order, whichever sort
    return [x, n, distinct], [
        *torch.sort(x, stable=True, dim=1),
        *torch.sort(x, stable=True, dim=1, descending=True),
        *torch.sort(n, stable=True, dim=1),
        *torch.sort(n, stable=True, dim=1, descending=True),
        *torch.sort(distinct, dim=1),
        *torch.sort(distinct, dim=1, descending=True),
    ]


@case("sort_i64")
def _(g):
    x = randint(g, -4, 4, 6, 7)
    asc = torch.sort(x, stable=True, dim=1)
    return [x], [*asc, *torch.sort(x, stable=True, dim=0, descending=True)]


@case("argsort_f32")
def _(g):
    x = randint(g, 0, 3, 4, 8).to(f32)
    return [x], [
        torch.argsort(x, stable=True),
        torch.argsort(x, stable=True, dim=0, descending=True),
    ]


@case("topk_f32")
def _(g):
    x = randn(g, 4, 30)
    return [x], [*torch.topk(x, 5), *torch.topk(x, 3, largest=False), *torch.topk(x, 2, 0)]


@case("sort_unstable_ties_bool")  # past 16 elements std::sort's order of ties
def _(g):
    x = mask(g, 3, 40)
    return [x], [*torch.sort(x, dim=1), *torch.sort(x, dim=1, descending=True)]


@case("topk_ties_i64")  # nth_element's and partial_sort's orders of ties
def _(g):
    x = randint(g, 0, 4, 5, 70)
    return [x], [
        *torch.topk(x, 3, dim=1),
        *torch.topk(x, 1, dim=1, largest=False),
        *torch.topk(x, 10, dim=1, sorted=False),
    ]


@case("logspace_bf16")  # exponents in double from the rounded ends
def _(g):
    return [], [
        torch.logspace(-3.3, 4.7, 11, dtype=bf16),
        torch.logspace(0.0, 20.0, 50, 2.0, dtype=bf16),
        torch.logspace(1.1, 5.0, 1, dtype=bf16),
        torch.logspace(-1.5, 2.25, 7, dtype=f32),
    ]


def zeros_ones_nan(g):
    x = randint(g, 0, 3, 4, 5).to(f32)
    x[0] = 1.0
    x[1, 2] = NAN
    return x


@case("all_f32")
def _(g):
    x, e = zeros_ones_nan(g), torch.zeros(3, 0)
    return [x, e], [torch.all(x), torch.all(x, 1), torch.all(e, 1)]


@case("any_f32")
def _(g):
    x, e = zeros_ones_nan(g), torch.zeros(3, 0)
    return [x, e], [torch.any(x), torch.any(x, 0, keepdim=True), torch.any(e, 1)]


for _name, _fn in [("isnan", torch.isnan), ("isinf", torch.isinf), ("isfinite", torch.isfinite)]:

    def _register(name=_name, fn=_fn):
        @case(f"{name}_f32")
        def _(g):
            x = with_specials(randn(g, 8), UNARY_SPECIALS)
            return [x], [fn(x)]

        @case(f"{name}_i64")
        def _(g):
            x = randint(g, -5, 5, 7)
            return [x], [fn(x)]

    _register()


@case("flip_f32")
def _(g):
    x = randn(g, 3, 4, 5)
    return [x], [torch.flip(x, [0, 2]), torch.flip(x, [1])]


@case("roll_f32")
def _(g):
    x = randn(g, 3, 4, 5)
    return [x], [torch.roll(x, 2, 1), torch.roll(x, (-7, 3), (2, 0)), torch.roll(x, 4)]


# ---- elementwise composites (src/ops/elementwise_composites.cpp) ----
@case("logical_fmax_isclose_f32")
def _(g):
    a = with_specials(randn(g, 9), [0.0, 0.0, NAN, NAN, INF, 1.0])
    b = with_specials(randn(g, 9), [0.0, NAN, 1.0, NAN, INF, 1.0 + 1e-6])
    n = randint(g, -2, 3, 15)
    return [a, b, n], [
        torch.logical_and(a, b),
        torch.logical_or(a, n),
        torch.logical_xor(n, b),
        torch.logical_not(n),
        torch.fmax(a, b),
        torch.fmin(a, b),
        torch.isclose(a, b),
        torch.isclose(a, b, rtol=0.5, atol=0.1, equal_nan=True),
        torch.isclose(n, n.flip(0), rtol=0.0, atol=1.0),
    ]


@case("round_decimals_f32")
def _(g):
    x = randn(g, 20, scale=1000.0)
    return [x], [
        torch.round(x, decimals=2),
        torch.round(x, decimals=-2),
        torch.round(x, decimals=0),
    ]


@case("addcmul_addcdiv_f32")
def _(g):
    x, a, b = randn(g, 3, 4), randn(g, 4), rand(g, 3, 1, lo=0.5, hi=2.0)
    return [x, a, b], [torch.addcmul(x, a, b, value=-0.5), torch.addcdiv(x, a, b, value=2.0)]


@case("linspace_logspace")
def _(g):
    del g
    return [], [
        torch.linspace(-1.0, 2.0, 7),
        torch.linspace(3.0, -3.0, 10, dtype=f64),
        torch.linspace(0, 10, 4, dtype=i64),
        torch.linspace(1.0, 1.0, 1),
        torch.logspace(-1.0, 2.0, 5),
        torch.logspace(0.0, 3.0, 4, base=2.0, dtype=f64),
    ]


# ---- shape ops (src/ops/shape_ops.cpp) ----
# A case per op: its variants' results joined flat, then the gradients of the
# inputs at `wrt` (the last input is the upstream gradient).
def joined(parts):
    return torch.cat([p.reshape(-1) for p in parts])


def shape_case(name, make_inputs, fn, wrt=(0,)):
    @case(f"{name}_f32")
    def _(g):
        return value_and_grad(g, fn, make_inputs(g), wrt)


def scalar_vector_matrix(g):
    return [randn(g, 1).reshape(()), randn(g, 3), randn(g, 2, 3)]


shape_case(
    "atleast_1d",
    lambda g: scalar_vector_matrix(g)[:2],
    lambda s, v: joined([torch.atleast_1d(s), torch.atleast_1d(v)]),
    (0, 1),
)
shape_case(
    "atleast_2d",
    lambda g: scalar_vector_matrix(g)[:2],
    lambda s, v: joined([torch.atleast_2d(s), torch.atleast_2d(v)]),
    (0, 1),
)
shape_case(
    "atleast_3d",
    lambda g: scalar_vector_matrix(g)[1:],
    lambda v, m: joined([torch.atleast_3d(v), torch.atleast_3d(m)]),
    (0, 1),
)
shape_case("broadcast_to", lambda g: [randn(g, 3, 1)], lambda x: torch.broadcast_to(x, (2, 3, 4)))
shape_case(
    "broadcast_tensors",
    lambda g: [randn(g, 3, 1), randn(g, 4)],
    lambda a, b: torch.stack(torch.broadcast_tensors(a, b)),
    (0, 1),
)
shape_case(
    "hstack",
    scalar_vector_matrix,
    lambda s, v, m: joined([torch.hstack([v, v, s]), torch.hstack([m, m])]),
    (0, 1, 2),
)
shape_case(
    "vstack", scalar_vector_matrix, lambda s, v, m: torch.vstack([v, m, s.expand(3)]), (0, 1, 2)
)
shape_case(
    "dstack",
    lambda g: scalar_vector_matrix(g)[1:],
    lambda v, m: joined([torch.dstack([m, m]), torch.dstack([v, v])]),
    (0, 1),
)
shape_case(
    "column_stack",
    scalar_vector_matrix,
    lambda s, v, m: torch.column_stack([v, m.t(), s.expand(3)]),
    (0, 1, 2),
)


def split_input(g):
    return [randn(g, 7, 4, 6)]


shape_case(
    "tensor_split",
    split_input,
    lambda x: joined([*torch.tensor_split(x, 3), *torch.tensor_split(x, [1, 5, -1, 9], dim=-1)]),
)
shape_case("split_with_sizes", split_input, lambda x: joined(torch.split_with_sizes(x, [3, 0, 4])))
shape_case("hsplit", split_input, lambda x: joined([*torch.hsplit(x, 2), *torch.hsplit(x, [1, 3])]))
shape_case("vsplit", split_input, lambda x: joined(torch.vsplit(x, [2])))
shape_case("dsplit", split_input, lambda x: joined(torch.dsplit(x, 3)))


def dim_move_input(g):
    return [randn(g, 2, 3, 4, 5)]


shape_case(
    "movedim",
    dim_move_input,
    lambda x: joined([torch.movedim(x, [0, 3], [2, 0]), torch.movedim(x, -1, 1)]),
)
shape_case(
    "rot90",
    dim_move_input,
    lambda x: joined(
        [
            torch.rot90(x, 1, [1, 2]),
            torch.rot90(x, -1),
            torch.rot90(x, 2, [3, 0]),
            torch.rot90(x, 4),
        ]
    ),
)
shape_case("fliplr", dim_move_input, torch.fliplr)
shape_case("flipud", dim_move_input, torch.flipud)
shape_case("ravel", dim_move_input, lambda x: torch.ravel(x.transpose(0, 2)))
shape_case("unflatten", dim_move_input, lambda x: x.unflatten(2, (2, -1)))
shape_case("sum_to_size", dim_move_input, lambda x: x.sum_to_size(3, 1, 5))
shape_case(
    "diag",
    lambda g: [with_specials(randn(g, 3), [INF]), randn(g, 3, 5)],
    lambda v, m: joined([torch.diag(v, 1), torch.diag(v, -2), torch.diag(m, 1)]),
    (0, 1),
)
shape_case(
    "diag_embed",
    lambda g: [randn(g, 2, 3)],
    lambda b: joined(
        [torch.diag_embed(b), torch.diag_embed(b, 1, 0, 2), torch.diag_embed(b, -1, 2, 0)]
    ),
)
shape_case("diagflat", lambda g: [randn(g, 3, 5)], lambda m: torch.diagflat(m, -1))
shape_case(
    "block_diag",
    lambda g: [randn(g, 3, 5), with_specials(randn(g, 3), [INF]), randn(g, 2, 3)],
    lambda m, v, b: torch.block_diag(m, v, b[0, 0], b),
    (0, 1, 2),
)


def grid_inputs(g):
    return [randn(g, 3), randn(g, 4), randn(g, 2)]


shape_case(
    "meshgrid",
    grid_inputs,
    lambda a, b, c: joined(
        [*torch.meshgrid(a, b, c, indexing="ij"), *torch.meshgrid(a, b, c, indexing="xy")]
    ),
    (0, 1, 2),
)
shape_case("cartesian_prod", lambda g: grid_inputs(g)[:2], torch.cartesian_prod, (0, 1))
shape_case(
    "combinations",
    grid_inputs,
    lambda a, b, c: joined(
        [
            torch.combinations(b),
            torch.combinations(a, 3, with_replacement=True),
            torch.combinations(c, 3),
        ]
    ),
    (0, 1, 2),
)
shape_case(
    "repeat", lambda g: [randn(g, 2, 3)], lambda x: joined([x.repeat(2, 1, 3), x.repeat(1, 0)])
)
shape_case(
    "tile",
    lambda g: [randn(g, 2, 3)],
    lambda x: joined([torch.tile(x, [2]), torch.tile(x, [2, 1, 2])]),
)
shape_case(
    "repeat_interleave",
    lambda g: [randn(g, 2, 3), torch.tensor([1, 0, 2])],
    lambda x, counts: joined(
        [
            torch.repeat_interleave(x, 2),
            torch.repeat_interleave(x, 3, 1),
            torch.repeat_interleave(x, counts, 1),
        ]
    ),
)


@case("repeat_interleave_counts_i64")
def _(g):
    del g
    counts = torch.tensor([1, 0, 2])
    return [counts], [torch.repeat_interleave(counts)]


@case("products_f32")
def _(g):
    v, w, m, t = randn(g, 4), randn(g, 4), randn(g, 3, 4), randn(g, 2, 3, 4)
    return [v, w, m, t], [
        torch.dot(v, w),
        torch.inner(m, t),
        torch.mv(m, v),
        torch.addmv(m[:, 0], m, v, beta=0.5, alpha=2.0),
        torch.addr(m, m[:, 1], v, alpha=-1.0),
        torch.kron(m, t),
        torch.tensordot(t, m, ([1, 2], [0, 1])),
        torch.tensordot(m, t, 0),
    ]


@case("einsum_f32")
def _(g):
    a, b, c, d = randn(g, 2, 3, 4), randn(g, 4, 5), randn(g, 3, 3), randn(g, 1, 3, 5)
    return [a, b, c, d], [
        torch.einsum("bij,jk->bik", a, b),
        torch.einsum("ii->i", c),
        torch.einsum("ii", c),
        torch.einsum("ij->", c),
        torch.einsum("...j,jk", a, b),
        torch.einsum("bij,jk,bik->bk", a, b, d.expand(2, 3, 5)),
        torch.einsum("b i j , b j k -> b i k", a.transpose(1, 2), d),
        torch.einsum("...ij,...jk->...ik", c, d),
        torch.einsum("ij,kl->ijkl", c, b),
        torch.einsum("ijk->kji", a),
        torch.einsum("Ab,bC", c, b[:3]),
    ]


@case("more_products_f32")
def _(g):
    x, b1, b2, p, q = (
        randn(g, 3, 5),
        randn(g, 4, 3, 2),
        randn(g, 4, 2, 5),
        randn(g, 2, 4, 3),
        randn(g, 5, 3),
    )
    return [x, b1, b2, p, q], [
        torch.addbmm(x, b1, b2, beta=0.5, alpha=-1.0),
        torch.chain_matmul(x[:, :2].t(), x, q),
        torch.cdist(p, q),
        torch.cdist(p, q, p=1.0),
        torch.cdist(p, q, p=float("inf")),
        torch.cdist(p, q, p=0.5),
        torch.dist(p, q[:4], 3.0),
    ]


@case("numeric_composites_f32")
def _(g):
    x, y, w = randn(g, 3, 5), randn(g, 2, 6), rand(g, 5, lo=0.5, hi=2.0)
    s, flat = torch.cumsum(rand(g, 6, lo=0.5, hi=1.5), 0), randint(g, -20, 60, 2, 3)
    counts = randint(g, 1, 4, 5)
    return [x, y, w, s, flat, counts], [
        torch.trace(x),
        torch.diff(x),
        torch.diff(x, 2, 0, prepend=y[:, :5], append=x[:1]),
        torch.diff(x > 0, dim=0),
        torch.trapezoid(y, s),
        torch.trapezoid(y, dx=0.5, dim=0),
        torch.cumulative_trapezoid(y, s),
        torch.cumulative_trapezoid(y, dx=2.0),
        torch.cov(x),
        torch.cov(x, correction=0, fweights=counts, aweights=w),
        torch.corrcoef(x),
        torch.renorm(x, 2, 0, 2.0),
        torch.renorm(x, 1, 1, 1.0),
        *torch.gradient(x),
        *torch.gradient(x, spacing=[2.0, 0.5], edge_order=2),
        *torch.gradient(y, spacing=[s], dim=1, edge_order=2),
        torch.tril_indices(4, 6, 1),
        torch.triu_indices(5, 3, -1),
        *torch.unravel_index(flat, (3, 4, 5)),
    ]


# ---- products, elementwise and numeric compositions (src/ops/linalg.cpp,
# einsum.cpp, elementwise_composites.cpp, numeric_composites.cpp): a case per op ----
@case("histogram_f32")
def _(g):
    x, w = randn(g, 40), rand(g, 40)
    edges = torch.tensor([-2.0, -0.5, 0.0, 0.3, 2.0])
    return [x, w, edges], [
        *torch.histogram(x, 7),
        *torch.histogram(x, 4, range=(-1.0, 1.0), weight=w, density=True),
        *torch.histogram(x, edges, density=True),
    ]


@case("histogramdd_f32")
def _(g):
    p, w = randn(g, 30, 2), rand(g, 30)
    edges = torch.tensor([-2.0, -0.5, 0.0, 0.3, 2.0])
    counted = torch.histogramdd(p, [3, 4])
    return [p, w, edges], [
        counted.hist,
        *counted.bin_edges,
        torch.histogramdd(p, [edges, edges[1:]], weight=w, density=True).hist,
        torch.histogramdd(p, [2, 3], range=[-1.0, 1.0, 0.0, 2.0]).hist,
    ]


# A differentiable op's value and its inputs' gradients, in float64.
def value_and_grad_case(name, fn, shapes, wrt, make=None):
    @case(name)
    def _(g):
        inputs = make(g) if make else [randn(g, *s, dtype=f64) for s in shapes]
        return value_and_grad(g, fn, inputs, wrt)


value_and_grad_case("dot_f64", torch.dot, [(5,), (5,)], (0, 1))
value_and_grad_case("inner_f64", torch.inner, [(2, 4), (3, 4)], (0, 1))
value_and_grad_case("mv_f64", torch.mv, [(3, 4), (4,)], (0, 1))
value_and_grad_case(
    "addmv_f64",
    lambda a, m, v: torch.addmv(a, m, v, beta=0.5, alpha=2.0),
    [(3,), (3, 4), (4,)],
    (0, 1, 2),
)
value_and_grad_case(
    "addr_f64",
    lambda a, v1, v2: torch.addr(a, v1, v2, beta=2.0, alpha=-1.0),
    [(3, 4), (3,), (4,)],
    (0, 1, 2),
)
value_and_grad_case(
    "addbmm_f64",
    lambda a, b1, b2: torch.addbmm(a, b1, b2, beta=0.5, alpha=2.0),
    [(3, 4), (2, 3, 5), (2, 5, 4)],
    (0, 1, 2),
)
value_and_grad_case(
    "tensordot_f64",
    lambda a, b: torch.tensordot(a, b, ([1, 2], [1, 0])),
    [(2, 3, 4), (4, 3)],
    (0, 1),
)
value_and_grad_case("chain_matmul_f64", torch.chain_matmul, [(2, 3), (3, 4), (4, 2)], (0, 1, 2))
value_and_grad_case("kron_f64", torch.kron, [(2, 3), (3, 2)], (0, 1))
value_and_grad_case("cdist_f64", torch.cdist, [(2, 3, 4), (5, 4)], (0, 1))
value_and_grad_case(
    "cdist_p1_f64", lambda a, b: torch.cdist(a, b, p=1.0), [(2, 3, 4), (5, 4)], (0, 1)
)
value_and_grad_case("dist_f64", lambda a, b: torch.dist(a, b, 3.0), [(3, 4), (4,)], (0, 1))
value_and_grad_case(
    "einsum_grad_f64",
    lambda a, b: torch.einsum("bij,jk->bik", a, b),
    [(2, 3, 4), (4, 5)],
    (0, 1),
)
value_and_grad_case("fmax_f64", torch.fmax, [(3, 4), (3, 4)], (0, 1))
value_and_grad_case("fmin_f64", torch.fmin, [(3, 4), (3, 4)], (0, 1))
value_and_grad_case("trace_f64", torch.trace, [(3, 4)], (0,))
value_and_grad_case(
    "diff_f64", lambda x, p: torch.diff(x, 2, 1, prepend=p), [(3, 5), (3, 1)], (0, 1)
)
value_and_grad_case(
    "trapezoid_f64",
    torch.trapezoid,
    None,
    (0, 1),
    lambda g: [randn(g, 2, 5, dtype=f64), torch.cumsum(rand(g, 5, lo=0.5, hi=1.5, dtype=f64), 0)],
)
value_and_grad_case(
    "cumulative_trapezoid_f64",
    lambda y, x: torch.cumulative_trapezoid(y, x, dim=1),
    [(2, 5), (2, 5)],
    (0, 1),
)
value_and_grad_case(
    "cov_f64",
    lambda x, w: torch.cov(x, correction=1, aweights=w),
    None,
    (0, 1),
    lambda g: [randn(g, 3, 5, dtype=f64), rand(g, 5, lo=0.5, hi=2.0, dtype=f64)],
)
value_and_grad_case("corrcoef_f64", torch.corrcoef, [(3, 5)], (0,))
value_and_grad_case("renorm_f64", lambda x: torch.renorm(x, 2, 0, 2.0), [(3, 4)], (0,))
value_and_grad_case(
    "gradient_f64",
    lambda x: torch.stack(torch.gradient(x, spacing=[0.5, 2.0], dim=[0, 1], edge_order=2)),
    [(4, 5)],
    (0,),
)
# sgn times x: PyTorch returns the zero gradient of sgn alone as a ZeroTensor.
value_and_grad_case("sgn_f64", lambda x: torch.sgn(x) * x, [(3, 4)], (0,))
value_and_grad_case("resolve_neg_f64", lambda x: torch.resolve_neg(x * 2.0), [(3, 4)], (0,))


@case("logical_and_i64")
def _(g):
    a, b = randint(g, -2, 3, 12), randint(g, -2, 3, 12)
    return [a, b], [torch.logical_and(a, b)]


@case("logical_or_i64")
def _(g):
    a, b = randint(g, -2, 3, 12), randint(g, -2, 3, 12)
    return [a, b], [torch.logical_or(a, b)]


@case("logical_xor_i64")
def _(g):
    a, b = randint(g, -2, 3, 12), randint(g, -2, 3, 12)
    return [a, b], [torch.logical_xor(a, b)]


@case("logical_not_f32")
def _(g):
    x = with_specials(randn(g, 6), [0.0, -0.0, NAN, INF])
    return [x], [torch.logical_not(x)]


@case("isclose_f64")
def _(g):
    a = with_specials(randn(g, 10, dtype=f64), [NAN, INF, 1.0])
    b = a + randn(g, 13, dtype=f64, scale=1e-4)
    return [a, b], [torch.isclose(a, b), torch.isclose(a, b, rtol=1e-3, atol=1e-4)]


@case("unravel_index_i64")
def _(g):
    flat = randint(g, -20, 60, 2, 3)
    return [flat], [*torch.unravel_index(flat, (3, 4, 5))]


@case("signal_windows_f32")
def _(g):
    windows = torch.signal.windows
    return [torch.zeros(1)], [
        windows.bartlett(7),
        windows.blackman(8, sym=False),
        windows.cosine(6),
        windows.exponential(7, center=2.0, tau=1.5, sym=False),
        windows.gaussian(9, std=1.7),
        windows.general_cosine(8, a=[0.5, 0.3, 0.2]),
        windows.general_hamming(6, alpha=0.6, sym=False),
        windows.hamming(5),
        windows.hann(10, sym=False),
        windows.kaiser(9, beta=5.0),
        windows.nuttall(7, dtype=torch.float64),
    ]


@case("outer_f32")
def _(g):
    a, b = randn(g, 4), randn(g, 6)
    return [a, b], [torch.outer(a, b)]


@case("addmm_f32")
def _(g):
    m, m1, m2 = randn(g, 4, 6), randn(g, 4, 3), randn(g, 3, 6)
    nan_input = torch.full((4, 6), NAN)
    return [m, m1, m2, nan_input], [
        torch.addmm(m, m1, m2, beta=0.5, alpha=2.0),
        torch.addmm(nan_input, m1, m2, beta=0.0),
        torch.addmm(m[0], m1, m2),
    ]


@case("baddbmm_f32")
def _(g):
    bi, b1, b2 = randn(g, 2, 4, 6), randn(g, 2, 4, 3), randn(g, 2, 3, 6)
    return [bi, b1, b2], [torch.baddbmm(bi, b1, b2), torch.baddbmm(bi, b1, b2, alpha=-1.5)]


@case("argmax_all_nan_f32")
def _(g):
    x = torch.tensor([[1.0, 3.0, NAN, 1.0], [2.0, NAN, 9.0, 0.0]])
    return [x], [torch.argmax(x), torch.argmin(x), torch.argmax(x, 1)]


@case("argmax_all_i64")
def _(g):
    x = randint(g, 0, 5, 4, 6)
    return [x], [torch.argmax(x), torch.argmin(x), torch.argmax(x, 0)]


@case("logsumexp_neginf_row_f32")
def _(g):
    x = randn(g, 4, 6)
    x[1] = -INF
    x[2, 3] = -INF
    x[3, 0] = INF
    return [x], [torch.logsumexp(x, 1), torch.logsumexp(x, (0, 1))]


@case("logsumexp_large_f32")
def _(g):
    x = randn(g, 3, 5) * 10.0 + torch.tensor([[1e4], [-1e4], [80.0]])
    return [x], [torch.logsumexp(x, 1, keepdim=True)]


@case("logsumexp_d1_f64")
def _(g):
    x = _reduce_input(g, f64)
    return [x], [torch.logsumexp(x, 1)]


for _p in (1, 2, INF, 3):

    def _register(p=_p):
        tag = "inf" if p == INF else str(p)

        @case(f"norm_p{tag}_all_f32")
        def _(g):
            x = _reduce_input(g)
            return [x], [torch.norm(x, p)]

        @case(f"norm_p{tag}_d1_f32")
        def _(g):
            x = _reduce_input(g)
            return [x], [torch.norm(x, p, dim=1)]

        @case(f"norm_p{tag}_d02_keep_f32")
        def _(g):
            x = _reduce_input(g)
            return [x], [torch.norm(x, p, dim=(0, 2), keepdim=True)]

    _register()


@case("norm_p2_d1_f64")
def _(g):
    x = _reduce_input(g, f64)
    return [x], [torch.norm(x, 2, dim=1)]


@case("norm_p0_d1_f32")
def _(g):
    x = _reduce_input(g) * mask(g, 3, 4, 5)
    return [x], [torch.norm(x, 0, dim=1)]


# ---- matmul ----
def _mm_case(name, sa, sb, dtype=f32, ta=False, tb=False, fn=torch.matmul):
    @case(name)
    def _(g):
        a = randn(g, *sa, dtype=dtype)
        b = randn(g, *sb, dtype=dtype)
        aa = a.transpose(-1, -2) if ta else a
        bb = b.transpose(-1, -2) if tb else b
        return [a, b], [fn(aa, bb)]


_mm_case("matmul_1d_1d_f32", (7,), (7,))
_mm_case("matmul_2d_1d_f32", (3, 7), (7,))
_mm_case("matmul_1d_2d_f32", (7,), (7, 4))
_mm_case("matmul_2d_2d_f32", (3, 7), (7, 4))
_mm_case("matmul_3d_1d_f32", (2, 3, 4), (4,))
_mm_case("matmul_1d_3d_f32", (4,), (2, 4, 5))
_mm_case("matmul_bcast_f32", (2, 1, 3, 4), (5, 4, 2))
_mm_case("matmul_3d_2d_f32", (4, 16, 128), (128, 65))
_mm_case("matmul_2d_3d_f32", (16, 24), (3, 24, 9))
_mm_case("matmul_ta_f32", (7, 3), (7, 4), ta=True)
_mm_case("matmul_tb_f32", (3, 7), (4, 7), tb=True)
_mm_case("matmul_tab_f32", (7, 3), (4, 7), ta=True, tb=True)
_mm_case("matmul_batched_ta_f32", (2, 9, 5), (2, 9, 6), ta=True)
_mm_case("matmul_1x1_f32", (1, 1), (1, 1))
_mm_case("mm_f32", (5, 33), (33, 17), fn=torch.mm)
_mm_case("mm_tb_f32", (5, 33), (17, 33), tb=True, fn=torch.mm)
_mm_case("bmm_f32", (3, 5, 8), (3, 8, 6), fn=torch.bmm)
_mm_case("bmm_ta_f32", (3, 8, 5), (3, 8, 6), ta=True, fn=torch.bmm)
_mm_case("matmul_2d_2d_f64", (6, 40), (40, 7), dtype=f64)
_mm_case("matmul_bcast_f64", (2, 1, 3, 4), (5, 4, 2), dtype=f64)
_mm_case("matmul_1d_1d_f64", (30,), (30,), dtype=f64)
_mm_case("bmm_tb_f64", (2, 4, 8), (2, 3, 8), tb=True, dtype=f64, fn=torch.bmm)


@case("matmul_permuted_batch_f32")
def _(g):
    a, b = randn(g, 4, 3, 5), randn(g, 3, 5, 2)
    return [a, b], [a.permute(1, 0, 2) @ b]


@case("matmul_expanded_f32")
def _(g):
    a, b = randn(g, 1, 4, 6), randn(g, 3, 6, 2)
    return [a, b], [a.expand(3, 4, 6) @ b]


@case("matmul_empty_k_f32")  # inputs built in C++: zeros(3, 0) @ zeros(0, 4)
def _(g):
    return [], [torch.zeros(3, 0) @ torch.zeros(0, 4)]


@case("matmul_sliced_f32")
def _(g):
    a, b = randn(g, 6, 10), randn(g, 10, 8)
    return [a, b], [a[::2, 1:9] @ b[1:9, ::3]]


# ---- softmax family ----
def _softmax_input(g):
    return randn(g, 3, 4, 5, scale=3.0)


for _d in (0, 1, 2, -1):

    def _register(d=_d):
        tag = f"d{d}" if d >= 0 else f"dm{-d}"

        @case(f"softmax_{tag}_f32")
        def _(g):
            x = _softmax_input(g)
            return [x], [torch.softmax(x, d)]

        @case(f"log_softmax_{tag}_f32")
        def _(g):
            x = _softmax_input(g)
            return [x], [torch.log_softmax(x, d)]

    _register()


@case("softmax_large_f32")
def _(g):
    x = randn(g, 3, 4, 5) * 1e4
    return [x], [
        torch.softmax(x, 2),
        torch.softmax(x, 0),
        torch.log_softmax(x, 2),
        torch.log_softmax(x, 1),
    ]


@case("softmax_neginf_f32")
def _(g):
    x = randn(g, 3, 4, 5, scale=2.0)
    x[0, 1, :] = -INF  # a whole row along dim 2
    x[1, :, 2] = -INF  # a whole column along dim 1
    x[2, 0, 0] = -INF
    x[2, 3, 4] = -INF
    return [x], [
        torch.softmax(x, 2),
        torch.softmax(x, 1),
        torch.softmax(x, 0),
        torch.log_softmax(x, 2),
        torch.log_softmax(x, 1),
        torch.log_softmax(x, 0),
    ]


@case("softmax_strided_f32")
def _(g):
    x = randn(g, 5, 6)
    return [x], [torch.softmax(x.t(), 1), torch.log_softmax(x.t(), 0)]


@case("softmax_size1_dim_f32")
def _(g):
    x = randn(g, 3, 1, 4)
    return [x], [torch.softmax(x, 1), torch.log_softmax(x, 1)]


@case("softmax_posinf_nan_f32")
def _(g):
    x = randn(g, 3, 5)
    x[0, 2] = INF
    x[1, 4] = NAN
    return [x], [torch.softmax(x, 1), torch.log_softmax(x, 1)]


@case("softmax_16bit")
def _(g):
    x = randn(g, 3, 7, dtype=bf16, scale=3.0)
    return [x], [torch.softmax(x, 1), torch.log_softmax(x, 0)]


@case("softmax_d1_f64")
def _(g):
    x = randn(g, 3, 4, 5, dtype=f64, scale=3.0)
    return [x], [torch.softmax(x, 1), torch.log_softmax(x, 1)]


# ---- indexing and joining ----
@case("index_select_d0_f32")  # an embedding-style row gather, repeated ids
def _(g):
    w, ids = randn(g, 10, 6), torch.tensor([3, 0, 9, 3, 3, 7, 1])
    return [w, ids], [w.index_select(0, ids)]


@case("index_select_d1_f32")
def _(g):
    x, ids = randn(g, 3, 8, 2), torch.tensor([7, 0, 7, 2])
    return [x, ids], [x.index_select(1, ids)]


@case("index_select_dm1_i32_index")
def _(g):
    x, ids = randn(g, 4, 5), torch.tensor([4, 4, 0], dtype=i32)
    return [x, ids], [x.index_select(-1, ids)]


@case("index_select_0d_index_f32")
def _(g):
    x, ids = randn(g, 4, 5), torch.tensor(2)
    return [x, ids], [x.index_select(1, ids)]


@case("indexing_strided_src_f32")  # sources seen through a transpose
def _(g):
    x, ids, idx = randn(g, 5, 4), torch.tensor([4, 0, 0]), randint(g, 0, 4, 2, 5)
    return [x, ids, idx], [x.t().index_select(1, ids), x.t().gather(0, idx)]


@case("scatter_add_strided_self_f32")
def _(g):
    x, idx, src = randn(g, 5, 4), randint(g, 0, 4, 3, 5), randn(g, 3, 5)
    base = x.clone()
    base.t().scatter_add_(0, idx, src)
    return [x, idx, src], [base]


@case("index_select_d0_i64")
def _(g):
    x, ids = randint(g, -50, 50, 6, 3), torch.tensor([5, 1, 1])
    return [x, ids], [x.index_select(0, ids)]


@case("embedding_f32")
def _(g):
    w, ids = randn(g, 11, 4), randint(g, 0, 11, 3, 5)
    return [w, ids], [F.embedding(ids, w)]


@case("gather_d1_f32")
def _(g):
    x, idx = randn(g, 4, 6), randint(g, 0, 6, 4, 3)
    return [x, idx], [torch.gather(x, 1, idx)]


@case("gather_d0_f32")
def _(g):
    x, idx = randn(g, 5, 3), randint(g, 0, 5, 7, 2)
    return [x, idx], [torch.gather(x, 0, idx)]


@case("gather_3d_dm1_f32")
def _(g):
    x, idx = randn(g, 2, 3, 4), randint(g, 0, 4, 2, 2, 1)
    return [x, idx], [torch.gather(x, -1, idx)]


@case("scatter_add_d0_f32")
def _(g):
    x, idx, src = randn(g, 4, 3), randint(g, 0, 4, 6, 3), randn(g, 6, 3)
    return [x, idx, src], [x.scatter_add(0, idx, src)]


@case("scatter_add_d1_f32")
def _(g):
    x, idx, src = randn(g, 3, 5), randint(g, 0, 5, 3, 4), randn(g, 3, 6)
    return [x, idx, src], [x.scatter_add(1, idx, src)]


@case("scatter_add_d1_i64")
def _(g):
    x, idx, src = randint(g, 0, 9, 3, 5), randint(g, 0, 5, 3, 8), randint(g, 0, 9, 3, 8)
    return [x, idx, src], [x.scatter_add(1, idx, src)]


@case("cat_d0_f32")
def _(g):
    a, b, c = randn(g, 2, 3), randn(g, 4, 3), randn(g, 1, 3)
    return [a, b, c], [torch.cat([a, b, c], 0)]


@case("cat_d1_f32")
def _(g):
    a, b = randn(g, 2, 3, 4), randn(g, 2, 1, 4)
    return [a, b], [torch.cat([a, b], 1)]


@case("cat_dm1_f32")
def _(g):
    a, b = randn(g, 2, 3, 4), randn(g, 2, 3, 2)
    return [a, b], [torch.cat([a, b], -1)]


@case("cat_strided_f32")
def _(g):
    a, b = randn(g, 4, 2), randn(g, 3, 4)
    return [a, b], [torch.cat([a.t(), b], 0), torch.cat([b[:, ::2], b[:, 1:2]], 1)]


@case("stack_0d_f32")
def _(g):
    a, b = torch.tensor(1.5), torch.tensor(-2.0)
    return [a, b], [torch.stack([a, b]), torch.stack([a, b, a], -1)]


@case("cat_promote_f32_f64")
def _(g):
    a, b = randn(g, 2, 3), randn(g, 1, 3, dtype=f64)
    return [a, b], [torch.cat([a, b])]


@case("cat_promote_i64_f32")
def _(g):
    a, b = randint(g, -5, 5, 2, 2), randn(g, 2, 3)
    return [a, b], [torch.cat([a, b], 1)]


@case("cat_promote_bool_i32")
def _(g):
    a, b = mask(g, 3), randint(g, -5, 5, 4, dtype=i32)
    return [a, b], [torch.cat([a, b])]


for _d in (0, 1, 2, -1):

    def _register(d=_d):
        tag = f"d{d}" if d >= 0 else f"dm{-d}"

        @case(f"stack_{tag}_f32")
        def _(g):
            a, b, c = randn(g, 3, 4), randn(g, 3, 4), randn(g, 3, 4)
            return [a, b, c], [torch.stack([a, b, c], d)]

    _register()


# ---- views and copies ----
@case("permute_contiguous_f32")
def _(g):
    x = randn(g, 2, 3, 4)
    return [x], [x.permute(2, 0, 1).contiguous()]


@case("slice_step_f32")
def _(g):
    x = randn(g, 6, 7)
    return [x], [x[1::2, ::3].contiguous(), x.narrow(1, 2, 4).contiguous()]


@case("expand_contiguous_f32")
def _(g):
    x = randn(g, 3, 1)
    return [x], [x.expand(2, 3, 4).contiguous()]


@case("diagonal_f32")
def _(g):
    x = randn(g, 4, 5)
    return [x], [x.diagonal().contiguous(), x.diagonal(1).contiguous(), x.diagonal(-2).contiguous()]


@case("transpose_reshape_f32")
def _(g):
    x = randn(g, 2, 3, 4)
    return [x], [x.transpose(0, 2).reshape(4, 6), x.flatten(1)]


# ---- factories ----
@case("arange_f32")  # the length is ceil((end - start) / step), computed in double
def _(g):
    return [], [
        torch.arange(1.0, 1.3, 0.1, dtype=f32),
        torch.arange(-1.0, 1.0, 0.1, dtype=f32),
        torch.arange(0.5, 3.0, dtype=f32),
    ]


@case("arange_f64")
def _(g):
    return [], [torch.arange(1.0, 1.3, 0.1, dtype=f64), torch.arange(0.0, -1.0, -0.3, dtype=f64)]


@case("arange_i64")
def _(g):
    return [], [torch.arange(0, 10, 3), torch.arange(7), torch.arange(5, -5, -3)]


@case("eye_full_f32")
def _(g):
    return [], [
        torch.eye(3),
        torch.eye(3, 5),
        torch.eye(4, 2),
        torch.full((2, 3), 1.0 / 3.0),
        torch.full((2,), 1.0 / 3.0, dtype=f64),
        torch.full((3,), 7),
    ]


# ---- a Scalar on the left ----
@case("rsub_scalar_f32")
def _(g):
    x = randn(g, 3, 4)
    return [x], [2.0 - x, 1.5 / x, 3 * x, 0.5 + x]


@case("rdiv_scalar_i64")
def _(g):
    x = randint(g, 1, 9, 6)
    return [x], [1 / x, 10 - x, 2.5 * x]


# ---- dtype conversions (exact, bit for bit) ----
def _conversion_input(g):
    specials = bits_f32(
        0x3F808000,  # 1 + 2^-8: a tie in bf16, rounds to even (1.0)
        0x3F818000,  # 1 + 3*2^-8: a tie, rounds up to even
        0x3F808001,  # just above a tie
        0x3F807FFF,  # just below a tie
        0x3F801000,  # 1 + 2^-11: a tie in f16
        0x3F803000,  # 1 + 3*2^-11: a tie in f16, rounds up
        0x00000001,  # smallest f32 subnormal
        0x007FFFFF,  # largest f32 subnormal
        0x00400000,  # a mid f32 subnormal
        0x80000000,  # -0
        0x7F7FFFFF,  # max f32: overflows to inf in bf16
        0x7F7F8000,  # a bf16 tie at the top of the range
        0x7F7F7FFF,  # just below it: max bf16
        0x7F800000,
        0xFF800000,  # +-inf
        0x33800000,  # 2^-24: smallest f16 subnormal
        0x33000000,  # 2^-25: f16 tie between 0 and the smallest subnormal -> 0
        0x33000001,  # just above: the smallest subnormal
        0x33C00000,  # 1.5 * 2^-24: a subnormal tie -> 2^-23
        0x387FC000,  # just below the smallest f16 normal
        0x38800000,  # 2^-14: the smallest f16 normal
        0x477FE000,  # 65504: max f16
        0x477FEFFF,  # rounds down to 65504
        0x477FF000,  # 65520: a tie, overflows to inf
        0x47C35000,  # 100000: inf in f16
        0xC7C35000,  # -100000: -inf in f16
        0x2E800000,  # 2^-34: 0 in f16, normal in bf16
    )
    return torch.cat([randn(g, 40, scale=100.0), randn(g, 16, scale=1e-3), specials])


@case("to_bf16")
def _(g):
    x = _conversion_input(g)
    return [x], [x.to(bf16)]


@case("to_f16")
def _(g):
    x = _conversion_input(g)
    return [x], [x.to(f16)]


@case("to_bf16_nan")  # NaN payloads: torch's vectorised path writes 0xFFFF
def _(g):
    x = bits_f32(0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA00000, 0x7FFFFFFF)
    return [x], [x.to(bf16)]


@case("to_f16_nan")
def _(g):
    x = bits_f32(0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA00000, 0x7FFFFFFF)
    return [x], [x.to(f16)]


@case("bf16_to_f32")
def _(g):
    x = _conversion_input(g).to(bf16)
    return [x], [x.to(f32), x.to(f64)]


@case("f16_to_f32")
def _(g):
    x = _conversion_input(g).to(f16)
    return [x], [x.to(f32), x.to(f64)]


@case("f64_to_f32")
def _(g):
    x = torch.cat(
        [
            randn(g, 20, dtype=f64),
            torch.tensor([1e300, -1e300, 1e-300, 1.0 + 2.0**-24, 1.0 + 3 * 2.0**-24], dtype=f64),
        ]
    )
    return [x], [x.to(f32)]


@case("f64_to_bf16_f16")
def _(g):
    x = torch.cat(
        [
            randn(g, 20, dtype=f64, scale=10.0),
            torch.tensor([1.0 + 2.0**-8 + 2.0**-30, 65519.99, 1e-300], dtype=f64),
        ]
    )
    return [x], [x.to(bf16), x.to(f16)]


@case("f32_to_i64")
def _(g):
    x = torch.cat([randn(g, 20, scale=50.0), torch.tensor([-0.5, 0.5, -1.5, 2.999, -2.999])])
    return [x], [x.to(i64), x.to(i32)]


@case("int_to_float")
def _(g):
    x = torch.cat([randint(g, -1000, 1000, 10), torch.tensor([2**24 + 1, -(2**53 + 1)])])
    return [x], [x.to(f32), x.to(f64), x.to(bf16)]


@case("bool_conversions")
def _(g):
    x = torch.tensor([0.0, -0.0, 1.0, -2.5, NAN, INF, 1e-40])
    m = mask(g, 6)
    return [x, m], [x.to(boolean), m.to(f32), m.to(i64)]


# ---- nn functional: activations, losses, vectors, padding (src/nn/) ----
# A differentiable case stores its inputs, then the upstream gradient; its
# outputs are the result, then the gradients of the inputs at `wrt`.
def value_and_grad(g, fn, inputs, wrt=(0,)):
    leaves = [t.detach().clone().requires_grad_(i in wrt) for i, t in enumerate(inputs)]
    y = fn(*leaves)
    gout = torch.randn(tuple(y.shape), generator=g, dtype=f64).to(y.dtype)  # 0-d too
    grads = torch.autograd.grad(y, [leaves[i] for i in wrt], gout)
    return list(inputs) + [gout], [y.detach()] + [d.detach() for d in grads]


def activation_input(g, kinks):
    """N(0, 3^2) draws, the activation's kinks, signed zeros, NaN, +-inf and
    values large enough to saturate exp."""
    specials = [0.0, -0.0, NAN, INF, -INF, 30.0, -30.0, 100.0, -100.0, *kinks]
    return with_specials(randn(g, 24, scale=3.0), specials)


ACTIVATIONS = [
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), []),
    ("elu", lambda x: F.elu(x, 0.7), [1e-4, -1e-4]),
    ("selu", F.selu, [1e-4, -1e-4]),
    ("celu", lambda x: F.celu(x, 1.5), [1e-4, -1e-4]),
    ("softplus", F.softplus, [20.0, 20.5, 19.5]),
    ("softplus_beta", lambda x: F.softplus(x, beta=2.0, threshold=5.0), [2.5, 2.4, 2.6]),
    ("hardtanh", lambda x: F.hardtanh(x, -0.5, 1.0), [-0.5, 1.0]),
    ("relu6", F.relu6, [6.0, 5.5, 6.5]),
    ("hardswish", F.hardswish, [-3.0, 3.0, -2.5, 2.5]),
    ("hardsigmoid", F.hardsigmoid, [-3.0, 3.0, -2.5, 2.5]),
    ("mish", F.mish, [20.0, 25.0, -20.0]),
    ("logsigmoid", F.logsigmoid, [20.0, -20.0, 1e-4]),
    ("softsign", F.softsign, []),
    ("tanhshrink", F.tanhshrink, [1e-3]),
    ("softshrink", F.softshrink, [0.5, -0.5, 0.25]),
    ("hardshrink", lambda x: F.hardshrink(x, 0.7), [0.7, -0.7, 0.25]),
    ("threshold", lambda x: F.threshold(x, 0.1, -2.0), [0.1]),
]


def _activation_case(name, fn, kinks):
    @case(f"{name}_f32")
    def _(g):
        return value_and_grad(g, fn, [activation_input(g, kinks)])


for _name, _fn, _kinks in ACTIVATIONS:
    _activation_case(_name, _fn, _kinks)


@case("relu6_i64")  # integers pass through hardtanh's comparisons unchanged
def _(g):
    x = randint(g, -10, 10, 12)
    return [x], [F.relu6(x), F.hardtanh(x, -2, 3), F.threshold(x, 1, 7)]


@case("glu_f32")
def _(g):
    x = randn(g, 3, 4, 6)
    return value_and_grad(g, lambda t: F.glu(t, 1), [x])


@case("prelu_f32")
def _(g):
    x, w = activation_input(g, []).view(3, 11), torch.tensor([0.25, -0.5, 2.0])
    x = torch.cat([x, randn(g, 3, 1)], 1).view(3, 3, 4)
    return value_and_grad(g, F.prelu, [x.transpose(0, 1).contiguous(), w], wrt=(0, 1))


@case("prelu_one_weight_f32")
def _(g):
    x, w = randn(g, 2, 5, 3), torch.tensor([0.1])
    return value_and_grad(g, F.prelu, [x, w], wrt=(0, 1))


@case("softmin_f32")
def _(g):
    x = randn(g, 4, 5)
    return value_and_grad(g, lambda t: F.softmin(t, 0), [x])


@case("softmin_dtype_f64")
def _(g):
    x = randn(g, 4, 5)
    return [x], [F.softmin(x, 1, dtype=f64)]


def loss_pair(g, ties=()):
    """An input and a target whose differences include 0 and `ties`."""
    x, t = randn(g, 5, 6), randn(g, 5, 6)
    flat = t.view(-1)
    for i, d in enumerate((0.0, *ties)):
        flat[i] = x.view(-1)[i] - d
    return x, t


for _reduction in ("mean", "sum", "none"):

    def _l1(reduction):
        @case(f"l1_loss_{reduction}_f32")
        def _(g):
            x, t = loss_pair(g)
            return value_and_grad(
                g, lambda a, b: F.l1_loss(a, b, reduction=reduction), [x, t], wrt=(0, 1)
            )

    _l1(_reduction)


@case("l1_loss_weighted_f32")
def _(g):
    x, t = loss_pair(g)
    w = rand(g, 5, 6)
    return value_and_grad(g, lambda a, b, c: F.l1_loss(a, b, weight=c), [x, t, w], wrt=(0, 1, 2))


@case("smooth_l1_loss_f32")
def _(g):
    x, t = loss_pair(g, ties=(1.0, -1.0))
    return value_and_grad(g, F.smooth_l1_loss, [x, t], wrt=(0, 1))


@case("smooth_l1_loss_beta_none_f32")
def _(g):
    x, t = loss_pair(g, ties=(0.5, -0.5))
    fn = lambda a, b: F.smooth_l1_loss(a, b, reduction="none", beta=0.5)  # noqa: E731
    return value_and_grad(g, fn, [x, t], wrt=(0, 1))


@case("smooth_l1_loss_beta0_f32")
def _(g):
    x, t = loss_pair(g)
    fn = lambda a, b: F.smooth_l1_loss(a, b, reduction="sum", beta=0.0)  # noqa: E731
    return value_and_grad(g, fn, [x, t], wrt=(0, 1))


@case("huber_loss_f32")
def _(g):
    x, t = loss_pair(g, ties=(1.0, -1.0))
    return value_and_grad(g, F.huber_loss, [x, t], wrt=(0, 1))


@case("huber_loss_weighted_none_f32")
def _(g):
    x, t = loss_pair(g, ties=(0.5, -0.5))
    w = rand(g, 5, 6)
    fn = lambda a, b, c: F.huber_loss(a, b, reduction="none", delta=0.5, weight=c)  # noqa: E731
    return value_and_grad(g, fn, [x, t, w], wrt=(0, 1, 2))


def probabilities(g):
    """Probabilities with the edges 0 and 1, values within 1e-12 of them, and
    a log below -100."""
    edges = torch.tensor([0.0, 1.0, 0.0, 1.0, 1e-13, 1e-30, 1e-45, 0.5, 1.0 - 2.0**-24])
    return torch.cat([rand(g, 21), edges]).view(5, 6)


@case("binary_cross_entropy_f32")
def _(g):
    x = probabilities(g)
    t = torch.cat([rand(g, 21), torch.tensor([0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.3, 0.0])])
    w = rand(g, 6)
    fn = lambda a, b, c: F.binary_cross_entropy(a, b, c, reduction="none")  # noqa: E731
    return value_and_grad(g, fn, [x, t.view(5, 6), w], wrt=(0,))


@case("binary_cross_entropy_mean_f32")
def _(g):
    x, t = rand(g, 4, 3, lo=0.01, hi=0.99), (rand(g, 4, 3) > 0.5).to(f32)
    return value_and_grad(g, F.binary_cross_entropy, [x, t], wrt=(0, 1))


@case("binary_cross_entropy_with_logits_f32")
def _(g):
    x = with_specials(randn(g, 26, scale=4.0), [0.0, 100.0, -100.0, 30.0]).view(5, 6)
    t, w, pw = rand(g, 5, 6), rand(g, 5, 6), rand(g, 6, hi=3.0)
    fn = lambda a, b, c, d: F.binary_cross_entropy_with_logits(  # noqa: E731
        a, b, c, reduction="none", pos_weight=d
    )
    return value_and_grad(g, fn, [x, t, w, pw], wrt=(0, 1))  # weights take no gradient


@case("binary_cross_entropy_with_logits_mean_f32")
def _(g):
    x, t = randn(g, 4, 3), (rand(g, 4, 3) > 0.5).to(f32)
    return value_and_grad(g, F.binary_cross_entropy_with_logits, [x, t], wrt=(0, 1))


def kl_inputs(g):
    x = torch.log_softmax(randn(g, 4, 5), 1)
    t = torch.softmax(randn(g, 4, 5), 1)
    t[0, 1] = 0.0
    t[2, 3] = 0.0
    return x, t


for _reduction in ("batchmean", "sum", "none", "mean"):

    def _kl(reduction):
        @case(f"kl_div_{reduction}_f32")
        def _(g):
            x, t = kl_inputs(g)
            fn = lambda a, b: F.kl_div(a, b, reduction=reduction)  # noqa: E731
            # No target gradient: PyTorch's is NaN where the target is 0
            # (stride's is -input there, the xlogy term's taken as 0).
            return value_and_grad(g, fn, [x, t], wrt=(0,))

    _kl(_reduction)


@case("kl_div_log_target_f32")
def _(g):
    x, t = kl_inputs(g)
    fn = lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True)  # noqa: E731
    return value_and_grad(g, fn, [x, torch.log(t + 0.01)], wrt=(0, 1))


@case("soft_margin_loss_f32")  # no |x t| > 88: PyTorch's exp overflows there, stride's does not
def _(g):
    x = with_specials(randn(g, 16, scale=3.0), [0.0, 50.0, -50.0, 80.0]).view(4, 5)
    t = torch.where(rand(g, 4, 5) > 0.5, 1.0, -1.0)
    fn = lambda a, b: F.soft_margin_loss(a, b, reduction="none")  # noqa: E731
    return value_and_grad(g, fn, [x, t], wrt=(0,))


@case("hinge_embedding_loss_f32")
def _(g):
    x = with_specials(randn(g, 16, scale=2.0), [0.0, 1.0, 0.5, -1.0]).view(4, 5)
    t = torch.where(rand(g, 4, 5) > 0.5, 1.0, -1.0)
    fn = lambda a, b: F.hinge_embedding_loss(a, b, margin=1.0, reduction="none")  # noqa: E731
    return value_and_grad(g, fn, [x, t], wrt=(0,))


@case("hinge_embedding_loss_mean_f32")
def _(g):
    x, t = randn(g, 4, 5), torch.where(rand(g, 4, 5) > 0.5, 1.0, -1.0)
    return value_and_grad(g, lambda a, b: F.hinge_embedding_loss(a, b, 0.5), [x, t], wrt=(0,))


@case("poisson_nll_loss_f32")
def _(g):
    x = randn(g, 4, 5)
    t = torch.cat([rand(g, 15, hi=6.0), torch.tensor([0.0, 1.0, 1.5, 2.0, 0.5])]).view(4, 5)
    fn = lambda a, b: F.poisson_nll_loss(a, b, full=True, reduction="none")  # noqa: E731
    return value_and_grad(g, fn, [x, t], wrt=(0,))


@case("poisson_nll_loss_no_log_f32")
def _(g):
    x, t = rand(g, 4, 5, hi=3.0), rand(g, 4, 5, hi=6.0)
    x[0, 0] = 0.0
    return value_and_grad(g, lambda a, b: F.poisson_nll_loss(a, b, log_input=False), [x, t])


@case("cosine_embedding_loss_f32")
def _(g):
    x1, x2 = randn(g, 5, 6), randn(g, 5, 6)
    x2[1] = 0.0  # a zero vector: PyTorch's EPSILON keeps its cosine finite
    t = torch.tensor([1, -1, 1, -1, -1])
    fn = lambda a, b, c: F.cosine_embedding_loss(a, b, c, margin=0.1, reduction="none")  # noqa: E731
    return value_and_grad(g, fn, [x1, x2, t], wrt=(0, 1))


@case("margin_ranking_loss_f32")
def _(g):
    x1, x2 = randn(g, 8), randn(g, 8)
    t = torch.where(rand(g, 8) > 0.5, 1.0, -1.0)
    fn = lambda a, b, c: F.margin_ranking_loss(a, b, c, margin=0.3)  # noqa: E731
    return value_and_grad(g, fn, [x1, x2, t], wrt=(0, 1))


@case("multi_margin_loss_f32")
def _(g):
    x, y, w = randn(g, 5, 4), randint(g, 0, 4, 5), rand(g, 4, lo=0.5, hi=2.0)
    fn = lambda a, b, c: F.multi_margin_loss(a, b, p=2, margin=0.7, weight=c, reduction="none")  # noqa: E731
    return value_and_grad(g, fn, [x, y, w], wrt=(0,))


@case("multilabel_margin_loss_f32")
def _(g):
    x = randn(g, 3, 5)
    t = torch.tensor([[3, 0, -1, 1, 2], [1, 2, 4, 0, 3], [-1, 0, 0, 0, 0]])
    fn = lambda a, b: F.multilabel_margin_loss(a, b, reduction="none")  # noqa: E731
    return value_and_grad(g, fn, [x, t], wrt=(0,))


@case("multilabel_soft_margin_loss_f32")
def _(g):
    x, t, w = randn(g, 4, 5, scale=3.0), rand(g, 4, 5), rand(g, 5, hi=2.0)
    fn = lambda a, b, c: F.multilabel_soft_margin_loss(a, b, weight=c, reduction="none")  # noqa: E731
    return value_and_grad(g, fn, [x, t, w], wrt=(0, 1))


@case("triplet_margin_loss_f32")
def _(g):
    a, p, n = randn(g, 6, 4), randn(g, 6, 4), randn(g, 6, 4)

    def fn(x, y, z):
        return F.triplet_margin_loss(x, y, z, margin=1.5, p=3, swap=True, reduction="none")

    return value_and_grad(g, fn, [a, p, n], wrt=(0, 1, 2))


@case("gaussian_nll_loss_f32")
def _(g):
    x, t = randn(g, 4, 5), randn(g, 4, 5)
    var = rand(g, 4, 1, hi=2.0)
    var[0, 0] = 1e-8  # clamped at eps, with the gradient of the unclamped var
    fn = lambda a, b, c: F.gaussian_nll_loss(a, b, c, full=True, reduction="none")  # noqa: E731
    return value_and_grad(g, fn, [x, t, var], wrt=(0, 1, 2))


@case("cross_entropy_weighted_f32")
def _(g):
    x, w = randn(g, 6, 5, scale=2.0), rand(g, 5, lo=0.2, hi=2.0)
    y = torch.tensor([4, 0, -100, 2, 2, 1])
    fn = lambda a, b, c: F.cross_entropy(a, b, weight=c, label_smoothing=0.1)  # noqa: E731
    return value_and_grad(g, fn, [x, y, w], wrt=(0,))


@case("cross_entropy_probabilities_f32")
def _(g):
    x, w = randn(g, 3, 5, 2), rand(g, 5, lo=0.2, hi=2.0)
    t = torch.softmax(randn(g, 3, 5, 2), 1)
    fn = lambda a, b, c: F.cross_entropy(a, b, weight=c, label_smoothing=0.2)  # noqa: E731
    return value_and_grad(g, fn, [x, t, w], wrt=(0, 1))


@case("nll_loss_weighted_f32")
def _(g):
    x, w = torch.log_softmax(randn(g, 6, 5), 1), rand(g, 5, lo=0.2, hi=2.0)
    y = torch.tensor([4, 0, 3, 2, 2, 1])
    fn = lambda a, b, c: F.nll_loss(a, b, weight=c, ignore_index=2, reduction="sum")  # noqa: E731
    return value_and_grad(g, fn, [x, y, w], wrt=(0,))


@case("bilinear_f32")
def _(g):
    x1, x2, w, b = randn(g, 2, 3, 4), randn(g, 2, 3, 5), randn(g, 6, 4, 5), randn(g, 6)
    return value_and_grad(g, F.bilinear, [x1, x2, w, b], wrt=(0, 1, 2, 3))


@case("channel_shuffle_f32")
def _(g):
    x = randn(g, 2, 6, 2, 3)
    return [x], [F.channel_shuffle(x, 3), F.channel_shuffle(x, 2)]


@case("pdist_f32")
def _(g):
    x = randn(g, 6, 4)
    x[3] = x[1]  # a zero distance: PyTorch's gradient there is 0
    return value_and_grad(g, lambda a: F.pdist(a, 1.5), [x])


@case("local_response_norm_f32")
def _(g):
    x = randn(g, 2, 7, 3, 2, scale=2.0)
    return value_and_grad(g, lambda a: F.local_response_norm(a, 4, 0.2, 0.6, 1.5), [x])


@case("one_hot_i64")
def _(g):
    x = randint(g, 0, 4, 3, 5)
    return [x], [F.one_hot(x, 6), F.one_hot(x), F.one_hot(torch.zeros(0, dtype=i64), 3)]


@case("normalize_f32")
def _(g):
    x = randn(g, 4, 5)
    x[1] = 0.0  # a zero row: 0 / eps, and a zero gradient
    return value_and_grad(g, F.normalize, [x])


@case("normalize_p1_dim0_f32")
def _(g):
    x = randn(g, 4, 5)
    return value_and_grad(g, lambda a: F.normalize(a, p=1.0, dim=0), [x])


@case("normalize_p3_f32")
def _(g):
    x = randn(g, 3, 4, 5)
    return value_and_grad(g, lambda a: F.normalize(a, p=3.0, dim=-1), [x])


@case("cosine_similarity_f32")
def _(g):
    a, b = randn(g, 4, 6), randn(g, 4, 6)
    a[2] = 0.0  # a zero vector: its norm clamped at eps
    b[3] = 1e-10
    return value_and_grad(g, F.cosine_similarity, [a, b], wrt=(0, 1))


@case("cosine_similarity_broadcast_f32")
def _(g):
    a, b = randn(g, 3, 1, 5), randn(g, 4, 5)
    fn = lambda x, y: F.cosine_similarity(x, y, dim=-1)  # noqa: E731
    return value_and_grad(g, fn, [a, b], wrt=(0, 1))


@case("pairwise_distance_f32")
def _(g):
    a, b = randn(g, 4, 6), randn(g, 4, 6)
    b[1] = a[1]
    return value_and_grad(g, F.pairwise_distance, [a, b], wrt=(0, 1))


@case("pairwise_distance_p1_keepdim_f32")
def _(g):
    a, b = randn(g, 4, 6), randn(g, 6)
    fn = lambda x, y: F.pairwise_distance(x, y, p=1.0, keepdim=True)  # noqa: E731
    return value_and_grad(g, fn, [a, b], wrt=(0, 1))


@case("pad_f32")
def _(g):
    x = randn(g, 2, 3, 4)
    return value_and_grad(g, lambda a: F.pad(a, (1, 2, -1, 1, 0, 1), value=0.5), [x])


@case("pad_crop_i64")
def _(g):
    x = randint(g, -5, 5, 3, 5)
    return [x], [F.pad(x, (-2, -3)), F.pad(x, (1, -1, 2, 0), value=7)]


@case("pad_reflect_f32")
def _(g):
    x = randn(g, 2, 3, 5)
    return value_and_grad(g, lambda a: F.pad(a, (4, -1, -1, 2), mode="reflect"), [x])


@case("pad_reflect_3d_f32")
def _(g):
    x = randn(g, 1, 2, 3, 3, 4)
    return value_and_grad(g, lambda a: F.pad(a, (1, 2, 2, 1, 1, 0), mode="reflect"), [x])


@case("pad_replicate_f32")
def _(g):
    x = randn(g, 3, 4)
    return value_and_grad(g, lambda a: F.pad(a, (3, -1), mode="replicate"), [x])


@case("pad_circular_f32")
def _(g):
    x = randn(g, 2, 3, 5)
    return value_and_grad(g, lambda a: F.pad(a, (4, -1, 2, 3), mode="circular"), [x])


# ---- convolutions and poolings ----
@case("unfold_f32")
def _(g):
    x = randn(g, 2, 3, 5, 6)
    return value_and_grad(g, lambda a: F.unfold(a, (2, 3), (1, 2), (1, 0), (2, 1)), [x])


@case("fold_f32")
def _(g):
    x = randn(g, 2, 12, 9)
    return value_and_grad(g, lambda a: F.fold(a, (4, 5), 2, 1, 1, 2), [x])


@case("linear_cross_entropy_f32")
def _(g):
    x, w, t = randn(g, 7, 4), randn(g, 6, 4), randint(g, 0, 6, 7)
    b, cw = randn(g, 6), torch.rand(6, generator=g) + 0.5
    fn = lambda a, k, tt, c, ww: F.linear_cross_entropy(  # noqa: E731
        a, k, tt, linear_bias=c, weight=ww, ignore_index=2, label_smoothing=0.1
    )
    return value_and_grad(g, fn, [x, w, t, b, cw], wrt=(0, 1, 3))


@case("linear_cross_entropy_probabilities_f64")
def _(g):
    x, w = randn(g, 5, 3, dtype=f64), randn(g, 4, 3, dtype=f64)
    t = torch.softmax(randn(g, 5, 4, dtype=f64), 1)
    fn = lambda a, k, tt: F.linear_cross_entropy(a, k, tt, reduction="none")  # noqa: E731
    return value_and_grad(g, fn, [x, w, t], wrt=(0, 1, 2))


@case("conv1d_f32")
def _(g):
    x, w, b = randn(g, 2, 4, 7), randn(g, 6, 2, 3), randn(g, 6)
    fn = lambda a, k, c: F.conv1d(a, k, c, stride=2, padding=1, groups=2)  # noqa: E731
    return value_and_grad(g, fn, [x, w, b], wrt=(0, 1, 2))


@case("conv2d_f32")
def _(g):
    x, w, b = randn(g, 2, 3, 5, 6), randn(g, 4, 3, 2, 3), randn(g, 4)
    fn = lambda a, k, c: F.conv2d(a, k, c, padding=(1, 0), dilation=(1, 2))  # noqa: E731
    return value_and_grad(g, fn, [x, w, b], wrt=(0, 1, 2))


@case("conv2d_same_f32")
def _(g):
    x, w = randn(g, 3, 5, 6), randn(g, 2, 3, 2, 2)
    return value_and_grad(g, lambda a, k: F.conv2d(a, k, padding="same"), [x, w], wrt=(0, 1))


@case("conv2d_stride_groups_f64")
def _(g):
    x, w, b = (
        randn(g, 2, 6, 7, 8, dtype=f64),
        randn(g, 3, 2, 3, 3, dtype=f64),
        randn(g, 3, dtype=f64),
    )
    fn = lambda a, k, c: F.conv2d(a, k, c, stride=(2, 3), padding=2, groups=3)  # noqa: E731
    return value_and_grad(g, fn, [x, w, b], wrt=(0, 1, 2))


@case("conv3d_f64")
def _(g):
    x, w, b = (
        randn(g, 2, 4, 4, 5, 3, dtype=f64),
        randn(g, 6, 2, 2, 3, 2, dtype=f64),
        randn(g, 6, dtype=f64),
    )
    fn = lambda a, k, c: F.conv3d(  # noqa: E731
        a, k, c, stride=(1, 2, 1), padding=(1, 0, 1), dilation=(2, 1, 1), groups=2
    )
    return value_and_grad(g, fn, [x, w, b], wrt=(0, 1, 2))


@case("conv_transpose1d_f32")
def _(g):
    x, w, b = randn(g, 2, 4, 5), randn(g, 4, 3, 3), randn(g, 6)
    fn = lambda a, k, c: F.conv_transpose1d(a, k, c, stride=2, output_padding=1, groups=2)  # noqa: E731
    return value_and_grad(g, fn, [x, w, b], wrt=(0, 1, 2))


@case("conv_transpose2d_f32")
def _(g):
    x, w, b = randn(g, 2, 3, 4, 5), randn(g, 3, 2, 3, 2), randn(g, 2)
    fn = lambda a, k, c: F.conv_transpose2d(a, k, c, stride=(2, 1), padding=1, dilation=(1, 2))  # noqa: E731
    return value_and_grad(g, fn, [x, w, b], wrt=(0, 1, 2))


@case("conv_transpose3d_f32")
def _(g):
    x, w, b = randn(g, 2, 3, 3, 4, 2), randn(g, 3, 2, 2, 3, 2), randn(g, 2)
    fn = lambda a, k, c: F.conv_transpose3d(  # noqa: E731
        a, k, c, stride=(2, 1, 2), padding=(1, 0, 0), output_padding=(1, 0, 1), dilation=(1, 2, 1)
    )
    return value_and_grad(g, fn, [x, w, b], wrt=(0, 1, 2))


@case("max_pool1d_f32")
def _(g):
    x = randn(g, 2, 3, 8)
    fn = lambda a: F.max_pool1d(a, 3, 2, 1, ceil_mode=True)  # noqa: E731
    return value_and_grad(g, fn, [x])


@case("max_pool2d_f32")
def _(g):
    x = randn(g, 2, 3, 6, 7)
    fn = lambda a: F.max_pool2d(a, (2, 3), padding=1, dilation=(2, 1), ceil_mode=True)  # noqa: E731
    return value_and_grad(g, fn, [x])


@case("max_pool2d_indices_f32")
def _(g):
    x = randn(g, 3, 7, 6)
    values, indices = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    return [x], [values, indices]


@case("max_pool3d_f32")
def _(g):
    x = randn(g, 2, 2, 5, 6, 7)
    fn = lambda a: F.max_pool3d(  # noqa: E731
        a, (2, 2, 3), padding=(1, 0, 1), dilation=(1, 2, 1), ceil_mode=True
    )
    return value_and_grad(g, fn, [x])


@case("max_pool3d_indices_f32")
def _(g):
    x = randn(g, 2, 5, 6, 7)
    values, indices = F.max_pool3d(x, (3, 2, 3), 2, 1, return_indices=True)
    return [x], [values, indices]


@case("avg_pool1d_f32")
def _(g):
    x = randn(g, 2, 3, 8)
    fn = lambda a: F.avg_pool1d(a, 3, 2, 1, ceil_mode=True)  # noqa: E731
    return value_and_grad(g, fn, [x])


@case("avg_pool2d_f32")
def _(g):
    x = randn(g, 2, 3, 6, 7)
    fn = lambda a: F.avg_pool2d(a, (3, 2), padding=1, ceil_mode=True, count_include_pad=False)  # noqa: E731
    return value_and_grad(g, fn, [x])


@case("avg_pool2d_divisor_f32")
def _(g):
    x = randn(g, 2, 3, 4, 5)
    return value_and_grad(g, lambda a: F.avg_pool2d(a, 2, 1, divisor_override=3), [x])


@case("avg_pool3d_f32")
def _(g):
    x = randn(g, 2, 2, 4, 6, 5)
    fn = lambda a: F.avg_pool3d(  # noqa: E731
        a, (2, 3, 2), padding=1, ceil_mode=True, count_include_pad=False
    )
    return value_and_grad(g, fn, [x])


@case("adaptive_avg_pool1d_f32")
def _(g):
    x = randn(g, 2, 3, 7)
    return value_and_grad(g, lambda a: F.adaptive_avg_pool1d(a, 3), [x])


@case("adaptive_avg_pool2d_f32")
def _(g):
    x = randn(g, 2, 3, 5, 7)
    return value_and_grad(g, lambda a: F.adaptive_avg_pool2d(a, (3, 4)), [x])


@case("adaptive_avg_pool3d_f32")
def _(g):
    x = randn(g, 2, 3, 5, 4, 7)
    return value_and_grad(g, lambda a: F.adaptive_avg_pool3d(a, (3, 2, 4)), [x])


@case("adaptive_max_pool1d_f32")
def _(g):
    x = randn(g, 2, 3, 7)
    values, indices = F.adaptive_max_pool1d(x, 3, return_indices=True)
    return [x], [values, indices]


@case("adaptive_max_pool2d_f32")
def _(g):
    x = randn(g, 2, 3, 5, 7)
    return value_and_grad(g, lambda a: F.adaptive_max_pool2d(a, (3, 4)), [x])


@case("adaptive_max_pool2d_indices_f32")
def _(g):
    x = randn(g, 3, 5, 7)
    values, indices = F.adaptive_max_pool2d(x, (3, 4), return_indices=True)
    return [x], [values, indices]


@case("adaptive_max_pool3d_f32")
def _(g):
    x = randn(g, 2, 3, 5, 4, 7)
    return value_and_grad(g, lambda a: F.adaptive_max_pool3d(a, (3, 2, 4)), [x])


@case("adaptive_max_pool3d_indices_f32")
def _(g):
    x = randn(g, 3, 5, 4, 7)
    values, indices = F.adaptive_max_pool3d(x, (3, 2, 4), return_indices=True)
    return [x], [values, indices]


# nn ops moved from Python (src/nn/unpool_and_bags.cpp, multi_head_attention.cpp,
# margin_losses.cpp; nonzero_static in src/ops/advanced_indexing.cpp)
@case("max_unpool1d_f32")
def _(g):
    values, indices = F.max_pool1d(randn(g, 2, 3, 9), 2, return_indices=True)
    fn = lambda v, i: F.max_unpool1d(v, i, 2, output_size=(9,))  # noqa: E731
    return value_and_grad(g, fn, [values, indices])


@case("max_unpool2d_f32")
def _(g):
    values, indices = F.max_pool2d(randn(g, 2, 3, 5, 6), 2, return_indices=True)
    fn = lambda v, i: F.max_unpool2d(v, i, 2, output_size=(2, 3, 5, 6))  # noqa: E731
    return value_and_grad(g, fn, [values, indices])


@case("max_unpool3d_f32")
def _(g):
    values, indices = F.max_pool3d(randn(g, 3, 4, 4, 4), 2, 2, 1, return_indices=True)
    fn = lambda v, i: F.max_unpool3d(v, i, 2, 2, 1)  # noqa: E731
    return value_and_grad(g, fn, [values, indices])


@case("embedding_bag_f32")
def _(g):
    ids, w, psw = randint(g, 0, 7, 10), randn(g, 7, 3), randn(g, 10)
    offsets = torch.tensor([0, 3, 3, 8])
    fn = lambda i, w, o, p: F.embedding_bag(  # noqa: E731
        i, w, o, mode="sum", per_sample_weights=p, padding_idx=2
    )
    return value_and_grad(g, fn, [ids, w, offsets, psw], wrt=(1, 3))


@case("embedding_bag_mean_f32")
def _(g):
    ids, w = randint(g, 0, 6, 3, 4), randn(g, 6, 5)
    fn = lambda i, w: F.embedding_bag(i, w, padding_idx=-1)  # noqa: E731
    return value_and_grad(g, fn, [ids, w], wrt=(1,))


@case("embedding_bag_max_f32")
def _(g):
    ids, w = torch.tensor([5, 0, 3, 1, 4, 2, 6]), randn(g, 7, 4)
    offsets = torch.tensor([0, 2, 2, 5])
    fn = lambda i, w, o: F.embedding_bag(i, w, o, mode="max", include_last_offset=True)  # noqa: E731
    return value_and_grad(g, fn, [ids, w, offsets], wrt=(1,))


@case("triplet_margin_with_distance_loss_f32")
def _(g):
    a, p, n = randn(g, 5, 4), randn(g, 5, 4), randn(g, 5, 4)
    cosine_distance = lambda x, y: 1.0 - F.cosine_similarity(x, y)  # noqa: E731
    fn = lambda a, p, n: F.triplet_margin_with_distance_loss(  # noqa: E731
        a, p, n, distance_function=cosine_distance, margin=1.5, swap=True, reduction="none"
    )
    return value_and_grad(g, fn, [a, p, n], wrt=(0, 1, 2))


@case("triplet_margin_with_distance_loss_default_f32")
def _(g):
    a, p, n = randn(g, 5, 4), randn(g, 5, 4), randn(g, 5, 4)
    return value_and_grad(g, F.triplet_margin_with_distance_loss, [a, p, n], wrt=(0, 1, 2))


@case("multi_head_attention_forward_f32")
def _(g):
    q, k, v = randn(g, 4, 2, 6), randn(g, 5, 2, 6), randn(g, 5, 2, 6)
    # Weights of scale 0.4 keep the scores moderate, so float32 softmax
    # gradients agree with PyTorch's to the golden tolerance.
    w_in, w_out = randn(g, 18, 6, scale=0.4), randn(g, 6, 6, scale=0.4)
    b_in, b_out = randn(g, 18), randn(g, 6)
    bias_k, bias_v, attn_mask = randn(g, 1, 1, 6), randn(g, 1, 1, 6), randn(g, 4, 5)
    padding = torch.tensor([[False, False, True, False, True], [False] * 5])

    def fn(q, k, v, w_in, b_in, w_out, b_out, bias_k, bias_v, attn_mask):
        out, weights = F.multi_head_attention_forward(
            q, k, v, 6, 3, w_in, b_in, bias_k, bias_v, True, 0.0, w_out, b_out,
            training=False, key_padding_mask=padding, attn_mask=attn_mask,
            average_attn_weights=False,
        )  # fmt: skip
        return torch.cat([out.reshape(-1), weights.reshape(-1)])

    inputs = [q, k, v, w_in, b_in, w_out, b_out, bias_k, bias_v, attn_mask]
    return value_and_grad(g, fn, inputs, wrt=tuple(range(9)))


@case("multi_head_attention_forward_separate_f32")
def _(g):
    q, k, v = randn(g, 3, 4), randn(g, 5, 6), randn(g, 5, 6)
    w_q, w_k, w_v, w_out = randn(g, 4, 4), randn(g, 4, 6), randn(g, 4, 6), randn(g, 4, 4)
    static_v = randn(g, 2, 5, 2)
    causal = torch.ones(3, 5, dtype=torch.bool).triu(1)

    def fn(q, k, v, w_q, w_k, w_v, w_out, static_v):
        out, _ = F.multi_head_attention_forward(
            q, k, v, 4, 2, None, None, None, None, False, 0.0, w_out, None,
            need_weights=False, attn_mask=causal, use_separate_proj_weight=True,
            q_proj_weight=w_q, k_proj_weight=w_k, v_proj_weight=w_v, static_v=static_v,
        )  # fmt: skip
        return out

    inputs = [q, k, v, w_q, w_k, w_v, w_out, static_v]
    return value_and_grad(g, fn, inputs, wrt=(0, 1, 3, 4, 6, 7))


@case("nonzero_static_f32")
def _(g):
    x = randn(g, 3, 4).clamp_min(0.3) - 0.3
    return [x], [torch.nonzero_static(x, size=4), torch.nonzero_static(x, size=15, fill_value=-5)]


@case("interpolate_bilinear_f32")
def _(g):
    x = randn(g, 2, 3, 4, 5)
    return value_and_grad(g, lambda a: F.interpolate(a, (7, 3), mode="bilinear"), [x])


@case("interpolate_linear_align_f32")
def _(g):
    x = randn(g, 2, 3, 4)
    fn = lambda a: F.interpolate(a, scale_factor=2.5, mode="linear", align_corners=True)  # noqa: E731
    return value_and_grad(g, fn, [x])


@case("interpolate_bicubic_f32")
def _(g):
    x = randn(g, 1, 2, 4, 5)
    fn = lambda a: F.interpolate(a, scale_factor=(2.0, 0.6), mode="bicubic")  # noqa: E731
    return value_and_grad(g, fn, [x])


@case("interpolate_nearest_f32")
def _(g):
    x = randn(g, 2, 3, 5, 6)
    return value_and_grad(g, lambda a: F.interpolate(a, scale_factor=(1.7, 0.5)), [x])


@case("interpolate_nearest_exact_f32")
def _(g):
    x = randn(g, 2, 3, 5)
    return value_and_grad(g, lambda a: F.interpolate(a, 7, mode="nearest-exact"), [x])


@case("interpolate_area_f32")
def _(g):
    x = randn(g, 2, 3, 5, 7)
    return value_and_grad(g, lambda a: F.interpolate(a, (3, 2), mode="area"), [x])


@case("interpolate_trilinear_f32")
def _(g):
    x = randn(g, 1, 2, 2, 3, 4)
    return value_and_grad(g, lambda a: F.interpolate(a, (3, 5, 2), mode="trilinear"), [x])


@case("pixel_shuffle_f32")
def _(g):
    x = randn(g, 2, 8, 3, 4)
    return value_and_grad(g, lambda a: F.pixel_shuffle(a, 2), [x])


@case("pixel_unshuffle_f32")
def _(g):
    x = randn(g, 2, 2, 4, 6)
    return value_and_grad(g, lambda a: F.pixel_unshuffle(a, 2), [x])


@case("group_norm_f32")
def _(g):
    x, w, b = randn(g, 2, 6, 3, 4), randn(g, 6), randn(g, 6)
    return value_and_grad(g, lambda a, c, d: F.group_norm(a, 3, c, d), [x, w, b], wrt=(0, 1, 2))


# ---- a composite: 2-layer MLP + cross-entropy from basic ops ----
@case("mlp_cross_entropy_f32")
def _(g):
    x = randn(g, 8, 10)
    w1, b1 = randn(g, 16, 10, scale=0.3), randn(g, 16, scale=0.1)
    w2, b2 = randn(g, 5, 16, scale=0.3), randn(g, 5, scale=0.1)
    t = randint(g, 0, 5, 8)
    h = torch.relu(x @ w1.t() + b1)
    logits = h @ w2.t() + b2
    logp = torch.log_softmax(logits, 1)
    loss = -logp.gather(1, t.unsqueeze(1)).mean()
    assert torch.allclose(loss, F.cross_entropy(logits, t))
    return [x, w1, b1, w2, b2, t], [logits, logp, loss]


@case("mlp_gelu_f64")
def _(g):
    x = randn(g, 4, 6, dtype=f64)
    w1, b1 = randn(g, 6, 8, dtype=f64), randn(g, 8, dtype=f64)
    w2, b2 = randn(g, 8, 3, dtype=f64), randn(g, 3, dtype=f64)
    t = randint(g, 0, 3, 4)
    logits = F.gelu(x @ w1 + b1) @ w2 + b2
    loss = -torch.log_softmax(logits, 1).gather(1, t.unsqueeze(1)).mean()
    return [x, w1, b1, w2, b2, t], [logits, loss]


# ---- the listed ops with no case above: views, copies, fills, indexing ----
@case("view_split_f32")
def _(g):
    x = randn(g, 4, 6)
    return [x], [x.view(2, 2, 6)]


@case("reshape_transposed_f32")  # a copy: the transpose cannot be viewed flat
def _(g):
    x = randn(g, 4, 6)
    return [x], [x.t().reshape(3, 8)]


@case("select_f32")
def _(g):
    x = randn(g, 3, 4, 5)
    return [x], [x.select(1, 2), x.select(-1, -1)]


@case("unsqueeze_f32")
def _(g):
    x = randn(g, 3, 4)
    return [x], [x.unsqueeze(0), x.unsqueeze(-1)]


@case("squeeze_f32")
def _(g):
    x = randn(g, 3, 1, 4, 1)
    return [x], [x.squeeze(1), x.squeeze()]


@case("unfold_view_f32")  # overlapping windows, a transposed base, one window
def _(g):
    x = randn(g, 4, 6)
    return [x], [x.unfold(1, 3, 2), x.t().unfold(0, 2, 1), x.unfold(-1, 6, 6)]


@case("as_strided_overlapping_f32")  # windows of a flat buffer, sharing elements
def _(g):
    x = randn(g, 12)
    return [x], [x.as_strided((4, 3), (2, 1), 1)]


@case("copy_broadcast_convert_f64")  # f32 into an f64 destination, broadcast
def _(g):
    dst, src = randn(g, 3, 4, dtype=f64), randn(g, 4)
    out = dst.clone()
    out.copy_(src)
    return [dst, src], [out]


@case("clone_f32")
def _(g):
    x = randn(g, 5, 3)
    return [x], [x.t().clone()]


@case("fill_f32")
def _(g):
    x = randn(g, 3, 4)
    return [x], [x.clone().fill_(2.5), x.clone().zero_()]


@case("argmin_d1_f32")
def _(g):
    x = randn(g, 5, 7)
    return [x], [torch.argmin(x, 1), torch.argmin(x, 0, keepdim=True)]


@case("index_two_tensors_f32")  # x[i, j] with broadcast index tensors
def _(g):
    x = randn(g, 4, 6)
    i, j = torch.tensor([[3], [0]]), torch.tensor([5, 1, 1])
    return [x, i, j], [x[i, j]]


@case("index_put_accumulate_f32")  # repeated indices add up
def _(g):
    x, v = randn(g, 5, 3), randn(g, 4, 3)
    i = torch.tensor([1, 4, 1, 1])
    return [x, i, v], [x.index_put((i,), v, accumulate=True)]


@case("index_put_f32")
def _(g):
    x, v = randn(g, 5, 3), randn(g, 2)
    i, j = torch.tensor([0, 3]), torch.tensor([2, 0])
    return [x, i, j, v], [x.index_put((i, j), v)]


# ---- complex numbers and torch.fft (src/ops/complex.cpp, fft.cpp) ----
# Each case takes real float64 inputs, builds its complex operands with
# torch.complex and returns complex results as view_as_real, so the file
# holds real tensors; its outputs are the result and the gradients of every
# input (value_and_grad). The lengths 5 and 7 are primes, 6 = 2 * 3.
def cplx(a, b):
    return torch.complex(a, b)


def parts(t):
    return torch.view_as_real(t.resolve_conj()) if t.is_complex() else t


def complex_arithmetic(a, b):
    x, y = cplx(a, b), cplx(b, a).flip(1)
    return parts(x * y - x / (y + 3.0) + torch.exp(x) + torch.reciprocal(x + 4.0) + (-x))


COMPLEX_GOLDENS = [  # (name, fn, number of (3, 6) float64 inputs)
    ("view_as_real", lambda a, b: torch.view_as_real(cplx(a, b).t()), 2),
    (
        "view_as_complex",
        lambda a, b: parts(torch.view_as_complex(torch.stack([a, b], -1)) * cplx(b, a)),
        2,
    ),
    ("real", lambda a, b: torch.real(cplx(a, b) * cplx(b, a)), 2),
    ("imag", lambda a, b: torch.imag(cplx(a, b) * cplx(b, a)), 2),
    ("complex", lambda a, b: parts(cplx(a, b)), 2),
    # abs >= 0: PyTorch's polar gradient assumes it.
    ("polar", lambda a, b: parts(torch.polar(a.abs() + 0.1, b)), 2),
    ("conj", lambda a, b: parts(torch.conj(cplx(a, b)).resolve_conj() * cplx(b, a)), 2),
    ("conj_physical", lambda a, b: parts(torch.conj_physical(cplx(a, b))), 2),
    ("resolve_conj", lambda a, b: parts(torch.resolve_conj(torch.conj(cplx(a, b)))), 2),
    ("angle", lambda a, b: torch.angle(cplx(a, b)), 2),
    ("complex_arithmetic", complex_arithmetic, 2),
    (
        "complex_abs_sum_mean",
        lambda a, b: torch.abs(cplx(a, b)) + parts(cplx(a, b).sum(0) + cplx(a, b).mean()).sum(),
        2,
    ),
    ("fft_c2c", lambda a, b: parts(torch.fft.fft(cplx(a, b), dim=0)), 2),
    ("fft_fft", lambda a: parts(torch.fft.fft(a, 7)), 1),
    ("fft_ifft", lambda a, b: parts(torch.fft.ifft(cplx(a, b), 5, 0, "ortho")), 2),
    ("fft_rfft", lambda a: parts(torch.fft.rfft(a, norm="forward")), 1),
    ("fft_irfft", lambda a, b: torch.fft.irfft(cplx(a, b)), 2),
    ("fft_irfft_odd", lambda a, b: torch.fft.irfft(cplx(a, b), 7, 0), 2),
    ("fft_hfft", lambda a, b: torch.fft.hfft(cplx(a, b), 5), 2),
    ("fft_ihfft", lambda a: parts(torch.fft.ihfft(a)), 1),
    ("fft_fft2", lambda a, b: parts(torch.fft.fft2(cplx(a, b))), 2),
    ("fft_ifft2", lambda a, b: parts(torch.fft.ifft2(cplx(a, b), (4, 5), (1, 0))), 2),
    ("fft_rfft2", lambda a: parts(torch.fft.rfft2(a, norm="ortho")), 1),
    ("fft_irfft2", lambda a, b: torch.fft.irfft2(cplx(a, b), (3, 7)), 2),
    ("fft_hfft2", lambda a, b: torch.fft.hfft2(cplx(a, b)), 2),
    ("fft_ihfft2", lambda a: parts(torch.fft.ihfft2(a)), 1),
    ("fft_fftn", lambda a: parts(torch.fft.fftn(a)), 1),
    ("fft_ifftn", lambda a, b: parts(torch.fft.ifftn(cplx(a, b), dim=(0,))), 2),
    ("fft_rfftn", lambda a: parts(torch.fft.rfftn(a, (5, 5))), 1),
    ("fft_irfftn", lambda a, b: torch.fft.irfftn(cplx(a, b), norm="forward"), 2),
    ("fft_hfftn", lambda a, b: torch.fft.hfftn(cplx(a, b)), 2),
    ("fft_ihfftn", lambda a: parts(torch.fft.ihfftn(a)), 1),
    ("fft_fftshift", lambda a: torch.fft.fftshift(a), 1),
    ("fft_ifftshift", lambda a, b: parts(torch.fft.ifftshift(cplx(a, b), dim=1)), 2),
]


def complex_golden(fn, inputs):
    def build(g):
        xs = [randn(g, 3, 6, dtype=f64) for _ in range(inputs)]
        return value_and_grad(g, fn, xs, wrt=tuple(range(inputs)))

    return build


for _name, _fn, _inputs in COMPLEX_GOLDENS:
    case(_name + "_f64")(complex_golden(_fn, _inputs))


@case("isreal_f64")
def _(g):
    a, b = randn(g, 3, 6, dtype=f64), randn(g, 3, 6, dtype=f64)
    b[0] = 0.0
    return [a, b], [torch.isreal(cplx(a, b)), torch.isreal(a)]


@case("fft_fftfreq_f32")
def _(g):
    return [], [torch.fft.fftfreq(7), torch.fft.fftfreq(6, 0.5)]


@case("fft_rfftfreq_f32")
def _(g):
    return [], [torch.fft.rfftfreq(7, 2.0), torch.fft.rfftfreq(6)]


# ---- writing ----
ST_DTYPES = {
    f32: "F32",
    f64: "F64",
    i64: "I64",
    i32: "I32",
    bf16: "BF16",
    f16: "F16",
    boolean: "BOOL",
    torch.uint8: "U8",
}


def tensor_bytes(t):
    t = t.detach().contiguous()
    if t.dtype in (bf16, f16):
        t = t.view(torch.int16)
    arr = t.numpy()
    return arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()


def cpu_capability():
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            return line.split(":", 1)[1].strip()
    return "unknown"


def build():
    torch.set_num_threads(1)  # one summation order, whatever the machine
    entries = []
    for name, builder in CASES:
        g = torch.Generator().manual_seed(zlib.crc32(name.encode()))
        inputs, outputs = builder(g)
        assert outputs, name
        for i, t in enumerate(inputs):
            entries.append((f"{name}/in{i}", t))
        for i, t in enumerate(outputs):
            entries.append((f"{name}/out{i}", t))
    return serialize(
        entries,
        {
            "generator": COMMAND,
            "torch_version": torch.__version__,
            "numpy_version": np.__version__,
            "cpu_capability": cpu_capability(),
            "cases": str(len(CASES)),
            "layout": "CASE/inN are inputs, CASE/outN PyTorch's results",
        },
    )


def serialize(entries, metadata):
    """The safetensors bytes of (name, tensor) entries, in order, plus metadata."""
    header, chunks, offset = {}, [], 0
    for key, t in entries:
        assert isinstance(t, torch.Tensor) and t.dtype in ST_DTYPES, (key, type(t))
        data = tensor_bytes(t)
        header[key] = {
            "dtype": ST_DTYPES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def write(out_path, blob, max_bytes, script, ncases):
    """Writes blob to out_path atomically, within the size budget."""
    if len(blob) > max_bytes:
        sys.exit(f"{script}: {len(blob)} bytes is over the {max_bytes}-byte budget")
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    tmp = out_path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, out_path)
    print(f"wrote {os.path.relpath(out_path, ROOT)}: {ncases} cases, {len(blob)} bytes")


# ---- linear algebra (include/stride/linalg.h), float64 ----
LA = torch.linalg


def well_conditioned(g, *shape):
    n = shape[-1]
    return randn(g, *shape, dtype=f64) + n * torch.eye(n, dtype=f64)


def positive_definite(g, *shape):
    x = randn(g, *shape, dtype=f64)
    return x @ x.mT + torch.eye(shape[-1], dtype=f64)


def symmetric(g, *shape):
    x = randn(g, *shape, dtype=f64)
    return x + x.mT


@case("linalg_lu_factor_ex_f64")
def _(g):
    a = randn(g, 2, 4, 4, dtype=f64)
    return [a], list(LA.lu_factor_ex(a))


@case("linalg_lu_factor_f64")
def _(g):
    return value_and_grad(g, lambda a: LA.lu_factor(a).LU, [randn(g, 5, 3, dtype=f64)])


@case("linalg_lu_f64")
def _(g):
    a = randn(g, 3, 5, dtype=f64)
    return [a], list(LA.lu(a))


@case("lu_unpack_f64")
def _(g):
    lu, pivots = LA.lu_factor(randn(g, 4, 4, dtype=f64))
    return [lu, pivots], list(torch.lu_unpack(lu, pivots))


@case("linalg_lu_solve_f64")
def _(g):
    lu, pivots = LA.lu_factor(well_conditioned(g, 2, 4, 4))
    b = randn(g, 2, 4, 3, dtype=f64)
    return [lu, pivots, b], [
        LA.lu_solve(lu, pivots, b),
        LA.lu_solve(lu, pivots, b, adjoint=True),
        LA.lu_solve(lu, pivots, b.mT, left=False),
    ]


@case("linalg_solve_triangular_f64")
def _(g):
    a, b = well_conditioned(g, 4, 4).triu(), randn(g, 4, 2, dtype=f64)
    return value_and_grad(g, lambda a, b: LA.solve_triangular(a, b, upper=True), [a, b], (0, 1))


@case("linalg_solve_f64")
def _(g):
    a, b = well_conditioned(g, 2, 3, 3), randn(g, 3, 2, dtype=f64)
    return value_and_grad(g, LA.solve, [a, b], (0, 1))


@case("linalg_solve_ex_f64")
def _(g):
    a, b = well_conditioned(g, 2, 3, 3), randn(g, 2, 3, dtype=f64)
    return [a, b], list(LA.solve_ex(a, b))


@case("linalg_inv_f64")
def _(g):
    return value_and_grad(g, LA.inv, [well_conditioned(g, 2, 4, 4)])


@case("linalg_inv_ex_f64")
def _(g):
    a = well_conditioned(g, 3, 3)
    return [a], list(LA.inv_ex(a))


@case("linalg_det_f64")
def _(g):
    return value_and_grad(g, LA.det, [randn(g, 3, 4, 4, dtype=f64)])


@case("linalg_slogdet_f64")
def _(g):
    a = randn(g, 3, 4, 4, dtype=f64)
    return [a], list(LA.slogdet(a))


@case("logdet_f64")
def _(g):
    a = torch.stack([positive_definite(g, 3, 3), -positive_definite(g, 3, 3)])
    return [a], [torch.logdet(a)]


@case("linalg_cholesky_ex_f64")
def _(g):
    a = positive_definite(g, 2, 4, 4)
    return [a], [*LA.cholesky_ex(a), LA.cholesky_ex(a, upper=True).L]


@case("linalg_cholesky_f64")
def _(g):
    return value_and_grad(g, LA.cholesky, [positive_definite(g, 4, 4)])


@case("cholesky_solve_f64")
def _(g):
    b, l_factor = randn(g, 4, 2, dtype=f64), LA.cholesky(positive_definite(g, 4, 4))
    return [b, l_factor], [
        torch.cholesky_solve(b, l_factor),
        torch.cholesky_solve(b, l_factor.mT, upper=True),
    ]


@case("cholesky_inverse_f64")
def _(g):
    l_factor = LA.cholesky(positive_definite(g, 4, 4))
    return [l_factor], [torch.cholesky_inverse(l_factor), torch.cholesky_inverse(l_factor.mT, True)]


@case("triangular_solve_f64")
def _(g):
    b, a = randn(g, 4, 2, dtype=f64), well_conditioned(g, 4, 4)
    return [b, a], [
        torch.triangular_solve(b, a).solution,
        torch.triangular_solve(b, a, upper=False, transpose=True).solution,
    ]


@case("linalg_qr_f64")
def _(g):
    def qr(a):
        q, r = LA.qr(a)
        return torch.cat([q.flatten(), r.flatten()])

    return value_and_grad(g, qr, [randn(g, 2, 5, 3, dtype=f64)])


@case("linalg_eigh_f64")
def _(g):
    def eigh(a):
        values, vectors = LA.eigh(a)
        return torch.cat([values.flatten(), vectors.abs().flatten()])

    return value_and_grad(g, eigh, [symmetric(g, 2, 4, 4)])


@case("linalg_eigvalsh_f64")
def _(g):
    a = randn(g, 4, 4, dtype=f64)
    return [a], [LA.eigvalsh(a), LA.eigvalsh(a, UPLO="U")]


@case("linalg_svd_f64")
def _(g):
    def svd(a):
        u, s, vh = LA.svd(a, full_matrices=False)
        return torch.cat([s.flatten(), (u @ vh).flatten(), u.abs().flatten()])

    return value_and_grad(g, svd, [randn(g, 2, 5, 3, dtype=f64)])


@case("linalg_svdvals_f64")
def _(g):
    a = randn(g, 2, 3, 5, dtype=f64)
    return [a], [LA.svdvals(a)]


@case("linalg_householder_product_f64")
def _(g):
    a, tau = randn(g, 5, 3, dtype=f64), randn(g, 2, dtype=f64)
    return value_and_grad(g, LA.householder_product, [a, tau], (0, 1))


@case("linalg_vector_norm_f64")
def _(g):
    x = randn(g, 3, 4, dtype=f64)
    x[1] = 0.0
    return value_and_grad(g, lambda t: LA.vector_norm(t, dim=1), [x])


@case("linalg_vector_norm_ords_f64")
def _(g):
    x = randn(g, 3, 4, dtype=f64)
    x[0, 1] = 0.0
    ords = [INF, -INF, 0, 1, 3, 0.5]
    return [x], [LA.vector_norm(x, o, dim=1) for o in ords] + [LA.vector_norm(x, 3)]


@case("linalg_matrix_norm_f64")
def _(g):
    a = randn(g, 2, 3, 4, dtype=f64)
    ords = ["fro", "nuc", 1, -1, INF, -INF, 2, -2]
    return [a], [LA.matrix_norm(a, o) for o in ords] + [LA.matrix_norm(a, 1, dim=(0, 2))]


@case("linalg_norm_f64")
def _(g):
    a = randn(g, 3, 4, dtype=f64)
    return [a], [LA.norm(a), LA.norm(a, 2), LA.norm(a, "nuc"), LA.norm(a, 3, dim=1)]


@case("linalg_cond_f64")
def _(g):
    a = well_conditioned(g, 2, 3, 3)
    return [a], [LA.cond(a), LA.cond(a, "fro"), LA.cond(a, 1), LA.cond(a, -2)]


@case("linalg_matrix_rank_f64")
def _(g):
    x, y = randn(g, 2, 5, 2, dtype=f64), randn(g, 2, 2, 4, dtype=f64)
    a = x @ y
    return [a], [LA.matrix_rank(a), LA.matrix_rank(a, atol=1.0, rtol=0.0)]


@case("linalg_pinv_f64")
def _(g):
    return value_and_grad(g, LA.pinv, [randn(g, 4, 3, dtype=f64)])


@case("linalg_matrix_power_f64")
def _(g):
    a = well_conditioned(g, 3, 3)
    return [a], [LA.matrix_power(a, 3), LA.matrix_power(a, 0), LA.matrix_power(a, -2)]


@case("linalg_matrix_exp_f64")
def _(g):
    return value_and_grad(g, LA.matrix_exp, [randn(g, 2, 3, 3, dtype=f64)])


@case("linalg_cross_f64")
def _(g):
    a, b = randn(g, 4, 3, dtype=f64), randn(g, 1, 3, dtype=f64)
    return [a, b], [LA.cross(a, b), torch.cross(a.mT, b.mT.expand(3, 4), dim=0)]


@case("linalg_vecdot_f64")
def _(g):
    a, b = randn(g, 4, 3, dtype=f64), randn(g, 4, 3, dtype=f64)
    return [a, b], [LA.vecdot(a, b), LA.vecdot(a, b, dim=0)]


@case("linalg_multi_dot_f64")
def _(g):
    ts = [randn(g, 3, dtype=f64), randn(g, 3, 4, dtype=f64), randn(g, 4, 2, dtype=f64)]
    return ts, [LA.multi_dot(ts)]


@case("linalg_diagonal_f64")
def _(g):
    a = randn(g, 3, 4, 5, dtype=f64)
    return [a], [LA.diagonal(a), LA.diagonal(a, offset=-1, dim1=0, dim2=2)]


@case("linalg_vander_f64")
def _(g):
    x, n = randn(g, 2, 4, dtype=f64), randint(g, -3, 4, 5)
    return [x, n], [LA.vander(x), LA.vander(x, N=2), LA.vander(n, N=4)]


@case("linalg_tensorinv_f64")
def _(g):
    a = well_conditioned(g, 6, 6).reshape(2, 3, 6)
    return [a], [LA.tensorinv(a, ind=2)]


@case("linalg_tensorsolve_f64")
def _(g):
    a, b = well_conditioned(g, 6, 6).reshape(2, 3, 6), randn(g, 2, 3, dtype=f64)
    return [a, b], [LA.tensorsolve(a, b), LA.tensorsolve(a.permute(2, 0, 1), b, dims=(0,))]


@case("linalg_lstsq_f64")
def _(g):
    a, b = randn(g, 2, 5, 3, dtype=f64), randn(g, 2, 5, 2, dtype=f64)
    gelsd = LA.lstsq(a, b, driver="gelsd")
    return [a, b], [*gelsd, LA.lstsq(a, b).solution, LA.lstsq(a.mT, b[:, :3]).solution]


# torch.masked (src/ops/masked.cpp): a case per op, masks of each element and
# broadcast ones, some slices fully masked out (identities and NaNs); values
# and the input's gradient, where the op has one.
M = torch.masked


def masked_f64_inputs(g):
    """A float64 input, a mask of its shape with a fully masked-out slice
    along dim 1, and a mask that broadcasts to it."""
    x, m, mb = randn(g, 3, 4, 5, dtype=f64), mask(g, 3, 4, 5, p=0.6), mask(g, 4, 1, p=0.7)
    m[0, :, 1] = False
    return x, m, mb


def masked_f32_inputs(g):
    """Two float32 inputs and a mask of their shape with a fully masked-out
    slice along dim 1."""
    x, y, m = randn(g, 3, 4, 5), randn(g, 3, 4, 5), mask(g, 3, 4, 5, p=0.6)
    m[1, :, 2] = False
    return x, y, m


def masked_i64_inputs(g):
    return randint(g, -5, 6, 4, 5), mask(g, 4, 5, p=0.6)


MASKED_F64_GRADS = [
    ("sum", lambda x, m, mb: M.sum(x, 1, mask=m)),
    ("prod", lambda x, m, mb: M.prod(x, (0, 2), keepdim=True, mask=m)),
    ("amax", lambda x, m, mb: M.amax(x, -1, mask=mb)),
    ("amin", lambda x, m, mb: M.amin(x, mask=m)),
    ("mean", lambda x, m, mb: M.mean(x, (1, 2), mask=m)),
    ("logsumexp", lambda x, m, mb: M.logsumexp(x, 1, mask=m)),
    ("norm", lambda x, m, mb: M.norm(x, 3.0, 1, mask=m)),
    ("var", lambda x, m, mb: M.var(x, 1, mask=m)),
    ("std_dev", lambda x, m, mb: M.std(x, (0, 2), correction=0, keepdim=True, mask=mb)),
    ("median", lambda x, m, mb: M.median(x, 1, mask=m)),
]
MASKED_F64_VALUES = [
    ("argmax", lambda x, m, mb: M.argmax(x, 2, mask=m)),
    ("argmin", lambda x, m, mb: M.argmin(x, 1, keepdim=True, mask=m)),
]
MASKED_F32_GRADS = [
    ("cumsum", lambda x, m: M.cumsum(x, 1, mask=m)),
    ("cumprod", lambda x, m: M.cumprod(x, 0, mask=m)),
    ("softmax", lambda x, m: M.softmax(x, 1, mask=m)),
    ("log_softmax", lambda x, m: M.log_softmax(x, -1, mask=m)),
    ("softmin", lambda x, m: M.softmin(x, 0, mask=m)),
    ("normalize", lambda x, m: M.normalize(x, 2.0, 1, mask=m)),
]
# Integer inputs: sum and prod widen to int64 as torch.sum, the others keep
# the input's dtype (logsumexp computes in float32 and truncates) or take
# dtype=.
MASKED_I64_VALUES = [
    ("sum", lambda x, m: M.sum(x, 1, mask=m)),
    ("cumsum", lambda x, m: M.cumsum(x, 0, mask=m)),
    ("amax", lambda x, m: M.amax(x, 1, mask=m)),
    ("prod", lambda x, m: M.prod(x, 0, mask=m)),
    ("mean", lambda x, m: M.mean(x, 1, dtype=f64, mask=m)),
    ("logsumexp", lambda x, m: M.logsumexp(x, 1, mask=m)),
]


def masked_f64_grad_case(fn):
    def build(g):
        x, m, mb = masked_f64_inputs(g)
        return value_and_grad(g, fn, [x, m, mb])

    return build


def masked_f64_value_case(fn):
    def build(g):
        x, m, mb = masked_f64_inputs(g)
        return [x, m, mb], [fn(x, m, mb)]

    return build


def masked_f32_grad_case(fn):
    def build(g):
        x, _, m = masked_f32_inputs(g)
        return value_and_grad(g, fn, [x, m])

    return build


def masked_i64_value_case(fn):
    def build(g):
        x, m = masked_i64_inputs(g)
        return [x, m], [fn(x, m)]

    return build


for name, fn in MASKED_F64_GRADS:
    case(f"masked_{name}_f64")(masked_f64_grad_case(fn))
for name, fn in MASKED_F64_VALUES:
    case(f"masked_{name}_f64")(masked_f64_value_case(fn))
for name, fn in MASKED_F32_GRADS:
    case(f"masked_{name}_f32")(masked_f32_grad_case(fn))
for name, fn in MASKED_I64_VALUES:
    case(f"masked_{name}_i64")(masked_i64_value_case(fn))


@case("masked_logaddexp_f32")
def _(g):
    x, y, m = masked_f32_inputs(g)
    return value_and_grad(
        g, lambda a, b, m: M.logaddexp(a, b, input_mask=m, other_mask=m[0]), [x, y, m], wrt=(0, 1)
    )


# ---- recurrent layers (src/nn/rnn.cpp): torch's cells and sequence ops ----
def rnn_params(g, gates, input_size, hidden, layers=1, directions=1, bias=True):
    """at::lstm's params: per layer and direction w_ih, w_hh[, b_ih, b_hh]."""
    params = []
    for layer in range(layers):
        layer_input = input_size if layer == 0 else hidden * directions
        for _ in range(directions):
            params += [randn(g, gates * hidden, layer_input), randn(g, gates * hidden, hidden)]
            if bias:
                params += [randn(g, gates * hidden), randn(g, gates * hidden)]
    return [p * 0.5 for p in params]


def flat(*outputs):
    """Every output in one tensor, so that one gradient reaches them all."""
    return torch.cat([o.flatten() for o in outputs])


def every_input(inputs):
    return tuple(range(len(inputs)))


@case("rnn_tanh_cell_f32")
def _(g):
    inputs = [randn(g, 3, 4), randn(g, 3, 5), *rnn_params(g, 1, 4, 5)]
    return value_and_grad(g, torch.rnn_tanh_cell, inputs, every_input(inputs))


@case("rnn_relu_cell_f32")
def _(g):
    inputs = [randn(g, 3, 4), randn(g, 3, 5), *rnn_params(g, 1, 4, 5)]
    return value_and_grad(g, torch.rnn_relu_cell, inputs, every_input(inputs))


@case("lstm_cell_f32")
def _(g):
    inputs = [randn(g, 3, 4), randn(g, 3, 5), randn(g, 3, 5), *rnn_params(g, 4, 4, 5)]
    fn = lambda x, h, c, *p: flat(*torch.lstm_cell(x, [h, c], *p))  # noqa: E731
    return value_and_grad(g, fn, inputs, every_input(inputs))


@case("gru_cell_f32")
def _(g):
    inputs = [randn(g, 3, 4), randn(g, 3, 5), *rnn_params(g, 3, 4, 5)]
    return value_and_grad(g, torch.gru_cell, inputs, every_input(inputs))


@case("rnn_tanh_f32")
def _(g):
    # two layers, both directions, (L, N, input_size)
    inputs = [randn(g, 4, 2, 3), randn(g, 4, 2, 5), *rnn_params(g, 1, 3, 5, 2, 2)]
    fn = lambda x, h, *p: flat(*torch.rnn_tanh(x, h, p, True, 2, 0.0, False, True, False))  # noqa: E731
    return value_and_grad(g, fn, inputs, every_input(inputs))


@case("rnn_relu_f32")
def _(g):
    # one layer without biases, batch_first
    inputs = [randn(g, 2, 4, 3), randn(g, 1, 2, 5), *rnn_params(g, 1, 3, 5, bias=False)]
    fn = lambda x, h, *p: flat(*torch.rnn_relu(x, h, p, False, 1, 0.0, False, False, True))  # noqa: E731
    return value_and_grad(g, fn, inputs, every_input(inputs))


@case("lstm_f32")
def _(g):
    # two layers, both directions, (L, N, input_size)
    h, c = randn(g, 4, 2, 5), randn(g, 4, 2, 5)
    inputs = [randn(g, 4, 2, 3), h, c, *rnn_params(g, 4, 3, 5, 2, 2)]
    fn = lambda x, h, c, *p: flat(*torch.lstm(x, [h, c], p, True, 2, 0.0, False, True, False))  # noqa: E731
    return value_and_grad(g, fn, inputs, every_input(inputs))


@case("gru_f32")
def _(g):
    # two layers, both directions, batch_first
    inputs = [randn(g, 2, 4, 3), randn(g, 4, 2, 5), *rnn_params(g, 3, 3, 5, 2, 2)]
    fn = lambda x, h, *p: flat(*torch.gru(x, h, p, True, 2, 0.0, False, True, True))  # noqa: E731
    return value_and_grad(g, fn, inputs, every_input(inputs))


def main():
    if sys.byteorder != "little":
        sys.exit("gen_goldens.py: run on a little-endian machine")
    write(OUT_PATH, build(), MAX_BYTES, "gen_goldens.py", len(CASES))


if __name__ == "__main__":
    main()
