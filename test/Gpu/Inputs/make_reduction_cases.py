#!/usr/bin/env python3
"""Writes column-reduction cases in the ONNX backend-test layout for
test/Gpu/split-reductions.test: reductions over axes the last axis follows,
long enough for strata-split-reductions to compute them in stages
(docs/gpu.md, "Long column reductions").

Usage: make_reduction_cases.py OUT_DIR

se_mean_f32     ReduceMean over the points of [2, 12544, 24] (axis 1, kept):
                a squeeze-and-excitation's mean at 112x112 (three stages).
pool_sum_f32    ReduceSum over axes 1 and 2 of [2, 56, 56, 8], not kept:
                two contiguous axes (3,136 rows).
max_neg_f32     ReduceMax over axis -2 of [1, 4096, 12] (negative axis).
min_f32         ReduceMin over axis 0 of [1000, 6]: R = 1000 = 8 x 125.
se_mean_f16     ReduceMean over the points of f16 [1, 3136, 40]: partial
                means in f32, the result rounded to f16 once.
prime_f32       ReduceSum over axis 1 of [2, 257, 16]: 257 is prime, no
                chunk divides it, the reduction stays whole.

The references are float64 computations on the stored inputs, stored in the
outputs' types.
"""
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_cases import F16, F32, I64, round_to, save_case  # noqa: E402


def main(out):
    rng = np.random.default_rng(7)

    def case(name, op, shape, axes, keepdims, dtype=F32):
        x = round_to(rng.standard_normal(shape), dtype)
        if op == "ReduceSum":
            # ReduceSum takes its axes as an input from opset 13.
            nodes = [helper.make_node(op, ["x", "axes"], ["y"],
                                      keepdims=keepdims)]
            inits = [("axes", np.array(axes), I64)]
        else:
            nodes = [helper.make_node(op, ["x"], ["y"], axes=axes,
                                      keepdims=keepdims)]
            inits = []
        fn = {"ReduceMean": np.mean, "ReduceSum": np.sum,
              "ReduceMax": np.max, "ReduceMin": np.min}[op]
        y = fn(x, axis=tuple(axes), keepdims=bool(keepdims))
        save_case(out, name, nodes, [("x", x, dtype)],
                  [("y", round_to(y, dtype), dtype)], inits)

    case("se_mean_f32", "ReduceMean", (2, 12544, 24), [1], 1)
    case("pool_sum_f32", "ReduceSum", (2, 56, 56, 8), [1, 2], 0)
    case("max_neg_f32", "ReduceMax", (1, 4096, 12), [-2], 1)
    case("min_f32", "ReduceMin", (1000, 6), [0], 0)
    case("se_mean_f16", "ReduceMean", (1, 3136, 40), [1], 1, F16)
    case("prime_f32", "ReduceSum", (2, 257, 16), [1], 1)


if __name__ == "__main__":
    main(sys.argv[1])
