#!/usr/bin/env python3
"""make_softmax.py DIR: softmax.onnx, y = softmax(x, axis=-1) with x [3, 4, 384]
(attention scores' rows), x.npy and the expected y.npy (numpy, in float64).
Three rows hold what softmax must keep: -inf scores (masked keys, exp 0),
a NaN (the row becomes NaN) and +inf (inf - inf is NaN: the row too)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
shape = [3, 4, 384]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
graph = helper.make_graph([helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=-1)],
                          "softmax", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, os.path.join(out, "softmax.onnx"))
rng = np.random.default_rng(0)
xv = (rng.standard_normal(shape) * 4).astype(np.float32)
xv[0, 1, 100:] = -np.inf
xv[1, 2, 7] = np.nan
xv[2, 3, 300] = np.inf
x64 = xv.astype(np.float64)
with np.errstate(invalid="ignore"):
    e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
    want = e / e.sum(axis=-1, keepdims=True)
np.save(os.path.join(out, "x.npy"), xv)
np.save(os.path.join(out, "y.npy"), want.astype(np.float32))
