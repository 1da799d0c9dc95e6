#!/usr/bin/env python3
"""Minimax fits behind the polynomials of src/backends/cpu/vec_math.h.

Each fit is a weighted Remez exchange in mpmath (40 digits), then rounded to
float; the printed float coefficients are the ones in the header. Their ulp
errors, measured on the rounded, float-evaluated form, are checked by
tests/backends/vec_math_test.cpp. Needs mpmath (pip install mpmath).

    python3 tools/fit_vec_math.py
"""

import struct

import mpmath as mp

mp.mp.dps = 40


def to_f32(v):
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def remez(f, w, a, b, powers, iters=30, grid=1500):
    """p(u) = sum c_j u^powers[j] on [a, b] minimising max |w(u) (p(u) - f(u))|."""
    n = len(powers)
    a, b = mp.mpf(a), mp.mpf(b)
    ref = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * i / n) for i in range(n, -1, -1)]
    grid_u = [a + (b - a) * mp.mpf(i) / grid for i in range(grid + 1)]
    grid_f = [f(u) for u in grid_u]
    grid_w = [w(u) for u in grid_u]
    for _ in range(iters):
        m = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for i, u in enumerate(ref):
            for j, p in enumerate(powers):
                m[i, j] = u**p
            m[i, n] = (-1) ** i / w(u)
            rhs[i] = f(u)
        sol = mp.lu_solve(m, rhs)
        c = [sol[j] for j in range(n)]
        err = [
            wu * (sum(cj * u**p for cj, p in zip(c, powers)) - fu)
            for u, fu, wu in zip(grid_u, grid_f, grid_w)
        ]
        # Alternating extrema of the error become the next reference.
        ext = [0] + [
            i for i in range(1, grid) if (err[i] - err[i - 1]) * (err[i + 1] - err[i]) <= 0
        ]
        ext.append(grid)
        alt = []
        for i in ext:
            if alt and mp.sign(err[i]) == mp.sign(err[alt[-1]]):
                if abs(err[i]) > abs(err[alt[-1]]):
                    alt[-1] = i
            else:
                alt.append(i)
        while len(alt) > n + 1:
            alt.pop(0 if abs(err[alt[0]]) < abs(err[alt[-1]]) else -1)
        if len(alt) < n + 1:
            break
        ref = [grid_u[i] for i in alt]
    return c, max(abs(e) for e in err)


def show(name, c, maxerr):
    print(f"{name}: weighted max error {mp.nstr(maxerr, 3)}")
    print("  " + ", ".join(f"{to_f32(v):.9e}f" for v in c))


def main():
    # normal_cdf: log2(erfc(u / sqrt 2)) = R(u) on [0, 4 sqrt 2], R(0) = 0;
    # absolute error in R, i.e. relative to erfc.
    show(
        "normal_cdf R(u)",
        *remez(
            lambda u: mp.log(mp.erfc(u / mp.sqrt(2))) / mp.log(2),
            lambda u: 1,
            mp.mpf("1e-30"),
            4 * mp.sqrt(2),
            range(1, 12),
            grid=2000,
        ),
    )

    # exp2_nonpositive: 2^f = 1 + f P(f) on [-1/2, 1/2], relative to 2^f.
    show(
        "exp2 P(f)",
        *remez(
            lambda f: mp.power(2, f) - 1,
            lambda f: 1 / mp.power(2, f),
            mp.mpf(-0.5),
            mp.mpf(0.5),
            range(1, 7),
            grid=2000,
        ),
    )

    # tanh(t) = t + t s P(s), s = t^2 <= 1: fit s P(s) = tanh(t) / t - 1,
    # relative to tanh.
    def th(s):
        t = mp.sqrt(s)
        return mp.tanh(t) / t - 1

    show("tanh P(s)", *remez(th, lambda s: 1 / (1 + th(s)), mp.mpf("1e-30"), 1, range(1, 8)))

    # log(1 + f) = f + f^2 P(f) on [sqrt(1/2) - 1, sqrt(2) - 1], relative to
    # log(1 + f).
    lo, hi = mp.sqrt(2) / 2 - 1, mp.sqrt(2) - 1
    show(
        "log P(f)",
        *remez(
            lambda f: mp.log1p(f) - f,
            lambda f: 1 / abs(mp.log1p(f)) if f != 0 else mp.mpf(10) ** 20,
            lo,
            hi,
            range(2, 11),
            grid=1501,
        ),
    )


if __name__ == "__main__":
    main()
