#!/usr/bin/env python3
"""Writes seven cases in the ONNX backend-test layout for test/Gpu/lm-head.test.

Usage: make_lm_head_cases.py OUT_DIR

lm_head          y = x @ Transpose(w), x bf16 [2, 4, 64], w bf16 [37, 64]: a
                 tied embedding's output projection with N = 37 (74-byte
                 rows). On the cuda target the partitioner reads w
                 transposed in place (Gemm transB); the runtime runs a large
                 such product in parts whose rows are 16-byte aligned
                 (docs/gpu.md, "Transposed weights").
linear_37        y = x @ w + b, x bf16 [2, 4, 64], w a constant [64, 37] (a
                 Linear exported with its weight pretransposed), b [37]. On
                 the cuda target w is stored [37, 64] at compile time (rows
                 of 128 bytes, which the runtime's row classes need) and b
                 becomes the product's bias.
gemm_37          y = Gemm(x, w, b, transB = 1), x bf16 [8, 64], w a constant
                 [37, 64], b [37]: on the cuda target w stays [37, 64].
slice_rows       y = x[:, :37] of x bf16 [8, 40]: rows of 74 bytes, which
                 the slice writes 16 bytes at a time over the flat index.
gelu_tanh_bf16   y = gelu_new(x @ w + b) as GPT-2's code writes it, in bf16:
                 0.5 * h * (1 + tanh(0.7978845608 * (h + 0.044715 * h*h*h)))
                 with the constants rounded to bf16. The graph layer makes
                 it Gelu(approximate = "tanh"); on the cuda target cuBLASLt
                 fuses it with the bias.
gelu_erf_bf16    y = x * 0.5 * (1 + erf(x / sqrt(2))) in bf16 as BERT's
                 code writes it, x ~ N(0, 2) [16, 512]: the graph layer makes
                 it Gelu, computed in f32 and rounded once. (Computed in
                 bf16, 1 + erf(x / sqrt 2) cancels for x below about -2:
                 the result is 6% off at x = -2.5 and 0 instead of -1.3e-4
                 at x = -4.)
gelu_all_bf16    the same pattern over every finite bf16 value ([255, 256]),
                 against float64's exact GELU: strata's bf16 GELU rounds as
                 float64's does wherever |GELU(x)| > 1e-30 (scripts/
                 fit-gelu-bf16.py).

The references are float64 computations on the bf16-rounded inputs (the GELU
with the model's rounded constants), stored in bf16.
"""

import math
import sys

import numpy as np
from onnx import helper, numpy_helper

from onnx_cases import BF16, bf16, save_case as save_typed_case, tensor


def save_case(out, name, nodes, inputs, output, initializers=()):
    """inputs, initializers: (name, array) pairs; output: (name, array);
    all bf16."""
    save_typed_case(out, name, nodes, [(n, a, BF16) for n, a in inputs],
                    [(output[0], output[1], BF16)],
                    [(n, a, BF16) for n, a in initializers])


def constant(name, value):
    return helper.make_node("Constant", [], [name], name=name,
                            value=tensor(np.array(value), name))


def indices(name, values):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(
                                np.array(values, np.int64), name))


