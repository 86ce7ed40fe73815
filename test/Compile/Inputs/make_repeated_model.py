#!/usr/bin/env python3
"""Writes repeated.onnx into a folder: three blocks tanh(a - mean(a)) of
a = h @ W + b over each row, the first two of width 256 (the same kernels,
as a model's repeated layers have), the third of width 128; and numpy's
float64 reference (x.npy -> y.npy).
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out):
    rng = np.random.default_rng(11)
    widths = [256, 256, 128]
    nodes, inits = [], []
    h, d = "x", 256
    x = rng.standard_normal((64, d)).astype(np.float32)
    ref = x.astype(np.float64)
    for i, n in enumerate(widths):
        w = (rng.standard_normal((d, n)) / np.sqrt(d)).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        y = "y" if i == len(widths) - 1 else f"s{i}"
        nodes += [helper.make_node("MatMul", [h, f"w{i}"], [f"m{i}"], name=f"fc{i}"),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"bias{i}"),
                  helper.make_node("ReduceMean", [f"a{i}"], [f"r{i}"], name=f"mean{i}",
                                   axes=[-1]),
                  helper.make_node("Sub", [f"a{i}", f"r{i}"], [f"c{i}"], name=f"center{i}"),
                  helper.make_node("Tanh", [f"c{i}"], [y], name=f"tanh{i}")]
        a = ref @ w + b
        ref = np.tanh(a - a.mean(axis=-1, keepdims=True))
        h, d = y, n
    graph = helper.make_graph(
        nodes, "repeated",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 128])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "repeated.onnx"))
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "y.npy"), ref)


if __name__ == "__main__":
    main(sys.argv[1])
