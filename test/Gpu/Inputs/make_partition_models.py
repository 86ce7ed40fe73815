#!/usr/bin/env python3
"""Writes the models test/Gpu/partition.test compiles for --target=cuda.

heads.onnx  a head split as BERT's: x [2, 8, 3, 4, 16] transposed to
            [3, 2, 4, 8, 16], Gather index 0 of it, then Sigmoid, and a
            Reshape of the transposed tensor: on the GPU the gather and
            the Sigmoid after it are a kernel of their own and the reshape
            a view
mask.onnx   a causal mask (Trilu of ones) applied with Where before a
            Softmax over [2, 4, 64, 64]: the Trilu is a kernel of its own
rms_castw.onnx
            RMSNorm of bf16 x [8, 4096] in f32 with a bf16 weight cast to
            f32 after the reduction (the bench's form): on the GPU the
            weight's cast joins the norm's kernel
rms_castw_out.onnx
            the same, with float(w) also a model output: the cast keeps a
            kernel of its own
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from make_gpu_models import save, value  # the shared model writer


def main(out):
    os.makedirs(out, exist_ok=True)
    save(out, "heads",
         [helper.make_node("Sigmoid", ["x"], ["s"], name="pre"),
          helper.make_node("Transpose", ["s"], ["t"], name="split",
                           perm=[2, 0, 3, 1, 4]),
          helper.make_node("Gather", ["t", "zero"], ["q"], name="pick", axis=0),
          helper.make_node("Sigmoid", ["q"], ["y"], name="post"),
          helper.make_node("Reshape", ["t", "shape"], ["r"], name="flat")],
         [value("x", [2, 8, 3, 4, 16])],
         [value("y", [2, 4, 8, 16]), value("r", [3, 1024])],
         [numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
          numpy_helper.from_array(np.array([3, 1024], dtype=np.int64), "shape")])
    save(out, "mask",
         [helper.make_node("Trilu", ["ones"], ["m"], name="causal", upper=0),
          helper.make_node("Cast", ["m"], ["b"], name="tobool",
                           to=TensorProto.BOOL),
          helper.make_node("Where", ["b", "x", "ninf"], ["w"], name="apply"),
          helper.make_node("Softmax", ["w"], ["y"], name="sm", axis=-1)],
         [value("x", [2, 4, 64, 64])], [value("y", [2, 4, 64, 64])],
         [numpy_helper.from_array(np.ones((64, 64), dtype=np.float32), "ones"),
          numpy_helper.from_array(np.array(-1e9, dtype=np.float32), "ninf")])

    bf16, f32 = TensorProto.BFLOAT16, TensorProto.FLOAT
    for name, extra in (("rms_castw", []),
                        ("rms_castw_out", [value("wf", [4096])])):
        save(out, name,
             [helper.make_node("Cast", ["x"], ["xf"], to=f32, name="upcast"),
              helper.make_node("Mul", ["xf", "xf"], ["sq"], name="square"),
              helper.make_node("ReduceMean", ["sq"], ["ms"], axes=[-1],
                               keepdims=1, name="mean"),
              helper.make_node("Add", ["ms", "eps"], ["mse"], name="eps"),
              helper.make_node("Sqrt", ["mse"], ["rms"], name="sqrt"),
              helper.make_node("Div", ["xf", "rms"], ["nf"], name="norm"),
              helper.make_node("Cast", ["w"], ["wf"], to=f32, name="wcast"),
              helper.make_node("Mul", ["nf", "wf"], ["yf"], name="scale"),
              helper.make_node("Cast", ["yf"], ["y"], to=bf16, name="down")],
             [value("x", [8, 4096], bf16), value("w", [4096], bf16)],
             [value("y", [8, 4096], bf16)] + extra,
             [numpy_helper.from_array(np.array(1e-6, dtype=np.float32),
                                      "eps")])


if __name__ == "__main__":
    main(sys.argv[1])
