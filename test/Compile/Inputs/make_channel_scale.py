#!/usr/bin/env python3
"""make_channel_scale.py DIR: scale.onnx, y = x * s with x [4, 112, 32] and s [32]
(a squeeze-excite scale as a channels-last kernel computes it), and x.npy,
s.npy and the expected y.npy (numpy, float32)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 112, 32])
s = helper.make_tensor_value_info("s", TensorProto.FLOAT, [32])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 112, 32])
graph = helper.make_graph([helper.make_node("Mul", ["x", "s"], ["y"], name="scale")],
                          "channel_scale", [x, s], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, os.path.join(out, "scale.onnx"))
rng = np.random.default_rng(0)
xv = rng.standard_normal((4, 112, 32)).astype(np.float32)
sv = rng.uniform(0, 1, 32).astype(np.float32)
np.save(os.path.join(out, "x.npy"), xv)
np.save(os.path.join(out, "s.npy"), sv)
np.save(os.path.join(out, "y.npy"), xv * sv)
