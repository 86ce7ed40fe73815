#!/usr/bin/env python3
"""Writes the bundled example models into a folder (default: examples/models).

mlp.onnx: a two-layer MLP with a symbolic batch dimension, GELU written the
way exporters write it (erf), and a LayerNorm -- small enough to read, yet it
exercises matmul, broadcasting, reductions and symbolic shapes.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp(path):
    rng = np.random.default_rng(0)
    d_in, d_hidden, d_out = 64, 128, 10
    inits = [
        numpy_helper.from_array(rng.standard_normal((d_in, d_hidden)).astype(np.float32) * 0.1, "w1"),
        numpy_helper.from_array(np.zeros(d_hidden, np.float32), "b1"),
        numpy_helper.from_array(rng.standard_normal((d_hidden, d_out)).astype(np.float32) * 0.1, "w2"),
        numpy_helper.from_array(np.zeros(d_out, np.float32), "b2"),
        numpy_helper.from_array(np.ones(d_hidden, np.float32), "ln_scale"),
        numpy_helper.from_array(np.zeros(d_hidden, np.float32), "ln_bias"),
        numpy_helper.from_array(np.array(1 / np.sqrt(2), np.float32), "inv_sqrt2"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="fc1_bias"),
        helper.make_node("Mul", ["h1", "inv_sqrt2"], ["g0"], name="gelu_scale"),
        helper.make_node("Erf", ["g0"], ["g1"], name="gelu_erf"),
        helper.make_node("Add", ["g1", "one"], ["g2"], name="gelu_add"),
        helper.make_node("Mul", ["h1", "g2"], ["g3"], name="gelu_mul"),
        helper.make_node("Mul", ["g3", "half"], ["h2"], name="gelu_half"),
        helper.make_node("LayerNormalization", ["h2", "ln_scale", "ln_bias"], ["h3"],
                         name="norm", axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["h3", "w2"], ["o0"], name="fc2"),
        helper.make_node("Add", ["o0", "b2"], ["y"], name="fc2_bias"),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", d_in])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", d_out])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="strata-examples")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "models")
    os.makedirs(out, exist_ok=True)
    mlp(os.path.join(out, "mlp.onnx"))
    print(f"wrote {out}/mlp.onnx")


if __name__ == "__main__":
    main()
