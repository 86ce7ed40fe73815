#!/usr/bin/env python3
"""Writes the cases of test/Gpu/gemm.test in the ONNX backend-test layout:
matrix products whose epilogue the GEMM kernel fuses on Hopper (Gemm.h,
GpuGemm.cpp; docs/gpu.md "GEMM with a fused epilogue").

Usage: make_gemm_cases.py OUT_DIR

gelu_bf16          y = gelu(x @ w + b) as BERT's code writes the GELU
                   (x * 0.5 * (1 + erf(x / sqrt 2))), x bf16 [2, 128, 320],
                   w a constant [320, 256], b [256]: 256 rows, five steps of
                   K, two tile columns (tiles of 128: a GELU at K < 4096).
gelu_f16           the same in f16, x [384, 128], w [128, 384]: three tile
                   rows (a group of tile rows smaller than 8), two K steps.
gelu_k64_bf16      x [128, 64], w [64, 128]: one tile, one step of K.
gelu_k2048_bf16    x [128, 2048], w [2048, 256]: 32 steps of K, more than
                   the kernel's stages (its ring of them turns over five
                   times); long enough that the GEMM kernel takes it from
                   cuBLASLt, whose epilogue would leave the GELU.
gelu_k4096_bf16    x [128, 4096], w [4096, 256]: at K >= 4096 even a GELU
                   takes the wide tiles, 128x256 (both consumer warpgroups
                   on each tile, 64 rows each): one tile, 64 steps of K, the
                   biased tile left in shared memory for the producer
                   warpgroup's warps 2 and 3, which apply the GELU there and
                   store it (the handoff); a block's last tile, as this
                   one, they share with the consumers.
gelu_k4096_tiles6_bf16
                   x [384, 4096], w [4096, 512]: 6 such tiles; with
                   STRATA_CUDA_PERSISTENT_BLOCKS=4 two blocks take two,
                   a handoff and then a last tile.
gelu_tiles144_bf16 x [1536, 64], w [64, 1536]: 144 tiles, more than an
                   H100's or H200's SMs, so some blocks take two (one per
                   consumer warpgroup).
gelu_tiles300_bf16 x [2560, 128], w [128, 1920]: 300 tiles, more than
                   twice the SMs, so some consumer warpgroups take two and
                   write the second into the shared memory that the first's
                   TMA stores read.
gelu_residual_bf16 y = gelu(x @ w + b) + r, r [256, 128] an input: the
                   epilogue reads r per element.
gelu_residual_tiles300_bf16
                   the same with x [2560, 64], w [64, 1920]: 300 tiles, so
                   some consumers take two.
relu_wide_tiles160_bf16
                   y = relu(x @ w + b), x [2560, 128], w [128, 2048]: an
                   epilogue of adds and ReLUs takes the wide tiles at any K;
                   160 of them, so some blocks take two; the ReLU, which
                   reads only the biased product, applied in shared memory.
relu_residual_wide_bf16
                   y = relu(x @ w + b) + r, x [2560, 64], w [64, 2048]: 160
                   wide tiles, r read per element.
gelu_scale_bf16    y = gelu(x @ w) * s * t, s [128] per column, t [1] once,
                   without a bias.
gelu_rows100_bf16  x [100, 64]: 100 rows are fewer than the tile's 128, so
                   the product stays cuBLASLt's and the GELU a kernel of
                   its own (the reason says why).
gelu_rows200_bf16  x [200, 64]: in tiles of 128 rows, 56 of 256 would be
                   padding (more than 1/8 of 200): not the GEMM kernel.
gelu_rows1100_bf16 x [1100, 128], w [128, 256]: 9 tile rows, the last
                   holding 76 rows (A's TMA copies fill the rest with zeros,
                   the result's clip them; the portable form copies A's last
                   row again and checks its stores).
gelu_residual_rows1100_bf16
                   y = gelu(x @ w + b) + r, x [1100, 64], w [64, 384]: the
                   last tile row's residual read in bounds.
relu_residual_wide_rows1060_bf16
                   y = relu(x @ w + b) + r, x [1060, 64], w [64, 512]: wide
                   tiles; the last tile row holds 36 rows, so its second
                   consumer's 64 rows lie wholly past the result.
gelu_k4096_rows1100_bf16
                   x [1100, 4096], w [4096, 256]: the handoff's stores of a
                   tile partly past the result.

The references are float64 computations on the rounded inputs (the GELU
exact), stored in the cases' type.
"""

import math
import sys

import numpy as np
from onnx import helper

from onnx_cases import BF16, F16, round_to, save_case, tensor

ERF = np.vectorize(math.erf)


def gelu(h):
    return h * 0.5 * (1 + ERF(h / math.sqrt(2)))


def constant(name, value, dtype):
    return helper.make_node("Constant", [], [name], name=name,
                            value=tensor(np.array(value), name, dtype))


def gelu_nodes(src, dst, dtype, prefix=""):
    """BERT's GELU: Div, Erf, Add, Mul, Mul (the graph layer makes it Gelu)."""
    p = prefix
    return [constant(p + "sqrt2", np.sqrt(2), dtype),
            constant(p + "one", 1.0, dtype), constant(p + "half", 0.5, dtype),
            helper.make_node("Div", [src, p + "sqrt2"], [p + "s"],
                             name=p + "scale"),
            helper.make_node("Erf", [p + "s"], [p + "e"], name=p + "erf"),
            helper.make_node("Add", [p + "e", p + "one"], [p + "f"],
                             name=p + "plus_one"),
            helper.make_node("Mul", [src, p + "f"], [p + "g"], name=p + "gate"),
            helper.make_node("Mul", [p + "g", p + "half"], [dst],
                             name=p + "half_of")]


