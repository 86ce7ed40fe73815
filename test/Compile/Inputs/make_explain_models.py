#!/usr/bin/env python3
"""Writes the models and tensors that explain.test and decisions.test use into
a folder: one small model per kernel kind, each with an input NAME_x.npy and
numpy's float64 reference NAME_y.npy.

poi.onnx     Reshape (a view of the input) -> Add -> Relu        pointwise
red.onnx     Exp -> ReduceSum over 10000 elements per row         reduction
rows.onnx    (x * 2 + b) -> LayerNorm -> Softmax -> ReduceSum, Add: 256 rows
             of 96, a persistent reduction split into row blocks
rows3.onnx   LayerNorm over x [4, 16, 96]: 64 rows over two dimensions
mlp.onnx     MatMul (3x8x6) -> Add -> Relu -> Softmax             matmul
conv.onnx    Conv 3x3 (+bias) -> Add (residual) -> Relu           conv / library
attn.onnx    MatMul(x, x^T) -> Mul -> Softmax -> MatMul(., x)     attention
chain.onnx   50 Adds in a row: more than one kernel may hold (48 ops)
imatmul.onnx an int32 MatMul (no library kernel takes it)
gelu.onnx    the five nodes of an exported GELU (x/sqrt2, Erf, +1, *x, *0.5),
             which the graph layer fuses into one op
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(out, name, nodes, inputs, outputs, initializers, x, y):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    np.save(os.path.join(out, name + "_x.npy"), x)
    np.save(os.path.join(out, name + "_y.npy"), y)


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def const(array, name):
    return numpy_helper.from_array(np.asarray(array), name)


def softmax(a, axis=-1):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def poi(out, rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    c = rng.standard_normal((6, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
        helper.make_node("Add", ["r", "c"], ["a"], name="add"),
        helper.make_node("Relu", ["a"], ["y"], name="relu")]
    y = np.maximum(x.astype(np.float64).reshape(6, 4) + c, 0)
    save(out, "poi", nodes, [tensor("x", [4, 6])], [tensor("y", [6, 4])],
         [const(np.array([6, 4], np.int64), "shape"), const(c, "c")], x, y)


def red(out, rng):
    x = (rng.standard_normal((2, 10000)) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("Exp", ["x"], ["e"], name="exp"),
        helper.make_node("ReduceSum", ["e", "axes"], ["y"], name="sum",
                         keepdims=1)]
    y = np.exp(x.astype(np.float64)).sum(axis=1, keepdims=True)
    save(out, "red", nodes, [tensor("x", [2, 10000])], [tensor("y", [2, 1])],
         [const(np.array([1], np.int64), "axes")], x, y)


def rows(out, rng):
    n, d = 256, 96
    b = rng.standard_normal(d).astype(np.float32)
    scale = rng.standard_normal(d).astype(np.float32)
    nodes = [
        helper.make_node("Mul", ["x", "two"], ["m"], name="scale2"),
        helper.make_node("Add", ["m", "b"], ["a"], name="shift"),
        helper.make_node("LayerNormalization", ["a", "scale"], ["ln"],
                         name="norm", axis=-1, epsilon=1e-5),
        helper.make_node("Softmax", ["ln"], ["sm"], name="softmax", axis=1),
        helper.make_node("ReduceSum", ["sm", "axes"], ["s"], name="sum",
                         keepdims=1),
        helper.make_node("Add", ["sm", "s"], ["y"], name="out")]
    x = rng.standard_normal((n, d)).astype(np.float32)
    a = x.astype(np.float64) * 2 + b
    ln = (a - a.mean(1, keepdims=True)) / np.sqrt(
        a.var(1, keepdims=True) + 1e-5) * scale
    sm = softmax(ln, 1)
    save(out, "rows", nodes, [tensor("x", [n, d])], [tensor("y", [n, d])],
         [const(np.array(2.0, np.float32), "two"), const(b, "b"),
          const(scale, "scale"), const(np.array([1], np.int64), "axes")],
         x, sm + sm.sum(1, keepdims=True))


def rows3(out, rng):
    scale = rng.standard_normal(96).astype(np.float32)
    nodes = [helper.make_node("LayerNormalization", ["x", "scale"], ["y"],
                              name="norm3", axis=-1, epsilon=1e-5)]
    x = rng.standard_normal((4, 16, 96)).astype(np.float32)
    a = x.astype(np.float64)
    y = (a - a.mean(-1, keepdims=True)) / np.sqrt(
        a.var(-1, keepdims=True) + 1e-5) * scale
    save(out, "rows3", nodes, [tensor("x", [4, 16, 96])],
         [tensor("y", [4, 16, 96])], [const(scale, "scale")], x, y)


def mlp(out, rng):
    w = rng.standard_normal((8, 6)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"),
        helper.make_node("Add", ["h", "b"], ["hb"], name="bias"),
        helper.make_node("Relu", ["hb"], ["r"], name="act"),
        helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=-1)]
    x = rng.standard_normal((3, 8)).astype(np.float32)
    y = softmax(np.maximum(x.astype(np.float64) @ w + b, 0))
    save(out, "mlp", nodes, [tensor("x", [3, 8])], [tensor("y", [3, 6])],
         [const(w, "w"), const(b, "b")], x, y)


def conv(out, rng):
    c, h, w = 4, 8, 8
    weight = (rng.standard_normal((c, c, 3, 3)) * 0.3).astype(np.float32)
    bias = rng.standard_normal(c).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c", "x"], ["a"], name="residual"),
        helper.make_node("Relu", ["a"], ["y"], name="act")]
    x = rng.standard_normal((1, c, h, w)).astype(np.float32)
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((1, c, h, w))
    for m in range(c):
        for i in range(h):
            for j in range(w):
                y[0, m, i, j] = (padded[0, :, i:i + 3, j:j + 3] *
                                 weight[m]).sum() + bias[m]
    y = np.maximum(y + x, 0)
    save(out, "conv", nodes, [tensor("x", [1, c, h, w])],
         [tensor("y", [1, c, h, w])], [const(weight, "w"), const(bias, "b")],
         x, y)


def attn(out, rng):
    nodes = [
        helper.make_node("Transpose", ["x"], ["xt"], name="keys",
                         perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x", "xt"], ["s"], name="scores"),
        helper.make_node("Mul", ["s", "scale"], ["ss"], name="scale"),
        helper.make_node("Softmax", ["ss"], ["p"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["p", "x"], ["y"], name="mix")]
    x = rng.standard_normal((2, 8, 16)).astype(np.float32)
    x64 = x.astype(np.float64)
    p = softmax(x64 @ x64.transpose(0, 2, 1) * 0.25)
    save(out, "attn", nodes, [tensor("x", [2, 8, 16])],
         [tensor("y", [2, 8, 16])],
         [const(np.array(0.25, np.float32), "scale")], x, p @ x64)


def chain(out, rng):
    count = 50
    cs = rng.standard_normal((count, 4)).astype(np.float32)
    nodes, inits, prev = [], [], "x"
    for i in range(count):
        name = "y" if i == count - 1 else f"t{i}"
        nodes.append(helper.make_node("Add", [prev, f"c{i}"], [name],
                                      name=f"add{i}"))
        inits.append(const(cs[i], f"c{i}"))
        prev = name
    x = rng.standard_normal((4, 4)).astype(np.float32)
    save(out, "chain", nodes, [tensor("x", [4, 4])], [tensor("y", [4, 4])],
         inits, x, x.astype(np.float64) + cs.astype(np.float64).sum(0))


def imatmul(out, rng):
    w = rng.integers(-3, 4, (8, 64)).astype(np.int32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="imm")]
    x = rng.integers(-3, 4, (64, 8)).astype(np.int32)
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.INT32,
                                                  [64, 8])]
    graph_outputs = [helper.make_tensor_value_info("y", TensorProto.INT32,
                                                   [64, 64])]
    save(out, "imatmul", nodes, graph_inputs, graph_outputs, [const(w, "w")],
         x, x.astype(np.int64) @ w)


def gelu(out, rng):
    nodes = [
        helper.make_node("Div", ["x", "sqrt2"], ["d"], name="Div"),
        helper.make_node("Erf", ["d"], ["e"], name="Erf"),
        helper.make_node("Add", ["e", "one"], ["a"], name="Add_1"),
        helper.make_node("Mul", ["x", "a"], ["m"], name="Mul"),
        helper.make_node("Mul", ["m", "half"], ["g"], name="Mul_1"),
        helper.make_node("Neg", ["g"], ["y"], name="Neg")]
    x = rng.standard_normal((4, 8)).astype(np.float32)
    x64 = x.astype(np.float64)
    from math import erf
    y = -(0.5 * x64 * (1 + np.vectorize(erf)(x64 / np.sqrt(2))))
    save(out, "gelu", nodes, [tensor("x", [4, 8])], [tensor("y", [4, 8])],
         [const(np.array(np.sqrt(2), np.float32), "sqrt2"),
          const(np.array(1.0, np.float32), "one"),
          const(np.array(0.5, np.float32), "half")], x, y)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(5)
    for make in (poi, red, rows, mlp, conv, attn, chain, imatmul, gelu,
                 rows3):
        make(out, rng)


if __name__ == "__main__":
    main()
