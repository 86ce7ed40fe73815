#!/usr/bin/env python3
"""Writes the models and tensors test/Compile's tests use into a folder.

mlp.onnx: MatMul + Add + Relu + Softmax with a symbolic batch, and numpy's
float64 reference for two batch sizes (x3.npy -> y3.npy, x5.npy -> y5.npy).
nonzero.onnx: NonZero, whose output shape depends on values, cast and given
  to Hardmax: the ops after NonZero run as host kernels, and Hardmax has none
  (a compile error).
case/: one conformance case in the ONNX backend-test layout whose expected
output is correct, and bad_case/ whose expected output is wrong.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model, path):
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def mlp(out):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((8, 6)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"),
         helper.make_node("Add", ["h", "b"], ["hb"], name="bias"),
         helper.make_node("Relu", ["hb"], ["r"], name="act"),
         helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=-1)],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 6])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "mlp.onnx"))
    for n in (3, 5):
        x = rng.standard_normal((n, 8)).astype(np.float32)
        r = np.maximum(x.astype(np.float64) @ w + b, 0)
        e = np.exp(r - r.max(axis=-1, keepdims=True))
        np.save(os.path.join(out, f"x{n}.npy"), x)
        np.save(os.path.join(out, f"y{n}.npy"), e / e.sum(axis=-1, keepdims=True))
    return w, b


def rows(out):
    """rows.onnx: a kernel big enough to be split into row blocks over
    threads: (x * 2 + b) -> LayerNorm -> Softmax -> ReduceSum(axis 1,
    keepdims), with numpy's float64 reference."""
    rng = np.random.default_rng(11)
    n, d = 256, 96
    b = rng.standard_normal(d).astype(np.float32)
    scale = rng.standard_normal(d).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["m"], name="scale2"),
         helper.make_node("Add", ["m", "b"], ["a"], name="shift"),
         helper.make_node("LayerNormalization", ["a", "scale"], ["ln"],
                          name="norm", axis=-1, epsilon=1e-5),
         helper.make_node("Softmax", ["ln"], ["sm"], name="softmax", axis=1),
         helper.make_node("ReduceSum", ["sm", "axes"], ["s"], name="sum",
                          keepdims=1),
         helper.make_node("Add", ["sm", "s"], ["y"], name="out")],
        "rows",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, d])],
        [numpy_helper.from_array(np.array(2.0, np.float32), "two"),
         numpy_helper.from_array(b, "b"), numpy_helper.from_array(scale, "scale"),
         numpy_helper.from_array(np.array([1], np.int64), "axes")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "rows.onnx"))
    x = rng.standard_normal((n, d)).astype(np.float32)
    a = x.astype(np.float64) * 2 + b
    ln = (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + 1e-5) * scale
    e = np.exp(ln - ln.max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    np.save(os.path.join(out, "rows_x.npy"), x)
    np.save(os.path.join(out, "rows_y.npy"), sm + sm.sum(1, keepdims=True))


def nonzero(out):
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["y"], name="find"),
         helper.make_node("Cast", ["y"], ["f"], name="as_float",
                          to=TensorProto.FLOAT),
         helper.make_node("Hardmax", ["f"], ["z"], name="twice")], "nonzero",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, None])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "nonzero.onnx"))


def case(out, name, w, b, wrong):
    d = os.path.join(out, "suite", name)
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    save(onnx.load(os.path.join(out, "mlp.onnx")), os.path.join(d, "model.onnx"))
    x = np.load(os.path.join(out, "x3.npy"))
    y = np.load(os.path.join(out, "y3.npy")).astype(np.float32)
    if wrong:
        y = y + 0.01
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    w, b = mlp(out)
    nonzero(out)
    rows(out)
    case(out, "test_good", w, b, wrong=False)
    case(out, "test_bad", w, b, wrong=True)


if __name__ == "__main__":
    main()
