#!/usr/bin/env python3
"""Writes math.onnx, one elementwise op per output over the same input, and
a checker of strata's outputs against numpy's float64 (test/Compile/math.test).

The CPU target expands exp, log, tanh, erf and the like into polynomials
(strata-approximate-math); this holds them to a bound in units in the last
place of float32, over the whole range the functions see in models: from
where exp underflows to where it overflows, tiny and huge logs, tanh and
erf through their saturation.

    make_math_cases.py OUT            writes OUT/math.onnx and OUT/math_x.npy
    make_math_cases.py --check OUT    compares OUT/out/*.npy, exit 1 beyond the bounds
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

N = 4096
# op -> (ONNX op, numpy float64 reference, input transform, bound in ulps).
# The bounds are the approximations' documented accuracy with a margin;
# each case prints what it measured.
CASES = {
    "exp": ("Exp", np.exp, lambda x: x * 90.0, 4),
    "log": ("Log", np.log, lambda x: np.exp(x * 80.0), 3),
    "tanh": ("Tanh", np.tanh, lambda x: x * 10.0, 6),
    "sigmoid": ("Sigmoid", lambda v: 1.0 / (1.0 + np.exp(-v)), lambda x: x * 30.0, 4),
    "erf": ("Erf", np.vectorize(math.erf), lambda x: x * 5.0, 6),
}


def inputs():
    # Evenly over [-1, 1] plus its ends, so each transform spans its range.
    return np.linspace(-1.0, 1.0, N).astype(np.float32)


def write(out):
    x = inputs()
    nodes, outputs = [], []
    for name, (op, _, transform, _) in CASES.items():
        # Each op reads its own input, the mapped values (a Mul or an Exp
        # in the graph would be computed by strata too).
        nodes.append(helper.make_node(op, [f"in_{name}"], [name], name=name))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [N]))
    graph = helper.make_graph(
        nodes, "math",
        [helper.make_tensor_value_info(f"in_{n}", TensorProto.FLOAT, [N]) for n in CASES],
        outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "math.onnx"))
    for name, (_, _, transform, _) in CASES.items():
        np.save(os.path.join(out, f"in_{name}.npy"), transform(x.astype(np.float64)).astype(np.float32))


def ulps(actual, expected):
    """|actual - expected| in float32 ulps of the expected value."""
    expected32 = expected.astype(np.float32)
    spacing = np.spacing(np.abs(expected32)).astype(np.float64)
    finite = np.isfinite(expected)
    diff = np.where(finite, np.abs(actual.astype(np.float64) - expected), 0.0)
    return np.where(finite, diff / np.maximum(spacing, np.finfo(np.float32).tiny), 0.0)


def check(out):
    failed = False
    for name, (_, reference, _, bound) in CASES.items():
        x = np.load(os.path.join(out, f"in_{name}.npy")).astype(np.float64)
        y = np.load(os.path.join(out, "out", f"{name}.npy"))
        expected = reference(x)
        # Where float32 overflows or underflows, the answer is inf or 0.
        big = np.abs(expected) > np.finfo(np.float32).max
        if np.any(y[big] != np.copysign(np.inf, expected[big])):
            print(f"{name}: overflow not inf")
            failed = True
        err = ulps(y[~big], expected[~big])
        worst = int(np.argmax(err))
        print(f"{name}: max {err.max():.2f} ulp (at x = {x[~big][worst]:.6g}), bound {bound}")
        if err.max() > bound:
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        check(sys.argv[2])
    else:
        write(sys.argv[1])