def main(out):
    rng = np.random.default_rng(7)
    x = bf16(rng.standard_normal((2, 4, 64)))
    w = bf16(0.125 * rng.standard_normal((37, 64)))
    save_case(out, "lm_head",
              [helper.make_node("Transpose", ["w"], ["wt"], name="wte_t",
                                perm=[1, 0]),
               helper.make_node("MatMul", ["x", "wt"], ["y"], name="logits")],
              [("x", x), ("w", w)], ("y", x @ w.T))

    x = bf16(rng.standard_normal((2, 4, 64)))
    w = bf16(0.125 * rng.standard_normal((64, 37)))
    b = bf16(0.1 * rng.standard_normal(37))
    save_case(out, "linear_37",
              [helper.make_node("MatMul", ["x", "w"], ["xw"], name="fc"),
               helper.make_node("Add", ["xw", "b"], ["y"], name="bias")],
              [("x", x)], ("y", x @ w + b),
              [("w", w), ("b", b)])

    x = bf16(rng.standard_normal((8, 64)))
    w = bf16(0.125 * rng.standard_normal((37, 64)))
    b = bf16(0.1 * rng.standard_normal(37))
    save_case(out, "gemm_37",
              [helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc",
                                transB=1)],
              [("x", x)], ("y", x @ w.T + b),
              [("w", w), ("b", b)])

    x = bf16(rng.standard_normal((8, 40)))
    save_case(out, "slice_rows",
              [indices("starts", [0]), indices("ends", [37]),
               indices("axes", [1]),
               helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["y"],
                                name="take")],
              [("x", x)], ("y", x[:, :37]))

    x = bf16(rng.standard_normal((16, 64)))
    w = bf16(0.125 * rng.standard_normal((64, 96)))
    b = bf16(0.1 * rng.standard_normal(96))
    c_half, c_one = bf16(0.5), bf16(1.0)
    c_root, c_cube = bf16(np.sqrt(2 / np.pi)), bf16(0.044715)
    h = x @ w + b
    y = c_half * h * (c_one + np.tanh(c_root * (h + c_cube * h * h * h)))
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"], name="fc"),
             helper.make_node("Add", ["xw", "b"], ["h"], name="bias"),
             constant("half", 0.5), constant("one", 1.0),
             constant("root", np.sqrt(2 / np.pi)), constant("cube", 0.044715),
             helper.make_node("Mul", ["h", "h"], ["h2"], name="square"),
             helper.make_node("Mul", ["h", "h2"], ["h3"], name="third"),
             helper.make_node("Mul", ["cube", "h3"], ["ch3"], name="times"),
             helper.make_node("Add", ["h", "ch3"], ["inner"], name="sum"),
             helper.make_node("Mul", ["root", "inner"], ["arg"], name="scale"),
             helper.make_node("Tanh", ["arg"], ["t"], name="tanh"),
             helper.make_node("Add", ["one", "t"], ["onep"], name="plus_one"),
             helper.make_node("Mul", ["h", "onep"], ["hp"], name="gate"),
             helper.make_node("Mul", ["half", "hp"], ["y"], name="half_of")]
    save_case(out, "gelu_tanh_bf16", nodes, [("x", x), ("w", w), ("b", b)],
              ("y", y))

    x = bf16(2 * rng.standard_normal((16, 512)))
    c_sqrt2 = bf16(np.sqrt(2))
    erf = np.vectorize(math.erf)
    y = x * c_half * (c_one + erf(x / c_sqrt2))
    nodes = [constant("sqrt2", np.sqrt(2)), constant("one", 1.0),
             constant("half", 0.5),
             helper.make_node("Div", ["x", "sqrt2"], ["s"], name="scale"),
             helper.make_node("Erf", ["s"], ["e"], name="erf"),
             helper.make_node("Add", ["e", "one"], ["f"], name="plus_one"),
             helper.make_node("Mul", ["x", "f"], ["g"], name="gate"),
             helper.make_node("Mul", ["g", "half"], ["y"], name="half_of")]
    save_case(out, "gelu_erf_bf16", nodes, [("x", x)], ("y", y))

    # Every finite bf16 value through the same pattern, against float64's
    # exact GELU (the graph layer makes the pattern Gelu, exact: 1/sqrt(2)
    # rather than the bf16 constant's reciprocal).
    words = np.arange(65536, dtype=np.uint32)
    x = (words << np.uint32(16)).view(np.float32)
    x = x[np.isfinite(x)].astype(np.float64).reshape(255, 256)
    erfc = np.vectorize(math.erfc)
    save_case(out, "gelu_all_bf16", nodes, [("x", x)],
              ("y", x * 0.5 * erfc(-x / math.sqrt(2))))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_lm_head_cases.py OUT_DIR")
    main(sys.argv[1])
