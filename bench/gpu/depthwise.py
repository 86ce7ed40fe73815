#!/usr/bin/env python3
"""Depthwise and grouped convolutions at the sizes real CNNs run them, as conformance cases.

Each case is a folder with model.onnx and, at batch 1, test_data_set_0
(input_0.pb and output_0.pb, the output computed in float64 with numpy), so
that `strata conformance` and test/Gpu/device-conformance.sh check it. The
batch-32 case has no data set (150 MB); it runs the kernels of batch 1 with
another grid. For `strata-bench-gpu run --inputs DIR`, `--inputs-only DIR`
writes x.bin for every case (random, seeded), as on the GPU machine:

    /usr/bin/python3 bench/gpu/depthwise.py OUT-DIR
    python3 bench/gpu/depthwise.py --inputs-only DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name: batch, channels, size, kernel, stride, activation after the bias, groups (None:
# depthwise, one per channel).
CASES = {
    # MobileNetV2's expanded 3x3 at 56x56, then ReLU6.
    "dw3_mbv2": (1, 144, 56, 56, 3, 1, "relu6", None),
    # The same at stride 2 from 112x112.
    "dw3_s2": (1, 96, 112, 112, 3, 2, "relu6", None),
    # EfficientNet-B0's 5x5 at 28x28, then SiLU.
    "dw5_effnet": (1, 240, 28, 28, 5, 1, "silu", None),
    # ConvNeXt-T's 7x7 at 56x56 (no activation: a LayerNorm follows).
    "dw7_convnext": (1, 96, 56, 56, 7, 1, None, None),
    # A throughput batch.
    "dw3_mbv2_b32": (32, 144, 56, 56, 3, 1, "relu6", None),
    # ResNeXt-50 32x4d's first grouped 3x3: 32 groups of 4 channels at 56x56.
    "g32_resnext": (1, 128, 56, 56, 3, 1, "relu", 32),
    # RegNetY's groups of 8 channels at stride 2.
    "g8_regnet_s2": (1, 48, 56, 56, 3, 2, "relu", 6),
    # Two wide groups (AlexNet's form): 64 channels each.
    "g2_wide": (1, 128, 14, 14, 3, 1, None, 2),
}

def reference(x, w, b, stride, pad, act, groups):
    n, c, h, wd = x.shape
    k = w.shape[-1]
    f = w.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - k) // stride + 1
    ow = (wd + 2 * pad - k) // stride + 1
    y = np.zeros((n, groups, f // groups, oh, ow))
    wg = w.reshape(groups, f // groups, c // groups, k, k)
    for i in range(k):
        for j in range(k):
            win = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            win = win.reshape(n, groups, c // groups, oh, ow)
            y += np.einsum("ngchw,gfc->ngfhw", win, wg[:, :, :, i, j])
    y = y.reshape(n, f, oh, ow)
    y += b[None, :, None, None]
    if act == "relu6":
        y = np.clip(y, 0, 6)
    elif act == "relu":
        y = np.maximum(y, 0)
    elif act == "silu":
        y = y / (1 + np.exp(-y))
    return y


def make(folder, n, c, h, wd, k, stride, act, groups, rng):
    pad = k // 2
    groups = groups or c
    x = rng.standard_normal((n, c, h, wd)).astype(np.float32)
    # As many filters as channels, each summing k * k * (c / groups) terms.
    scale = k * np.sqrt(c // groups)
    if n > 1:  # the model alone
        w = (rng.standard_normal((c, c // groups, k, k)) / scale).astype(np.float32)
        b = (0.1 * rng.standard_normal(c)).astype(np.float32)
        oh = (h + 2 * pad - k) // stride + 1
        save(folder, model(x.shape, (n, c, oh, oh), w, b, k, stride, pad, act, groups))
        return
    w = (rng.standard_normal((c, c // groups, k, k)) / scale).astype(np.float32)
    b = (0.1 * rng.standard_normal(c)).astype(np.float32)
    y = reference(x.astype(np.float64), w.astype(np.float64),
                  b.astype(np.float64), stride, pad, act, groups).astype(np.float32)
    save(folder, model(x.shape, y.shape, w, b, k, stride, pad, act, groups))
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    for name, a in (("input_0.pb", numpy_helper.from_array(x, "x")),
                    ("output_0.pb", numpy_helper.from_array(y, "y"))):
        with open(os.path.join(folder, "test_data_set_0", name), "wb") as f:
            f.write(a.SerializeToString())


def save(folder, m):
    os.makedirs(folder, exist_ok=True)
    onnx.save(m, os.path.join(folder, "model.onnx"))


def model(x_shape, y_shape, w, b, k, stride, pad, act, groups):
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["conv"], name="dw",
                              group=groups, kernel_shape=[k, k], strides=[stride] * 2,
                              pads=[pad] * 4)]
    last = "conv"
    if act == "relu6":
        nodes += [helper.make_node("Clip", ["conv", "lo", "hi"], ["y"], name="relu6")]
    elif act == "relu":
        nodes += [helper.make_node("Relu", ["conv"], ["y"], name="relu")]
    elif act == "silu":
        nodes += [helper.make_node("Sigmoid", ["conv"], ["sig"], name="sigmoid"),
                  helper.make_node("Mul", ["conv", "sig"], ["y"], name="silu")]
    else:
        nodes[-1].output[0] = "y"
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array(0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6, np.float32), "hi")]
    graph = helper.make_graph(
        nodes, "depthwise", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--inputs-only":
        rng = np.random.default_rng(7)
        for name, (n, c, h, w, *_rest) in CASES.items():
            os.makedirs(os.path.join(sys.argv[2], name), exist_ok=True)
            rng.standard_normal((n, c, h, w)).astype(np.float32).tofile(
                os.path.join(sys.argv[2], name, "x.bin"))
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rng = np.random.default_rng(7)
    for name, (n, c, h, w, k, s, act, groups) in CASES.items():
        make(os.path.join(sys.argv[1], name), n, c, h, w, k, s, act, groups, rng)
        print(name)


if __name__ == "__main__":
    main()
