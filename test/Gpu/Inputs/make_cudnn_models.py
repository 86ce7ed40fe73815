#!/usr/bin/env python3
"""Writes the models test/Gpu/cudnn.test compiles for --target=cuda.

block_f16.onnx    a residual block in f16, x [2, 16, 8, 8]: conv1 (3x3, pad
                  1, bias) -> relu1 -> conv2 (3x3, pad 1, bias) -> add r1
                  (res) -> relu2, then down (a 1x1 convolution at stride 2),
                  grouped (3x3, 4 groups, stride 2, pad 1), dw (3x3
                  depthwise, pad 1) and point (1x1 at stride 1)
block_f32.onnx    the same block in f32
stem_f16.onnx     a network's first convolution, f16 x [2, 3, 32, 32]: stem
                  (7x7, stride 2, pad 3, bias) -> stem_relu
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from make_gpu_models import save, value  # the shared model writer


def block(out, name, dtype, np_type):
    rng = np.random.default_rng(7)

    def weight(wname, shape):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * 0.1).astype(np_type), wname)

    inits = [weight("w1", [16, 16, 3, 3]), weight("b1", [16]),
             weight("w2", [16, 16, 3, 3]), weight("b2", [16]),
             weight("wd", [32, 16, 1, 1]),
             weight("wg", [32, 8, 3, 3]),
             weight("ww", [32, 1, 3, 3]),
             weight("wp", [32, 32, 1, 1])]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["s"], name="res"),
        helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "wd"], ["d"], name="down",
                         kernel_shape=[1, 1], strides=[2, 2]),
        helper.make_node("Conv", ["r2", "wg"], ["g"], name="grouped",
                         kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1], group=2),
        helper.make_node("Add", ["d", "g"], ["dg"], name="sum"),
        helper.make_node("Conv", ["dg", "ww"], ["w"], name="dw",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=32),
        helper.make_node("Conv", ["w", "wp"], ["y"], name="point",
                         kernel_shape=[1, 1]),
    ]
    save(out, name, nodes, [value("x", [2, 16, 8, 8], dtype)],
         [value("y", [2, 32, 4, 4], dtype)], inits)


def stem(out):
    rng = np.random.default_rng(8)
    inits = [numpy_helper.from_array(
                 (rng.standard_normal(shape) * 0.1).astype(np.float16), name)
             for name, shape in (("ws", [16, 3, 7, 7]), ("bs", [16]))]
    nodes = [
        helper.make_node("Conv", ["x", "ws", "bs"], ["c"], name="stem",
                         kernel_shape=[7, 7], strides=[2, 2],
                         pads=[3, 3, 3, 3]),
        helper.make_node("Relu", ["c"], ["y"], name="stem_relu"),
    ]
    save(out, "stem_f16", nodes,
         [value("x", [2, 3, 32, 32], TensorProto.FLOAT16)],
         [value("y", [2, 16, 16, 16], TensorProto.FLOAT16)], inits)


def main(out):
    os.makedirs(out, exist_ok=True)
    stem(out)
    block(out, "block_f16", TensorProto.FLOAT16, np.float16)
    block(out, "block_f32", TensorProto.FLOAT, np.float32)


if __name__ == "__main__":
    main(sys.argv[1])
