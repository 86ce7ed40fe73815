#!/usr/bin/env python3
"""Writes the small models test/Gpu's tests compile for --target=cuda.

Each exercises one way the gpu stage maps a kernel onto thread blocks
(docs/gpu.md):

elementwise.onnx   x * sigmoid(x) + 1 on f32 [64, 256]: one all-parallel op,
                   4 elements per thread in 16-byte accesses
bf16_add.onnx      a + b on bf16 [32, 64]: 8 elements per thread
bcast.onnx         x + b with b [5] broadcast over [3, 5]: an odd innermost
                   size, one element per thread
softmax.onnx       Softmax over the last axis of [32, 256]: row blocks of 16
                   rows, one warp per row for each reduction
softmax512.onnx    Softmax over the last axis of [16, 512]: on the GPU one
                   row per block, the row in registers
layernorm.onnx     LayerNormalization over the last axis of [2, 4096]: one
                   block per row, block-wide reductions
matmul.onnx        [64, 32] x [32, 48]: each thread computes output points
reduce0.onnx       ReduceSum over axis 0 of [128, 64]: no row split, one
                   block for the kernel
view.onnx          Reshape of an input read by Add: the plan copies the
                   input, with a generated copy kernel
cumsum.onnx        CumSum with its axis given as an input: the body picks
                   the axis at run time and one thread runs it
"""

import os
import sys

import onnx
from onnx import TensorProto, helper


def save(out, name, nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))


def value(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def main(out):
    os.makedirs(out, exist_ok=True)
    save(out, "elementwise",
         [helper.make_node("Sigmoid", ["x"], ["s"], name="sig"),
          helper.make_node("Mul", ["x", "s"], ["m"], name="mul"),
          helper.make_node("Add", ["m", "one"], ["y"], name="add")],
         [value("x", [64, 256])], [value("y", [64, 256])],
         [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])
    save(out, "bf16_add", [helper.make_node("Add", ["a", "b"], ["y"])],
         [value("a", [32, 64], TensorProto.BFLOAT16),
          value("b", [32, 64], TensorProto.BFLOAT16)],
         [value("y", [32, 64], TensorProto.BFLOAT16)])
    save(out, "bcast", [helper.make_node("Add", ["x", "b"], ["y"])],
         [value("x", [3, 5]), value("b", [5])], [value("y", [3, 5])])
    save(out, "softmax",
         [helper.make_node("Softmax", ["x"], ["y"], axis=-1, name="sm")],
         [value("x", [32, 256])], [value("y", [32, 256])])
    save(out, "softmax512",
         [helper.make_node("Softmax", ["x"], ["y"], axis=-1, name="sm")],
         [value("x", [16, 512])], [value("y", [16, 512])])
    save(out, "layernorm",
         [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"],
                           axis=-1, epsilon=1e-5, name="ln")],
         [value("x", [2, 4096]), value("g", [4096]), value("b", [4096])],
         [value("y", [2, 4096])])
    save(out, "matmul", [helper.make_node("MatMul", ["a", "b"], ["y"])],
         [value("a", [64, 32]), value("b", [32, 48])], [value("y", [64, 48])])
    save(out, "reduce0",
         [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
         [value("x", [128, 64])], [value("y", [64])],
         [helper.make_tensor("axes", TensorProto.INT64, [1], [0])])
    save(out, "view",
         [helper.make_node("Reshape", ["x", "shape"], ["r"]),
          helper.make_node("Add", ["r", "r"], ["y"])],
         [value("x", [4, 6])], [value("y", [6, 4])],
         [helper.make_tensor("shape", TensorProto.INT64, [2], [6, 4])])
    save(out, "cumsum", [helper.make_node("CumSum", ["x", "axis"], ["y"])],
         [value("x", [5]), value("axis", [], TensorProto.INT32)],
         [value("y", [5])])


if __name__ == "__main__":
    main(sys.argv[1])
