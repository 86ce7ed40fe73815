"""Writes models with ONNX Gradient ops (ai.onnx.preview.training) and
their analytic gradients, for test/Compile/gradient.test.

grad.onnx: y = (a + b) * a / c - a with b [3] broadcast to a, c [2, 3];
           outputs y, dy/da, dy/db, dy/dc (of sum(y)).
grad_exp.onnx: y = exp(a): no derivative rule in strata, an error.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def model(nodes, inputs, outputs, path):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    m = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17),
        helper.make_opsetid("ai.onnx.preview.training", 1)])
    onnx.save(m, path)


def info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def main():
    out = sys.argv[1]
    nodes = [
        helper.make_node("Add", ["a", "b"], ["s"], name="add"),
        helper.make_node("Mul", ["s", "a"], ["m"], name="mul"),
        helper.make_node("Div", ["m", "c"], ["q"], name="div"),
        helper.make_node("Sub", ["q", "a"], ["y"], name="sub"),
        helper.make_node("Gradient", ["a", "b", "c"], ["da", "db", "dc"],
                         domain="ai.onnx.preview.training", name="grad",
                         xs=["a", "b", "c"], y="y"),
    ]
    model(nodes, [info("a", [2, 3]), info("b", [3]), info("c", [2, 3])],
          [info("y", [2, 3]), info("da", [2, 3]), info("db", [3]),
           info("dc", [2, 3])], os.path.join(out, "grad.onnx"))
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    c = (rng.random((2, 3)) + 0.5).astype(np.float32)
    for name, value in [("a", a), ("b", b), ("c", c)]:
        np.save(os.path.join(out, f"grad_{name}.npy"), value)
    a64, b64, c64 = a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)
    # y = (a + b) a / c - a
    np.save(os.path.join(out, "grad_da.npy"),
            ((2 * a64 + b64) / c64 - 1).astype(np.float32))
    np.save(os.path.join(out, "grad_db.npy"),
            (a64 / c64).sum(axis=0).astype(np.float32))
    np.save(os.path.join(out, "grad_dc.npy"),
            (-(a64 + b64) * a64 / c64 ** 2).astype(np.float32))

    model([helper.make_node("Exp", ["a"], ["y"], name="exp"),
           helper.make_node("Gradient", ["a"], ["da"],
                            domain="ai.onnx.preview.training", name="grad",
                            xs=["a"], y="y")],
          [info("a", [2, 3])], [info("y", [2, 3]), info("da", [2, 3])],
          os.path.join(out, "grad_exp.onnx"))


if __name__ == "__main__":
    main()
