#!/usr/bin/env python3
"""Writes the row kernels test/Gpu/rows.test compiles for --target=cuda.

Each is one block_ops kernel whose rows the gpu stage reads once
(docs/gpu.md, "block_ops"):

softmax32k.onnx     Softmax over the last axis of f32 [4, 32768]: rows of
                    128 KiB, kept in registers by blocks of 1024 threads
softmax32k_odd.onnx The same over [4, 32771]: no multiple of a vector, so
                    the row is staged in dynamic shared memory instead
rmsnorm_bf16.onnx   RMSNorm of bf16 [8, 4096] computed in f32 (Cast, Pow 2,
                    ReduceMean, Add, Sqrt, Div, Cast back, Mul by a bf16
                    weight): 16-byte accesses of 8 bf16 elements
softmax_odd.onnx    Softmax over the last axis of f32 [4, 4099]: an extent
                    that is no multiple of a vector, so element accesses
"""

import os
import sys

from onnx import TensorProto, helper

from make_gpu_models import save, value  # the shared model writer


def main(out):
    os.makedirs(out, exist_ok=True)
    save(out, "softmax32k",
         [helper.make_node("Softmax", ["x"], ["y"], axis=-1, name="sm")],
         [value("x", [4, 32768])], [value("y", [4, 32768])])
    save(out, "softmax32k_odd",
         [helper.make_node("Softmax", ["x"], ["y"], axis=-1, name="sm")],
         [value("x", [4, 32771])], [value("y", [4, 32771])])
    bf16 = TensorProto.BFLOAT16
    save(out, "rmsnorm_bf16",
         [helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT),
          helper.make_node("Pow", ["xf", "two"], ["sq"]),
          helper.make_node("ReduceMean", ["sq"], ["ms"], axes=[-1],
                           keepdims=1),
          helper.make_node("Add", ["ms", "eps"], ["mse"]),
          helper.make_node("Sqrt", ["mse"], ["rms"]),
          helper.make_node("Div", ["xf", "rms"], ["nf"]),
          helper.make_node("Cast", ["nf"], ["n"], to=bf16),
          helper.make_node("Mul", ["n", "w"], ["y"])],
         [value("x", [8, 4096], bf16), value("w", [4096], bf16)],
         [value("y", [8, 4096], bf16)],
         [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0]),
          helper.make_tensor("eps", TensorProto.FLOAT, [], [1e-6])])
    save(out, "softmax_odd",
         [helper.make_node("Softmax", ["x"], ["y"], axis=-1, name="sm")],
         [value("x", [4, 4099])], [value("y", [4, 4099])])


if __name__ == "__main__":
    main(sys.argv[1])
