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
threshold_topk: a detection tail as torchvision's SSD exports it: the
  scores above a threshold (NonZero, Transpose, GatherND), TopK of them with
  k = min(3, count) computed from their Shape, and their rows gathered: every
  op after NonZero runs as a host kernel.
run_time_if: an If on `count == 0` whose branches yield different shapes
  (torchvision's batched_nms guard): a constant empty tensor, or the
  selected values doubled; one data set takes each branch.
nonzero_hardmax (no test data): NonZero cast and given to Hardmax, which
  has no host kernel: compiling names the node and the NonZero behind it.
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

    # threshold_topk
    def const(name, value):
        return helper.make_node("Constant", [], [name], name=name,
                                value=numpy_helper.from_array(value))
    graph = helper.make_graph(
        [const("thresh", np.array(0.25, np.float32)),
         const("zero", np.array([0], np.int64)),
         const("three", np.array([3], np.int64)),
         helper.make_node("Greater", ["scores", "thresh"], ["above"],
                          name="above"),
         helper.make_node("NonZero", ["above"], ["nz"], name="nz"),
         helper.make_node("Transpose", ["nz"], ["idx"], name="idx",
                          perm=[1, 0]),
         helper.make_node("GatherND", ["scores", "idx"], ["kept"],
                          name="kept"),
         helper.make_node("GatherND", ["boxes", "idx"], ["kept_boxes"],
                          name="kept_boxes"),
         helper.make_node("Shape", ["kept"], ["count"], name="count"),
         helper.make_node("Gather", ["count", "zero"], ["n"], name="n",
                          axis=0),
         helper.make_node("Concat", ["three", "n"], ["both"], name="both",
                          axis=0),
         helper.make_node("ReduceMin", ["both"], ["k"], name="k",
                          keepdims=1),
         helper.make_node("TopK", ["kept", "k"], ["top", "order"],
                          name="topk"),
         helper.make_node("Gather", ["kept_boxes", "order"], ["top_boxes"],
                          name="top_boxes", axis=0)],
        "threshold_topk",
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [6]),
         helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [6, 4])],
        [helper.make_tensor_value_info("top", TensorProto.FLOAT, ["k"]),
         helper.make_tensor_value_info("top_boxes", TensorProto.FLOAT,
                                       ["k", 4])])
    datasets = []
    for scores in ([0.9, 0.1, 0.5, 0.7, 0.3, 0.2], [0.1, 0.2, 0.6, 0.0, 0.1,
                                                    0.05]):
        scores = np.array(scores, np.float32)
        boxes = rng.standard_normal((6, 4)).astype(np.float32)
        kept = np.nonzero(scores > 0.25)[0]
        order = kept[np.argsort(-scores[kept], kind="stable")][:3]
        datasets.append(({"scores": scores, "boxes": boxes},
                         {"top": scores[order], "top_boxes": boxes[order]}))
    save_case(out, "threshold_topk", graph, datasets)

    # run_time_if
    then_branch = helper.make_graph(
        [const("empty", np.zeros((0,), np.float32))], "then", [],
        [helper.make_tensor_value_info("empty", TensorProto.FLOAT, [0])])
    else_branch = helper.make_graph(
        [helper.make_node("Add", ["values", "values"], ["doubled"],
                          name="doubled")], "else", [],
        [helper.make_tensor_value_info("doubled", TensorProto.FLOAT, ["n"])])
    graph = helper.make_graph(
        [const("zero_f", np.array(0, np.float32)),
         const("none", np.array(0, np.int64)),
         helper.make_node("Greater", ["x", "zero_f"], ["positive"],
                          name="positive"),
         helper.make_node("Compress", ["x", "positive"], ["values"],
                          name="values"),
         helper.make_node("Size", ["values"], ["size"], name="size"),
         helper.make_node("Equal", ["size", "none"], ["nothing"],
                          name="nothing"),
         helper.make_node("If", ["nothing"], ["y"], name="guard",
                          then_branch=then_branch,
                          else_branch=else_branch)],
        "run_time_if",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m"])])
    datasets = []
    for x in ([1.0, -2.0, 3.0, 0.0, 0.5], [-1.0, -2.0, 0.0, -0.5, -3.0]):
        x = np.array(x, np.float32)
        datasets.append(({"x": x}, {"y": 2 * x[x > 0]}))
    save_case(out, "run_time_if", graph, datasets)

    # nonzero_hardmax
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["where"], name="where"),
         helper.make_node("Cast", ["where"], ["as_float"], name="to_float",
                          to=TensorProto.FLOAT),
         helper.make_node("Hardmax", ["as_float"], ["y"], name="hard")],
        "nonzero_hardmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, "n"])])
    os.makedirs(os.path.join(out, "errors"), exist_ok=True)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "errors", "nonzero_hardmax.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
