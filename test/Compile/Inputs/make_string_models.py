#!/usr/bin/env python3
"""Writes the string models and tensors of test/Compile/strings.test.

normalize.onnx: StringNormalizer (stop word "monday", UPPER) whose output
  length is symbolic ("kept"), so the plan keeps it dynamic (a host buffer sized at
  run time); words4.pb and words3.npy are inputs, with their expected outputs.
consts.onnx: a string initializer cast to float (a string constant stored in
  the module), added to a float input.
dynamic_to_float.onnx: StringNormalizer's value-dependent output cast to
  float: a compile error naming the Cast node.
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


def string_tensor(values, name=""):
    array = np.array(values, dtype=object)
    return numpy_helper.from_array(array, name)


def write_pb(tensor, path):
    with open(path, "wb") as f:
        f.write(tensor.SerializeToString())


def main(out):
    opset = [helper.make_opsetid("", 17)]
    normalizer = helper.make_node(
        "StringNormalizer", ["x"], ["y"], name="norm",
        case_change_action="UPPER", stopwords=["monday"])
    graph = helper.make_graph(
        [normalizer], "normalize",
        [helper.make_tensor_value_info("x", TensorProto.STRING, [None])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, ["kept"])])
    save(helper.make_model(graph, opset_imports=opset),
         os.path.join(out, "normalize.onnx"))
    write_pb(string_tensor(["Monday", "tuesday", "MONDAY", "friday"]),
             os.path.join(out, "words4.pb"))
    np.save(os.path.join(out, "words3.npy"),
            np.array(["monday", "wednesday", "Straße"]))

    graph = helper.make_graph(
        [helper.make_node("Cast", ["c"], ["cf"], name="cast_c",
                          to=TensorProto.FLOAT),
         helper.make_node("Add", ["cf", "x"], ["y"], name="add")],
        "consts",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
        [string_tensor(["1.5", "-2e1", "INF"], "c")])
    save(helper.make_model(graph, opset_imports=opset),
         os.path.join(out, "consts.onnx"))
    np.save(os.path.join(out, "ones.npy"), np.ones(3, np.float32))

    graph = helper.make_graph(
        [normalizer,
         helper.make_node("Cast", ["y"], ["z"], name="to_float",
                          to=TensorProto.FLOAT)],
        "dynamic_to_float",
        [helper.make_tensor_value_info("x", TensorProto.STRING, [4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["kept"])])
    save(helper.make_model(graph, opset_imports=opset),
         os.path.join(out, "dynamic_to_float.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