def product(rng, dtype, x_shape, n):
    k = x_shape[-1]
    x = round_to(rng.standard_normal(x_shape), dtype)
    w = round_to(rng.standard_normal((k, n)) / math.sqrt(k), dtype)
    b = round_to(0.5 * rng.standard_normal(n), dtype)
    return x, w, b


def biased_gelu_case(out, name, dtype, x_shape, n, seed):
    rng = np.random.default_rng(seed)
    x, w, b = product(rng, dtype, x_shape, n)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"], name="fc"),
             helper.make_node("Add", ["xw", "b"], ["h"], name="bias")]
    nodes += gelu_nodes("h", "y", dtype)
    save_case(out, name, nodes, [("x", x, dtype)],
              [("y", gelu(x @ w + b), dtype)],
              [("w", w, dtype), ("b", b, dtype)])


def residual_case(out, name, x_shape, n, seed):
    rng = np.random.default_rng(seed)
    x, w, b = product(rng, BF16, x_shape, n)
    r = round_to(rng.standard_normal((x_shape[0], n)), BF16)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"], name="fc"),
             helper.make_node("Add", ["xw", "b"], ["h"], name="bias")]
    nodes += gelu_nodes("h", "g1", BF16)
    nodes += [helper.make_node("Add", ["g1", "r"], ["y"], name="residual")]
    save_case(out, name, nodes, [("x", x, BF16), ("r", r, BF16)],
              [("y", gelu(x @ w + b) + r, BF16)],
              [("w", w, BF16), ("b", b, BF16)])


def relu_case(out, name, x_shape, n, seed, residual):
    rng = np.random.default_rng(seed)
    x, w, b = product(rng, BF16, x_shape, n)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"], name="fc"),
             helper.make_node("Add", ["xw", "b"], ["h"], name="bias"),
             helper.make_node("Relu", ["h"], ["g" if residual else "y"],
                              name="relu")]
    y = np.maximum(x @ w + b, 0)
    inputs = [("x", x, BF16)]
    if residual:
        r = round_to(rng.standard_normal((x_shape[0], n)), BF16)
        nodes.append(helper.make_node("Add", ["g", "r"], ["y"],
                                      name="residual"))
        y = y + r
        inputs.append(("r", r, BF16))
    save_case(out, name, nodes, inputs, [("y", y, BF16)],
              [("w", w, BF16), ("b", b, BF16)])


def main(out):
    biased_gelu_case(out, "gelu_bf16", BF16, (2, 128, 320), 256, 1)
    biased_gelu_case(out, "gelu_f16", F16, (384, 128), 384, 2)
    biased_gelu_case(out, "gelu_k64_bf16", BF16, (128, 64), 128, 3)
    biased_gelu_case(out, "gelu_rows100_bf16", BF16, (100, 64), 128, 4)
    biased_gelu_case(out, "gelu_k2048_bf16", BF16, (128, 2048), 256, 7)
    biased_gelu_case(out, "gelu_tiles144_bf16", BF16, (1536, 64), 1536, 8)
    biased_gelu_case(out, "gelu_tiles300_bf16", BF16, (2560, 128), 1920, 9)
    biased_gelu_case(out, "gelu_k4096_bf16", BF16, (128, 4096), 256, 11)
    biased_gelu_case(out, "gelu_k4096_tiles6_bf16", BF16, (384, 4096), 512, 14)
    biased_gelu_case(out, "gelu_rows200_bf16", BF16, (200, 64), 128, 15)
    biased_gelu_case(out, "gelu_rows1100_bf16", BF16, (1100, 128), 256, 16)
    biased_gelu_case(out, "gelu_k4096_rows1100_bf16", BF16, (1100, 4096), 256,
                     17)

    residual_case(out, "gelu_residual_bf16", (256, 192), 128, 5)
    residual_case(out, "gelu_residual_tiles300_bf16", (2560, 64), 1920, 10)
    relu_case(out, "relu_wide_tiles160_bf16", (2560, 128), 2048, 12, False)
    relu_case(out, "relu_residual_wide_bf16", (2560, 64), 2048, 13, True)
    residual_case(out, "gelu_residual_rows1100_bf16", (1100, 64), 384, 18)
    relu_case(out, "relu_residual_wide_rows1060_bf16", (1060, 64), 512, 19,
              True)

    rng = np.random.default_rng(6)
    x, w, _ = product(rng, BF16, (128, 128), 128)
    s = round_to(1 + 0.5 * rng.standard_normal(128), BF16)
    t = round_to(np.array([0.75]), BF16)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="fc")]
    nodes += gelu_nodes("h", "g1", BF16)
    nodes += [helper.make_node("Mul", ["g1", "col"], ["g2"], name="per_column"),
              helper.make_node("Mul", ["g2", "one_value"], ["y"], name="once")]
    save_case(out, "gelu_scale_bf16", nodes,
              [("x", x, BF16), ("col", s, BF16), ("one_value", t, BF16)],
              [("y", gelu(x @ w) * s * t, BF16)], [("w", w, BF16)])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_gemm_cases.py OUT_DIR")
    main(sys.argv[1])
