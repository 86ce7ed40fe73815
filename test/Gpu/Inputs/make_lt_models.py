#!/usr/bin/env python3
"""Writes the models test/Gpu/cublaslt.test compiles for --target=cuda.

mm_bias_relu.onnx  MatMul [4, 64, 96] x [96, 128] + bias [128], Relu (f32):
                   one cuBLASLt step with its bias and ReLU epilogue
gemm_t.onnx        Gemm transB = 1, alpha = 0.5, C [48] (f32): the bias
                   epilogue, trans_b and alpha
bf16_res_sig.onnx  MatMul [64, 32] x [32, 16] + r [64, 16], then Sigmoid
                   (bf16): the residual as cuBLASLt's C; the sigmoid stays
                   generated code (cuBLASLt has no sigmoid epilogue)
bcast_part.onnx    MatMul [2, 3, 8, 16] x [3, 16, 8]: B's batch broadcasts
                   partly against A's, which cuBLASLt's strided batches
                   cannot express: generated code
"""

import os
import sys

from onnx import TensorProto, helper

from make_gpu_models import save, value  # the shared model writer


def main(out):
    os.makedirs(out, exist_ok=True)
    save(out, "mm_bias_relu",
         [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
          helper.make_node("Add", ["m", "b"], ["a"], name="bias"),
          helper.make_node("Relu", ["a"], ["y"], name="relu")],
         [value("x", [4, 64, 96]), value("w", [96, 128]), value("b", [128])],
         [value("y", [4, 64, 128])])
    save(out, "gemm_t",
         [helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm",
                           transB=1, alpha=0.5)],
         [value("a", [32, 40]), value("b", [48, 40]), value("c", [48])],
         [value("y", [32, 48])])
    bf = TensorProto.BFLOAT16
    save(out, "bf16_res_sig",
         [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
          helper.make_node("Add", ["m", "r"], ["a"], name="residual"),
          helper.make_node("Sigmoid", ["a"], ["y"], name="sig")],
         [value("x", [64, 32], bf), value("w", [32, 16], bf),
          value("r", [64, 16], bf)],
         [value("y", [64, 16], bf)])
    save(out, "bcast_part",
         [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
         [value("a", [2, 3, 8, 16]), value("b", [3, 16, 8])],
         [value("y", [2, 3, 8, 8])])


if __name__ == "__main__":
    main(sys.argv[1])
