"""Writes a small CNN for the channels-last test (test/Compile/layouts.test)
and numpy's float64 reference.

conv.onnx: Conv+Relu -> Conv + residual Add + Relu -> MaxPool -> 1x1 Conv
-> GlobalAveragePool, batch 2. The buffers between the oneDNN steps stay
channels-last; the last one, read by a generated kernel, does not.

silu.onnx (test/Compile/swish.test): Conv -> x * sigmoid(x) -> depthwise
Conv -> sigmoid(x) * x -> 1x1 Conv -> HardSwish -> GlobalAveragePool, the
activations as exporters write them (SiLU as a Sigmoid and a Mul that both
read the convolution), each a oneDNN post-op. silu_wide.onnx: the same
at 32x32, where the SiLUs (32768 elements) are generated kernels instead.

inception.onnx (test/Compile/layouts.test): two convolution branches joined
by a channel Concat, a ceil_mode MaxPool, a 1x1 Conv and a
GlobalAveragePool: the concat and the pool are oneDNN steps, channels-last
on both ends.

dense.onnx (test/Compile/layouts.test): a DenseNet block at batch 1, as
torchvision's DenseNet exports it: BatchNormalization + Relu before each
convolution (generated kernels between oneDNN steps), a channel Concat of
the block's input and the new features, and a transition's zero Pad before
its AveragePool.

se.onnx (test/Compile/layouts.test): a squeeze-and-excitation block at
batch 1 as torchvision's EfficientNet exports it: Conv + SiLU, then
GlobalAveragePool, Conv + Relu, Conv + Sigmoid, the scale by Mul, and a
1x1 Conv.

residual.onnx (test/Compile/in-place-sum.test): residual adds whose added
tensor is, or is not, read after the convolution that adds it.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv2d(x, w, b, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    out = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + oh, j:j + ow],
                             w[:, :, i, j])
    return out + b[None, :, None, None]


def save_model(out, name, nodes, weights, x_shape, y_shape):
    """Writes OUT/NAME.onnx: `nodes` over the f32 input x of `x_shape`, with
    `weights` (name -> array, in order) as initializers, to the output y."""
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        [numpy_helper.from_array(a, n) for n, a in weights.items()])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))


def depthwise(x, w, b, pad):
    n, c, h, wd = x.shape
    _, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(kh):
        for j in range(kw):
            tap = w[None, :, 0, i, j, None, None]
            out += xp[:, :, i:i + oh, j:j + ow] * tap
    return out + b[None, :, None, None]


def silu_model(out, rng, name="silu", size=10):
    w1 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.3
    b1 = rng.standard_normal(16).astype(np.float32) * 0.1
    w2 = rng.standard_normal((16, 1, 3, 3)).astype(np.float32) * 0.4
    b2 = rng.standard_normal(16).astype(np.float32) * 0.1
    w3 = rng.standard_normal((12, 16, 1, 1)).astype(np.float32) * 0.5
    b3 = rng.standard_normal(12).astype(np.float32) * 0.5
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c1"], ["g1"], name="sig1"),
        helper.make_node("Mul", ["c1", "g1"], ["a1"], name="silu1"),
        helper.make_node("Conv", ["a1", "w2", "b2"], ["c2"], name="dw",
                         pads=[1, 1, 1, 1], group=16),
        helper.make_node("Sigmoid", ["c2"], ["g2"], name="sig2"),
        helper.make_node("Mul", ["g2", "c2"], ["a2"], name="silu2"),
        helper.make_node("Conv", ["a2", "w3", "b3"], ["c3"], name="conv3"),
        helper.make_node("HardSwish", ["c3"], ["a3"], name="hswish"),
        helper.make_node("GlobalAveragePool", ["a3"], ["y"], name="gap"),
    ]
    save_model(out, name, nodes,
               {"w1": w1, "b1": b1, "w2": w2,
                "b2": b2, "w3": w3, "b3": b3},
               [2, 8, size, size], [2, 12, 1, 1])

    def silu(v):
        return v / (1.0 + np.exp(-v))

    x = rng.standard_normal((2, 8, size, size)).astype(np.float32)
    a1 = silu(conv2d(x.astype(np.float64), w1, b1, 1))
    a2 = silu(depthwise(a1, w2, b2, 1))
    c3 = conv2d(a2, w3, b3, 0)
    a3 = c3 * np.clip(c3 / 6.0 + 0.5, 0.0, 1.0)
    np.save(os.path.join(out, name + "_x.npy"), x)
    np.save(os.path.join(out, name + "_y.npy"),
            a3.mean(axis=(2, 3), keepdims=True).astype(np.float32))


def inception_model(out, rng):
    wa = rng.standard_normal((6, 4, 1, 1)).astype(np.float32) * 0.5
    ba = rng.standard_normal(6).astype(np.float32) * 0.1
    wb = rng.standard_normal((10, 4, 3, 3)).astype(np.float32) * 0.3
    bb = rng.standard_normal(10).astype(np.float32) * 0.1
    wc = rng.standard_normal((8, 16, 1, 1)).astype(np.float32) * 0.3
    bc = rng.standard_normal(8).astype(np.float32) * 0.1
    nodes = [
        helper.make_node("Conv", ["x", "wa", "ba"], ["ca"], name="branch_a"),
        helper.make_node("Relu", ["ca"], ["ra"], name="relu_a"),
        helper.make_node("Conv", ["x", "wb", "bb"], ["cb"], name="branch_b",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["cb"], ["rb"], name="relu_b"),
        helper.make_node("Concat", ["ra", "rb"], ["cat"], name="join", axis=1),
        helper.make_node("MaxPool", ["cat"], ["p"], name="pool",
                         kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        helper.make_node("Conv", ["p", "wc", "bc"], ["cc"], name="conv_c"),
        helper.make_node("GlobalAveragePool", ["cc"], ["y"], name="gap"),
    ]
    save_model(out, "inception", nodes,
               {"wa": wa, "ba": ba, "wb": wb,
                "bb": bb, "wc": wc, "bc": bc},
               [2, 4, 10, 10], [2, 8, 1, 1])

    x = rng.standard_normal((2, 4, 10, 10)).astype(np.float32)
    ra = np.maximum(conv2d(x.astype(np.float64), wa, ba, 0), 0)
    rb = np.maximum(conv2d(x.astype(np.float64), wb, bb, 1), 0)
    cat = np.concatenate([ra, rb], axis=1)
    # ceil_mode: 10 -> 5 windows of 3 at stride 2, the last one cut short.
    p = np.zeros((2, 16, 5, 5))
    for i in range(5):
        for j in range(5):
            window = cat[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
            p[:, :, i, j] = window.max(axis=(2, 3))
    cc = conv2d(p, wc, bc, 0)
    np.save(os.path.join(out, "inception_x.npy"), x)
    np.save(os.path.join(out, "inception_y.npy"),
            cc.mean(axis=(2, 3), keepdims=True).astype(np.float32))


def batch_norm(x, scale, bias, mean, var, eps=1e-5):
    shape = (1, -1, 1, 1)
    return ((x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
            * scale.reshape(shape) + bias.reshape(shape))


def dense_model(out, rng):
    def bn_params(c):
        return {"scale": rng.uniform(0.5, 1.5, c), "bias": rng.uniform(-.5, .5, c),
                "mean": rng.uniform(-1, 1, c), "var": rng.uniform(0.5, 2, c)}
    w0 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.3
    b0 = rng.standard_normal(16).astype(np.float32) * 0.1
    w1 = rng.standard_normal((8, 16, 3, 3)).astype(np.float32) * 0.2
    b1 = rng.standard_normal(8).astype(np.float32) * 0.1
    w2 = rng.standard_normal((16, 24, 1, 1)).astype(np.float32) * 0.3
    b2 = rng.standard_normal(16).astype(np.float32) * 0.1
    w3 = rng.standard_normal((12, 16, 1, 1)).astype(np.float32) * 0.3
    b3 = rng.standard_normal(12).astype(np.float32) * 0.1
    bn1, bn2 = bn_params(16), bn_params(24)
    weights = {"w0": w0, "b0": b0, "w1": w1, "b1": b1, "w2": w2, "b2": b2,
               "w3": w3, "b3": b3,
               "zeros": np.zeros(8, dtype=np.int64)}
    for prefix, bn in (("bn1_", bn1), ("bn2_", bn2)):
        for key, value in bn.items():
            weights[prefix + key] = value.astype(np.float32)

    def bn_node(name, x, y):
        return helper.make_node(
            "BatchNormalization",
            [x] + [name + "_" + k for k in ("scale", "bias", "mean", "var")],
            [y], name=name)
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="conv0",
                         pads=[1, 1, 1, 1]),
        bn_node("bn1", "c0", "n1"),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w1", "b1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["c0", "c1"], ["cat"], name="join", axis=1),
        bn_node("bn2", "cat", "n2"),
        helper.make_node("Relu", ["n2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "w2", "b2"], ["c2"], name="conv2"),
        helper.make_node("Pad", ["c2", "zeros"], ["padded"], name="pad"),
        helper.make_node("AveragePool", ["padded"], ["p"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w3", "b3"], ["c3"], name="conv3"),
        helper.make_node("GlobalAveragePool", ["c3"], ["y"], name="gap"),
    ]
    save_model(out, "dense", nodes, weights, [1, 8, 64, 64], [1, 12, 1, 1])

    x = rng.standard_normal((1, 8, 64, 64)).astype(np.float32)
    f = {k: v.astype(np.float64) for k, v in weights.items()}

    def bn(v, prefix):
        return batch_norm(v, f[prefix + "scale"], f[prefix + "bias"],
                          f[prefix + "mean"], f[prefix + "var"])
    c0 = conv2d(x.astype(np.float64), w0, b0, 1)
    r1 = np.maximum(bn(c0, "bn1_"), 0)
    c1 = conv2d(r1, w1, b1, 1)
    r2 = np.maximum(bn(np.concatenate([c0, c1], axis=1), "bn2_"), 0)
    c2 = conv2d(r2, w2, b2, 0)
    p = c2.reshape(1, 16, 32, 2, 32, 2).mean(axis=(3, 5))
    c3 = conv2d(p, w3, b3, 0)
    np.save(os.path.join(out, "dense_x.npy"), x)
    np.save(os.path.join(out, "dense_y.npy"),
            c3.mean(axis=(2, 3), keepdims=True).astype(np.float32))


def se_model(out, rng):
    w0 = rng.standard_normal((32, 8, 3, 3)).astype(np.float32) * 0.3
    b0 = rng.standard_normal(32).astype(np.float32) * 0.1
    w1 = rng.standard_normal((8, 32, 1, 1)).astype(np.float32) * 0.3
    b1 = rng.standard_normal(8).astype(np.float32) * 0.1
    w2 = rng.standard_normal((32, 8, 1, 1)).astype(np.float32) * 0.3
    b2 = rng.standard_normal(32).astype(np.float32) * 0.1
    w3 = rng.standard_normal((16, 32, 1, 1)).astype(np.float32) * 0.3
    b3 = rng.standard_normal(16).astype(np.float32) * 0.1
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="conv0",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c0"], ["g0"], name="sig0"),
        helper.make_node("Mul", ["c0", "g0"], ["a0"], name="silu0"),
        helper.make_node("GlobalAveragePool", ["a0"], ["s"], name="squeeze"),
        helper.make_node("Conv", ["s", "w1", "b1"], ["c1"], name="fc1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="fc2"),
        helper.make_node("Sigmoid", ["c2"], ["g"], name="gate"),
        helper.make_node("Mul", ["a0", "g"], ["scaled"], name="excite"),
        helper.make_node("Conv", ["scaled", "w3", "b3"], ["y"], name="project"),
    ]
    save_model(out, "se", nodes,
               {"w0": w0, "b0": b0, "w1": w1, "b1": b1, "w2": w2, "b2": b2,
                "w3": w3, "b3": b3},
               [1, 8, 32, 32], [1, 16, 32, 32])

    def sigmoid(v):
        return 1.0 / (1.0 + np.exp(-v))
    x = rng.standard_normal((1, 8, 32, 32)).astype(np.float32)
    c0 = conv2d(x.astype(np.float64), w0, b0, 1)
    a0 = c0 * sigmoid(c0)
    s = a0.mean(axis=(2, 3), keepdims=True)
    g = sigmoid(conv2d(np.maximum(conv2d(s, w1, b1, 0), 0), w2, b2, 0))
    np.save(os.path.join(out, "se_x.npy"), x)
    np.save(os.path.join(out, "se_y.npy"),
            conv2d(a0 * g, w3, b3, 0).astype(np.float32))


def shared_model(out, rng):
    """A generated kernel's result read by a oneDNN convolution and by
    another generated kernel: sin(conv0) feeds conv1 and the maximum after
    it (which no oneDNN epilogue takes)."""
    w0 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.3
    b0 = rng.standard_normal(16).astype(np.float32) * 0.1
    w1 = rng.standard_normal((16, 16, 3, 3)).astype(np.float32) * 0.05
    b1 = rng.standard_normal(16).astype(np.float32) * 0.05
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="conv0",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Sin", ["c0"], ["s0"], name="sin0"),
        helper.make_node("Conv", ["s0", "w1", "b1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Max", ["c1", "s0"], ["y"], name="maximum"),
    ]
    save_model(out, "shared", nodes, {"w0": w0, "b0": b0, "w1": w1, "b1": b1},
               [1, 8, 16, 16], [1, 16, 16, 16])
    x = rng.standard_normal((1, 8, 16, 16)).astype(np.float32)
    s0 = np.sin(conv2d(x.astype(np.float64), w0, b0, 1))
    np.save(os.path.join(out, "shared_x.npy"), x)
    np.save(os.path.join(out, "shared_y.npy"),
            np.maximum(conv2d(s0, w1, b1, 1), s0).astype(np.float32))


def residual_model(out, rng):
    """Residual adds as oneDNN's sum post-op (test/Compile/in-place-sum.test):
    a = relu(conv0(x)), b = relu(conv1(a)), c = relu(conv2(b) + a), whose
    sum `a` nobody reads later (the result takes its buffer), then
    y = relu(conv3(c) + b) * b, whose sum `b` the final Mul reads again
    (copied, not overwritten)."""
    weights = {}
    for i, (m, c) in enumerate([(16, 8), (16, 16), (16, 16), (16, 16)]):
        weights[f"w{i}"] = rng.standard_normal((m, c, 3, 3)).astype(
            np.float32) * 0.08
        weights[f"b{i}"] = rng.standard_normal(m).astype(np.float32) * 0.1
    conv = [helper.make_node("Conv", [src, f"w{i}", f"b{i}"], [f"c{i}"],
                             name=f"conv{i}", pads=[1, 1, 1, 1])
            for i, src in enumerate(["x", "a", "b", "c"])]
    nodes = [
        conv[0], helper.make_node("Relu", ["c0"], ["a"], name="relu0"),
        conv[1], helper.make_node("Relu", ["c1"], ["b"], name="relu1"),
        conv[2], helper.make_node("Add", ["c2", "a"], ["s2"], name="add2"),
        helper.make_node("Relu", ["s2"], ["c"], name="relu2"),
        conv[3], helper.make_node("Add", ["c3", "b"], ["s3"], name="add3"),
        helper.make_node("Relu", ["s3"], ["r3"], name="relu3"),
        helper.make_node("Mul", ["r3", "b"], ["y"], name="gate"),
    ]
    save_model(out, "residual", nodes, weights, [2, 8, 12, 12],
               [2, 16, 12, 12])
    x = rng.standard_normal((2, 8, 12, 12)).astype(np.float32)
    f = {k: v.astype(np.float64) for k, v in weights.items()}

    def cv(v, i):
        return conv2d(v, f[f"w{i}"], f[f"b{i}"], 1)
    a = np.maximum(cv(x.astype(np.float64), 0), 0)
    b = np.maximum(cv(a, 1), 0)
    c = np.maximum(cv(b, 2) + a, 0)
    y = np.maximum(cv(c, 3) + b, 0) * b
    np.save(os.path.join(out, "residual_x.npy"), x)
    np.save(os.path.join(out, "residual_y.npy"), y.astype(np.float32))


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(5)
    w1 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.3
    b1 = rng.standard_normal(16).astype(np.float32) * 0.1
    w2 = rng.standard_normal((16, 16, 3, 3)).astype(np.float32) * 0.2
    b2 = rng.standard_normal(16).astype(np.float32) * 0.1
    w3 = rng.standard_normal((12, 16, 1, 1)).astype(np.float32) * 0.3
    b3 = rng.standard_normal(12).astype(np.float32) * 0.1
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["s2"], name="residual"),
        helper.make_node("Relu", ["s2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w3", "b3"], ["c3"], name="conv3"),
        helper.make_node("GlobalAveragePool", ["c3"], ["y"], name="gap"),
    ]
    save_model(out, "conv", nodes,
               {"w1": w1, "b1": b1, "w2": w2,
                "b2": b2, "w3": w3, "b3": b3},
               [2, 8, 10, 10], [2, 12, 1, 1])

    x = rng.standard_normal((2, 8, 10, 10)).astype(np.float32)
    r1 = np.maximum(conv2d(x.astype(np.float64), w1, b1, 1), 0)
    r2 = np.maximum(conv2d(r1, w2, b2, 1) + r1, 0)
    p = r2.reshape(2, 16, 5, 2, 5, 2).max(axis=(3, 5))
    c3 = conv2d(p, w3, b3, 0)
    np.save(os.path.join(out, "conv_x.npy"), x)
    np.save(os.path.join(out, "conv_y.npy"),
            c3.mean(axis=(2, 3), keepdims=True).astype(np.float32))
    silu_model(out, rng)
    inception_model(out, rng)
    dense_model(out, rng)
    se_model(out, rng)
    shared_model(out, rng)
    silu_model(out, rng, "silu_wide", 32)
    residual_model(out, rng)


if __name__ == "__main__":
    main()
