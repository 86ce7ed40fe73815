#!/usr/bin/env python3
"""Writes cases in the ONNX backend-test layout for
test/Compile/half-activations.test: f16 activations that compute
exp(x) - 1, x ~ N(0, 1) [16, 256] with a tenth of the values within 0.05 of
zero, against float64 references stored in f16.

elu_f16     Elu(alpha = 1)
selu_f16    Selu (the default alpha and gamma)
logsumexp_f16
            ReduceLogSumExp over axis 1 of [16, 20], each row about
            -log(20) + N(0, 0.1): results near 0, where log(sum) and the
            row's maximum cancel

Computed in f16 step by step, exp(x) - 1 cancels near 0 (elu(-0.01) came
out 1.8% off, 24 f16 ulps), and so does log(sum) + max, each rounded to f16
first; strata computes these ops in f32 and rounds once. (ONNX allows
neither activation in bf16, and Celu only in f32.)

Usage: make_half_activation_cases.py OUT_DIR
"""

import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SELU_ALPHA = 1.67326319217681884765625
SELU_GAMMA = 1.05070102214813232421875


def save_case(out, name, node, x, y):
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, y.shape)])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    data = os.path.join(out, name, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))
    for file, array, tensor in (("input_0.pb", x, "x"), ("output_0.pb", y, "y")):
        with open(os.path.join(data, file), "wb") as f:
            f.write(numpy_helper.from_array(array, tensor).SerializeToString())


def main(out):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((16, 256))
    x[:, ::10] = 0.05 * rng.uniform(-1, 1, (16, 26))
    x = x.astype(np.float16)
    xd = x.astype(np.float64)
    expm1 = np.vectorize(math.expm1)
    cases = {
        "elu_f16": (helper.make_node("Elu", ["x"], ["y"], alpha=1.0),
                    np.where(xd > 0, xd, expm1(xd))),
        "selu_f16": (helper.make_node("Selu", ["x"], ["y"]),
                     SELU_GAMMA * np.where(xd > 0, xd, SELU_ALPHA * expm1(xd))),
    }
    for name, (node, y) in cases.items():
        save_case(out, name, node, x, y.astype(np.float16))

    rows = (-math.log(20) + 0.1 * rng.standard_normal((16, 20))).astype(np.float16)
    rd = rows.astype(np.float64)
    top = rd.max(axis=1)
    lse = top + np.log(np.exp(rd - top[:, None]).sum(axis=1))
    save_case(out, "logsumexp_f16",
              helper.make_node("ReduceLogSumExp", ["x"], ["y"], axes=[1],
                               keepdims=0),
              rows, lse.astype(np.float16))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_half_activation_cases.py OUT_DIR")
    main(sys.argv[1])
