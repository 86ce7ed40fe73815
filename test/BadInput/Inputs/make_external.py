#!/usr/bin/env python3
"""Writes models whose external data is well-formed or tries to escape.

Usage: make_external.py OUT_DIR. Creates OUT_DIR/model/ holding one model per
case (each a MatMul whose weight lives in external data) and, beside it,
OUT_DIR/secret.bin, which no model may read.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def write(folder, name, location, offset=None, length=None):
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.extend([2, 2])
    w.data_location = TensorProto.EXTERNAL
    entries = [("location", location)]
    if offset is not None:
        entries.append(("offset", str(offset)))
    if length is not None:
        entries.append(("length", str(length)))
    for k, v in entries:
        e = w.external_data.add()
        e.key, e.value = k, v
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(os.path.join(folder, name), "wb") as f:
        f.write(model.SerializeToString())


def main():
    out = sys.argv[1]
    folder = os.path.join(out, "model")
    os.makedirs(os.path.join(folder, "sub"), exist_ok=True)
    weights = np.arange(4, dtype=np.float32).tobytes()
    open(os.path.join(folder, "weights.bin"), "wb").write(b"\0" * 8 + weights)
    open(os.path.join(folder, "sub", "w.bin"), "wb").write(weights)
    open(os.path.join(out, "secret.bin"), "wb").write(weights)
    for link, target in [("link.bin", os.path.join(out, "secret.bin")),
                         ("linkdir", out)]:
        path = os.path.join(folder, link)
        if os.path.lexists(path):
            os.remove(path)
        os.symlink(target, path)
    write(folder, "good.onnx", "weights.bin", offset=8, length=16)
    write(folder, "good_subdir.onnx", "sub/w.bin")
    write(folder, "dotdot.onnx", "../secret.bin")
    write(folder, "dotdot_inner.onnx", "sub/../../secret.bin")
    write(folder, "absolute.onnx", os.path.join(out, "secret.bin"))
    write(folder, "symlink.onnx", "link.bin")
    write(folder, "symlink_dir.onnx", "linkdir/secret.bin")
    write(folder, "missing.onnx", "nothere.bin")
    write(folder, "past_end.onnx", "weights.bin", offset=8, length=64)
    write(folder, "offset_past_end.onnx", "weights.bin", offset=4096)
    write(folder, "bad_offset.onnx", "weights.bin", offset="-1")
    write(folder, "short.onnx", "weights.bin", offset=0, length=8)


if __name__ == "__main__":
    main()
