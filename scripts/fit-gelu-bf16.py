#!/usr/bin/env python3
"""Fits the polynomial of strata's bf16 GELU (lib/Conversion/GraphToLinalg/
Elementwise.cpp, buildGeluBf16) and checks it on every bf16 input.

GELU(x) = x * Phi(x), and Phi(-t) = erfc(t / sqrt 2) / 2 for t = |x|, so with
E = Phi(-t): GELU(x) = x * E for x < 0 and x * (1 - E) for x >= 0, with no
cancellation on either side. log2 Phi(-t) is smooth on [0, 14.5] and
-156.9 at 14.5, so exp2 of it is 0 in f32 there (as GELU(x) is -0 or x in
bf16 from there on): a degree-10 polynomial in s = min(t, 14.5) * 2/14.5 - 1,
fitted by least squares at Chebyshev nodes with weights 1/(1 + t), is close
enough that every finite bf16 input rounds as float64's GELU does (--check).
The weights spend the fit's accuracy at small t, where a result can lie
closest to a rounding boundary relative to E's error (x = 0.0030975342:
GELU(x) is 1.3e-8, 8e-6 of itself, above the midpoint of two bf16 values),
rather than in the far negative tail, where x * E is tiny and rounds the
same over a wider range of E. Unweighted, degree 13 was the lowest that
passed (the kernels had degree 14); weighted, degree 10 passes, also with every
exp2 result moved by up to 2 ulps at random (--check-ulps: the GPU's
ex2.approx's error bound), and degree 9 does not. Each degree is one FMA
per value, in the GEMM kernel's GELU loop and in every bf16 GELU kernel.
E = exp2(P(s)), computed as exp2(P(s) + 24) * 2^-24 with the 24 in the
constant term, so that the GPU's exp2 may flush subnormal results
(ex2.approx.ftz): exp2(P + 24) is subnormal only where E is below 2^-150, 0
in f32 anyway.

Usage: fit-gelu-bf16.py [--check] [--check-ulps] [--source FILE]
prints the coefficients (a0 first); with --check, how many of the 65280
finite bf16 inputs round differently from float64's GELU when computed in f32
this way (numpy's float32 operations, exp2 correctly rounded: the CPU's);
with --check-ulps, the same 30 times with each exp2 result moved by a random
-2..2 ulps (the GPU's ex2.approx is within 2 ulps). With --source FILE
(lib/Conversion/GraphToLinalg/Elementwise.cpp), the coefficients are those
of FILE's kCoefficients instead of a new fit: the checks then test what the
compiler uses (test/Gpu/lm-head.test does).
"""
import functools
import math
import sys

import numpy as np

T, DEGREE, SHIFT = 14.5, 10, 24
erfc = np.vectorize(math.erfc)


def log2_phi_neg(t):
    return np.log2(0.5 * erfc(t / math.sqrt(2)))


def coefficients():
    n = 4000
    k = np.arange(n)
    t = (np.cos((2 * k + 1) * np.pi / (2 * n)) + 1) * T / 2
    c = np.polynomial.chebyshev.chebfit(t * 2 / T - 1, log2_phi_neg(t), DEGREE,
                                        w=1 / (1 + t))
    return np.polynomial.chebyshev.cheb2poly(c)


def to_bf16_bits(x):
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


@functools.lru_cache(maxsize=None)
def inputs_and_reference():
    """Every finite bf16 value (as f32), and float64's GELU of each rounded
    to bf16 (its bits): computed once for all of check_ulps's trials."""
    words = np.arange(65536, dtype=np.uint32)
    x = (words << 16).view(np.float32)
    x = x[np.isfinite(x)]
    xd = x.astype(np.float64)
    return x, to_bf16_bits(xd * 0.5 * erfc(-xd / math.sqrt(2)))


def check(a, exp2=np.exp2, quiet=False):
    f32 = np.float32
    x, ref = inputs_and_reference()
    # The kernels' multiply-adds are fused (math.fma): one rounding each,
    # emulated in float64, where the product of two f32 values is exact.
    def fma(p, q, r):
        return (p.astype(np.float64) * q + np.float64(r)).astype(f32)

    s = fma(np.minimum(np.abs(x), f32(T)), f32(2 / T), f32(-1))
    a32 = a.astype(f32)
    a32[0] = f32(a[0] + SHIFT)
    h = np.full_like(s, a32[-1])
    for coefficient in a32[-2::-1]:
        h = fma(h, s, coefficient)
    e = exp2(h.astype(np.float64)).astype(f32)
    e = np.where(e < f32(2.0 ** -126), f32(0), e)  # subnormals flushed
    e = (e * f32(2.0 ** -SHIFT)).astype(f32)
    y = (x * np.where(x < 0, e, (f32(1) - e).astype(f32))).astype(f32)
    got = to_bf16_bits(y)
    refv = (ref.astype(np.uint32) << 16).view(np.float32)
    differ = got != ref
    large = differ & (np.abs(refv) >= 1e-37)
    if not quiet:
        print(f"{differ.sum()} of {len(x)} bf16 inputs round differently from "
              f"float64's GELU, {large.sum()} of them with |GELU| >= 1e-37")
    return large.sum() == 0


def check_ulps(a, trials=30):
    rng = np.random.default_rng(1)

    def exp2_moved(h):
        e = np.exp2(h).astype(np.float32)
        bits = e.view(np.int32).astype(np.int64) + rng.integers(-2, 3, e.shape)
        moved = np.where(e > 0, bits, e.view(np.int32)).astype(np.int32)
        return moved.view(np.float32).astype(np.float64)

    failed = sum(not check(a, exp2_moved, quiet=True) for _ in range(trials))
    print(f"exp2 moved by up to 2 ulps at random: {failed} of {trials} trials "
          f"leave an input with |GELU| >= 1e-37 rounding differently")
    return failed == 0


def source_coefficients(path):
    with open(path) as f:
        text = f.read()
    start = text.index("kCoefficients[] = {")
    body = text[text.index("{", start) + 1:text.index("}", start)]
    a = np.array([float(v) for v in body.replace("\n", " ").split(",")])
    if len(a) != DEGREE + 1:
        sys.exit(f"{path}: {len(a)} coefficients, expected {DEGREE + 1}")
    return a


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--source" in args:
        a = source_coefficients(args[args.index("--source") + 1])
    else:
        a = coefficients()
    for i, v in enumerate(a):
        print(f"a{i} = {v:.17g}")
    ok = True
    if "--check" in args:
        ok = check(a) and ok
    if "--check-ulps" in args:
        ok = check_ulps(a) and ok
    sys.exit(0 if ok else 1)
