#!/usr/bin/env python3
"""Writes the models of test/Compile/structured-inputs.test.

Each case directory holds model.onnx and test_data_set_{0,1}; the expected
outputs come from numpy, not from strata.

range_scale: y = Cast(Range(0, n, 1)) * s. The length of y is the value of
  the scalar input n, so strata specializes the module on n (and only on n:
  s stays a run-time input). The data sets have n = 3 and n = 5.
seq_concat: a sequence input xs and a tensor t: outputs the concatenation
  of xs's tensors, its length, and the sequence with t inserted at the
  front (a sequence output). The data sets hold 2 and 3 tensors of
  different lengths.
Also writes n4.npy, n5.npy and s2.npy for running range_scale by hand, and
scale_by.onnx (y = x * s: a small input that sets no shape) with x4.npy and
s3.npy for the compile cache's handling of values.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(path, proto):
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def save_case(out, name, graph, datasets):
    directory = os.path.join(out, name)
    os.makedirs(directory, exist_ok=True)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 15)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(directory, "model.onnx"))
    for k, (inputs, outputs) in enumerate(datasets):
        data = os.path.join(directory, f"test_data_set_{k}")
        os.makedirs(data, exist_ok=True)
        for kind, values in (("input", inputs), ("output", outputs)):
            for i, (key, value) in enumerate(values.items()):
                if isinstance(value, list):
                    proto = onnx.SequenceProto(
                        name=key, elem_type=onnx.SequenceProto.TENSOR)
                    proto.tensor_values.extend(
                        numpy_helper.from_array(v) for v in value)
                else:
                    proto = numpy_helper.from_array(value, key)
                save(os.path.join(data, f"{kind}_{i}.pb"), proto)


def main(out):
    rng = np.random.default_rng(11)

    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["zero"],
                          value=numpy_helper.from_array(np.array(0, np.int64))),
         helper.make_node("Constant", [], ["one"],
                          value=numpy_helper.from_array(np.array(1, np.int64))),
         helper.make_node("Range", ["zero", "n", "one"], ["r"], name="range"),
         helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["rf", "s"], ["y"], name="scale")],
        "range_scale",
        [helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])])
    datasets = []
    for n, s in ((3, 0.5), (5, -2.0)):
        datasets.append(({"n": np.array(n, np.int64),
                          "s": np.array(s, np.float32)},
                         {"y": np.arange(n, dtype=np.float32) *
                          np.float32(s)}))
    save_case(out, "range_scale", graph, datasets)
    np.save(os.path.join(out, "n4.npy"), np.array(4, np.int64))
    np.save(os.path.join(out, "n5.npy"), np.array(5, np.int64))
    np.save(os.path.join(out, "s2.npy"), np.array(2, np.float32))
    np.save(os.path.join(out, "s3.npy"), np.array(3, np.float32))
    np.save(os.path.join(out, "x4.npy"), np.arange(4, dtype=np.float32))
    # scale_by.onnx: y = x * s, whose small input s sets no shape.
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "s"], ["y"], name="scale")], "scale_by",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 15)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "scale_by.onnx"))

    seq_type = helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, ["len"]))
    graph = helper.make_graph(
        [helper.make_node("ConcatFromSequence", ["xs"], ["joined"], axis=0,
                          name="join"),
         helper.make_node("SequenceLength", ["xs"], ["count"], name="count"),
         helper.make_node("Constant", [], ["front"],
                          value=numpy_helper.from_array(np.array(0, np.int64))),
         helper.make_node("SequenceInsert", ["xs", "t", "front"], ["ys"],
                          name="insert")],
        "seq_concat",
        [helper.make_value_info("xs", seq_type),
         helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("joined", TensorProto.FLOAT, ["total"]),
         helper.make_tensor_value_info("count", TensorProto.INT64, []),
         helper.make_value_info("ys", seq_type)])
    datasets = []
    for lengths in ((3, 1), (2, 4, 2)):
        xs = [rng.standard_normal(k).astype(np.float32) for k in lengths]
        t = rng.standard_normal(2).astype(np.float32)
        datasets.append(({"xs": xs, "t": t},
                         {"joined": np.concatenate(xs),
                          "count": np.array(len(xs), np.int64),
                          "ys": [t] + xs}))
    save_case(out, "seq_concat", graph, datasets)


if __name__ == "__main__":
    main(sys.argv[1])
