#!/usr/bin/env python3
"""Writes the models of unwritable-dirs.test into a folder.

wide.onnx: one MatMul (a oneDNN step, so that compiling writes no temporary
object files) with a 256x256 weight: a module of about 260 KB, much larger
than its cache manifest; wide_x.npy and numpy's float64 wide_y.npy.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(3)
    w = rng.standard_normal((256, 256)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")], "wide",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 256])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "wide.onnx"))
    x = rng.standard_normal((4, 256)).astype(np.float32)
    np.save(os.path.join(out, "wide_x.npy"), x)
    np.save(os.path.join(out, "wide_y.npy"),
            x.astype(np.float64) @ w.astype(np.float64))


if __name__ == "__main__":
    main()
