#!/usr/bin/python3
"""Small models with the patterns of real CNNs and vision transformers that the cuda target's
layout, partition and mapping rules are about (test/Gpu/cnn-patterns.test):

- dw_f16.onnx: a float16 depthwise 3x3 convolution with a bias, its input from a 3x3
  convolution (the f16 sum accumulates in f32 and is cast back);
- grouped_f16.onnx: a float16 grouped 3x3 convolution of ResNeXt's form (groups of 4
  channels and 4 filters) with a bias and a ReLU; grouped_f16_b32.onnx the same at batch 32;
- roll_ln.onnx: a Swin-style roll (two slices and a concat over the image's rows) before a
  LayerNorm over the channels of [N, H, W, C];
  roll_case/ holds it with a float64 reference;
- dropout0.onnx: Dropout with ratio 0 and training_mode true (torchvision's Swin exports its
  attention dropout so), which is the identity.
- qkv_heads.onnx: a vision transformer's packed query/key/value projection split into heads
  (a slice, a reshape and a transpose each), the three chains interleaved as exporters write
  them.
- rope.onnx: a decoder's query and key projections, each split into heads and rotated (RoPE:
  q * cos + rotate_half(q) * sin), written as transformers' Llama exports them: both products
  and head splits first, then each rotation.

    make_cnn_patterns.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(0)


def save(name, nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))


f16 = TensorProto.FLOAT16
c = 16
w1 = numpy_helper.from_array(rng.standard_normal((c, c, 3, 3)).astype(np.float16), "w1")
w2 = numpy_helper.from_array(rng.standard_normal((c, 1, 3, 3)).astype(np.float16), "w2")
b2 = numpy_helper.from_array(rng.standard_normal((c,)).astype(np.float16), "b2")
save("dw_f16",
     [helper.make_node("Conv", ["x", "w1"], ["h"], name="full", pads=[1, 1, 1, 1]),
      helper.make_node("Conv", ["h", "w2", "b2"], ["y"], name="depthwise", group=c,
                       pads=[1, 1, 1, 1])],
     [helper.make_tensor_value_info("x", f16, [4, c, 32, 32])],
     [helper.make_tensor_value_info("y", f16, [4, c, 32, 32])], [w1, w2, b2])

# grouped_f16: a float16 grouped 3x3 convolution of ResNeXt's form (32 groups of 4 channels,
# 4 filters each) with a bias and a ReLU, at batch 8; grouped_f16_b32 the same at batch 32, a
# grid large enough for rows of lanes.
g, cg = 32, 4
w3 = numpy_helper.from_array(rng.standard_normal((g * cg, cg, 3, 3)).astype(np.float16), "w3")
b3 = numpy_helper.from_array(rng.standard_normal((g * cg,)).astype(np.float16), "b3")
for name, n in (("grouped_f16", 8), ("grouped_f16_b32", 32)):
    save(name,
         [helper.make_node("Conv", ["x", "w3", "b3"], ["conv"], name="grouped", group=g,
                           pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["conv"], ["y"], name="relu")],
         [helper.make_tensor_value_info("x", f16, [n, g * cg, 28, 28])],
         [helper.make_tensor_value_info("y", f16, [n, g * cg, 28, 28])], [w3, b3])

f32 = TensorProto.FLOAT
shape = [2, 8, 8, 32]
i64 = lambda n, v: numpy_helper.from_array(np.array(v, dtype=np.int64), n)  # noqa: E731
gamma = numpy_helper.from_array(np.ones(32, np.float32), "gamma")
save("roll_ln",
     [helper.make_node("Slice", ["x", "s0", "e0", "ax"], ["top"], name="roll_top"),
      helper.make_node("Slice", ["x", "s1", "e1", "ax"], ["bottom"], name="roll_bottom"),
      helper.make_node("Concat", ["top", "bottom"], ["rolled"], name="roll", axis=1),
      helper.make_node("LayerNormalization", ["rolled", "gamma"], ["y"], name="norm",
                       axis=-1)],
     [helper.make_tensor_value_info("x", f32, shape)],
     [helper.make_tensor_value_info("y", f32, shape)],
     [i64("s0", [3]), i64("e0", [8]), i64("s1", [0]), i64("e1", [3]), i64("ax", [1]), gamma])

# roll_ln as a case (model.onnx and a float64 reference: np.roll, then the norm), for the
# rewrites' values on the CPU (Inputs/rewrite_on_cpu.sh).
case = os.path.join(out, "roll_case")
os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
os.replace(os.path.join(out, "roll_ln.onnx"), os.path.join(case, "model.onnx"))
os.symlink(os.path.join("roll_case", "model.onnx"), os.path.join(out, "roll_ln.onnx"))
x = rng.standard_normal(shape).astype(np.float32)
rolled = np.roll(x.astype(np.float64), -3, axis=1)
mean = rolled.mean(-1, keepdims=True)
ref = (rolled - mean) / np.sqrt(((rolled - mean) ** 2).mean(-1, keepdims=True) + 1e-5)
for name, arr, tname in (("input_0.pb", x, "x"), ("output_0.pb", ref.astype(np.float32), "y")):
    with open(os.path.join(case, "test_data_set_0", name), "wb") as f:
        f.write(numpy_helper.from_array(arr, tname).SerializeToString())

save("dropout0",
     [helper.make_node("Softmax", ["x"], ["p"], name="softmax", axis=-1),
      helper.make_node("Dropout", ["p", "ratio", "training"], ["y"], name="drop")],
     [helper.make_tensor_value_info("x", f32, [4, 64])],
     [helper.make_tensor_value_info("y", f32, [4, 64])],
     [numpy_helper.from_array(np.array(0.0, np.float32), "ratio"),
      numpy_helper.from_array(np.array(True), "training")])

# A vision transformer's head split as torch exports it: the packed in-projection's result
# sliced into query, key and value, each reshaped into heads and transposed, the three chains
# written interleaved (the slices, then the reshapes, then the transposes).
tokens, heads, dim = 197, 12, 64
nodes = []
for i, part in enumerate("qkv"):
    nodes.append(helper.make_node("Slice", ["qkv", f"s{i}", f"e{i}", "last"], [f"{part}_flat"],
                                  name=f"slice_{part}"))
for part in "qkv":
    nodes.append(helper.make_node("Reshape", [f"{part}_flat", "heads_shape"], [f"{part}_heads"],
                                  name=f"split_{part}"))
for part in "qkv":
    nodes.append(helper.make_node("Transpose", [f"{part}_heads"], [part], name=f"heads_{part}",
                                  perm=[1, 0, 2]))
width = heads * dim
save("qkv_heads", nodes,
     [helper.make_tensor_value_info("qkv", f16, [tokens, 3 * width])],
     [helper.make_tensor_value_info(part, f16, [heads, tokens, dim]) for part in "qkv"],
     [i64(f"s{i}", [i * width]) for i in range(3)] +
     [i64(f"e{i}", [(i + 1) * width]) for i in range(3)] +
     [i64("last", [1]), i64("heads_shape", [tokens, heads, dim])])

# A decoder's rotary embedding as transformers' Llama exports it: the query and key products
# and their head splits first, then each rotation, q * cos + cat(-q[..., D/2:], q[..., :D/2])
# * sin, whose head split is read by three ops (the product with cos and the two halves).
seq, heads, dim = 128, 4, 64
width = heads * dim
half = dim // 2
nodes = []
for part in "qk":
    nodes += [helper.make_node("MatMul", ["x", f"w{part}"], [f"{part}_flat"], name=f"proj_{part}"),
              helper.make_node("Reshape", [f"{part}_flat", "heads_shape"], [f"{part}_heads"],
                               name=f"split_{part}"),
              helper.make_node("Transpose", [f"{part}_heads"], [f"{part}_t"], name=f"heads_{part}",
                               perm=[0, 2, 1, 3])]
for part in "qk":
    nodes += [helper.make_node("Mul", [f"{part}_t", "cos"], [f"{part}_c"], name=f"cos_{part}"),
              helper.make_node("Slice", [f"{part}_t", "zero", "half", "axis"], [f"{part}_1"],
                               name=f"first_{part}"),
              helper.make_node("Slice", [f"{part}_t", "half", "end", "axis"], [f"{part}_2"],
                               name=f"second_{part}"),
              helper.make_node("Neg", [f"{part}_2"], [f"{part}_n"], name=f"neg_{part}"),
              helper.make_node("Concat", [f"{part}_n", f"{part}_1"], [f"{part}_r"],
                               name=f"rotate_{part}", axis=-1),
              helper.make_node("Mul", [f"{part}_r", "sin"], [f"{part}_s"], name=f"sin_{part}"),
              helper.make_node("Add", [f"{part}_c", f"{part}_s"], [part], name=f"rope_{part}")]
angles = np.arange(seq)[:, None] * (10000.0 ** (-np.arange(half) / half))[None, :]
angles = np.concatenate([angles, angles], axis=-1)[None, None]
save("rope", nodes,
     [helper.make_tensor_value_info("x", f16, [1, seq, width])],
     [helper.make_tensor_value_info(part, f16, [1, heads, seq, dim]) for part in "qk"],
     [numpy_helper.from_array((rng.standard_normal((width, width)) / 16).astype(np.float16),
                              f"w{part}") for part in "qk"] +
     [numpy_helper.from_array(np.cos(angles).astype(np.float16), "cos"),
      numpy_helper.from_array(np.sin(angles).astype(np.float16), "sin"),
      i64("zero", [0]), i64("half", [half]), i64("end", [dim]), i64("axis", [-1]),
      i64("heads_shape", [1, seq, heads, dim])])

# A decoder's gated feed-forward (SwiGLU) as transformers writes it: the gate's product, its
# silu (x * sigmoid(x)), then the up product and the multiply, then the down product.
tokens, width, inner = 256, 256, 704
save("swiglu",
     [helper.make_node("MatMul", ["x", "wg"], ["g"], name="gate"),
      helper.make_node("Sigmoid", ["g"], ["gs"], name="gate_sigmoid"),
      helper.make_node("Mul", ["g", "gs"], ["a"], name="silu"),
      helper.make_node("MatMul", ["x", "wu"], ["u"], name="up"),
      helper.make_node("Mul", ["a", "u"], ["h"], name="gated"),
      helper.make_node("MatMul", ["h", "wd"], ["y"], name="down")],
     [helper.make_tensor_value_info("x", f16, [tokens, width])],
     [helper.make_tensor_value_info("y", f16, [tokens, width])],
     [numpy_helper.from_array((rng.standard_normal(shape) / 16).astype(np.float16), name)
      for name, shape in [("wg", (width, inner)), ("wu", (width, inner)), ("wd", (inner, width))]])
