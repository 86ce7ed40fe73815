#!/usr/bin/env python3
"""Writes the models of test/Compile/value-shaped.test.

Each case directory holds model.onnx and test_data_set_{0,1} whose inputs
select different numbers of elements, so one compiled shape yields outputs
of different lengths; the expected outputs come from numpy (np.nonzero,
np.compress, np.unique), not from strata.

nonzero_relu: NonZero of x > 0 next to a Relu of x: a host step and a
  generated kernel in one plan, both model outputs.
compress_unique: Compress of x along axis 1 by a run-time condition, then
  Unique of the result (a host step reading a host step's value) with its
  four outputs.
nonzero_to_add (no test data): NonZero cast and added to: generated code
  cannot read a value-dependent shape, so compiling names both nodes.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save_case(out, name, graph, datasets):
    directory = os.path.join(out, name)
    os.makedirs(directory, exist_ok=True)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(directory, "model.onnx"))
    for k, (inputs, outputs) in enumerate(datasets):
        data = os.path.join(directory, f"test_data_set_{k}")
        os.makedirs(data, exist_ok=True)
        for i, (key, value) in enumerate(inputs.items()):
            tensor = numpy_helper.from_array(value, key)
            with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                f.write(tensor.SerializeToString())
        for i, (key, value) in enumerate(outputs.items()):
            tensor = numpy_helper.from_array(value, key)
            with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
                f.write(tensor.SerializeToString())


def main(out):
    rng = np.random.default_rng(7)

    # nonzero_relu
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["zero"], name="zero",
                          value=numpy_helper.from_array(
                              np.array(0, np.float32))),
         helper.make_node("Greater", ["x", "zero"], ["positive"],
                          name="positive"),
         helper.make_node("NonZero", ["positive"], ["where"], name="where"),
         helper.make_node("Relu", ["x"], ["relu"], name="relu")],
        "nonzero_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("where", TensorProto.INT64,
                                       [2, "selected"]),
         helper.make_tensor_value_info("relu", TensorProto.FLOAT, [3, 4])])
    datasets = []
    for fraction in (0.5, 0.1):
        x = rng.standard_normal((3, 4)).astype(np.float32)
        x[rng.random((3, 4)) > fraction] = -1.0
        datasets.append(({"x": x},
                         {"where": np.array(np.nonzero(x > 0), np.int64),
                          "relu": np.maximum(x, 0)}))
    save_case(out, "nonzero_relu", graph, datasets)

    # compress_unique
    graph = helper.make_graph(
        [helper.make_node("Compress", ["x", "keep"], ["kept"], name="keep",
                          axis=1),
         helper.make_node("Unique", ["kept"], ["y", "first", "inverse",
                                               "counts"],
                          name="unique", sorted=1)],
        "compress_unique",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5]),
         helper.make_tensor_value_info("keep", TensorProto.BOOL, [5])],
        [helper.make_tensor_value_info("kept", TensorProto.FLOAT, [2, "k"]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["u"]),
         helper.make_tensor_value_info("first", TensorProto.INT64, ["u"]),
         helper.make_tensor_value_info("inverse", TensorProto.INT64, ["n"]),
         helper.make_tensor_value_info("counts", TensorProto.INT64, ["u"])])
    datasets = []
    for keep in ([True, False, True, True, False],
                 [False, False, False, True, False]):
        x = rng.integers(0, 3, (2, 5)).astype(np.float32)
        keep = np.array(keep)
        kept = np.compress(keep, x, axis=1)
        y, first, inverse, counts = np.unique(
            kept, return_index=True, return_inverse=True, return_counts=True)
        datasets.append(({"x": x, "keep": keep},
                         {"kept": kept, "y": y,
                          "first": first.astype(np.int64),
                          "inverse": inverse.reshape(-1).astype(np.int64),
                          "counts": counts.astype(np.int64)}))
    save_case(out, "compress_unique", graph, datasets)

    # nonzero_to_add
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["where"], name="where"),
         helper.make_node("Cast", ["where"], ["as_float"], name="to_float",
                          to=TensorProto.FLOAT),
         helper.make_node("Add", ["as_float", "as_float"], ["y"],
                          name="add")],
        "nonzero_to_add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, "n"])])
    os.makedirs(os.path.join(out, "errors"), exist_ok=True)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "errors", "nonzero_to_add.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
