"""Writes cases of ops new in opset 18 in the layout of ONNX's backend tests,
for test/Compile/opset18.test.

Col2Im (torch's `fold`): the expected outputs come from a direct float64 loop
over the definition: every column of every kernel offset adds into the
padded image at its strided, dilated position.

Cases: ONNX's own shapes (a 1x5 block, strides, pads, dilations, a 3-D
image) and a fold of a 3x3 unfold with stride 2 and padding 1 over a batch;
col2im_dynamic_image.onnx takes image_shape as an input, which strata
refuses by name.

BitwiseAnd, BitwiseOr, BitwiseXor on int32 with broadcasting, against numpy.
"""
import itertools
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def col2im(x, image, block, dil, pads, strides):
    rank = len(image)
    n, ck, l = x.shape
    k = int(np.prod(block))
    c = ck // k
    padded = [image[i] + pads[i] + pads[rank + i] for i in range(rank)]
    blocks = [(padded[i] - (dil[i] * (block[i] - 1) + 1)) // strides[i] + 1
              for i in range(rank)]
    assert int(np.prod(blocks)) == l
    out = np.zeros([n, c] + padded, dtype=np.float64)
    xs = x.astype(np.float64).reshape([n, c] + list(block) + [l])
    for kk in itertools.product(*[range(b) for b in block]):
        for col, oo in enumerate(itertools.product(*[range(b) for b in blocks])):
            pos = tuple(oo[i] * strides[i] + kk[i] * dil[i] for i in range(rank))
            out[(slice(None), slice(None)) + pos] += xs[(slice(None), slice(None)) + kk + (col,)]
    crop = tuple(slice(pads[i], pads[i] + image[i]) for i in range(rank))
    return out[(slice(None), slice(None)) + crop]


def case(out, name, x_shape, image, block, dilations=None, pads=None, strides=None):
    rank = len(image)
    dil = dilations or [1] * rank
    pad = pads or [0] * (2 * rank)
    st = strides or [1] * rank
    attrs = {}
    if dilations:
        attrs["dilations"] = dilations
    if pads:
        attrs["pads"] = pads
    if strides:
        attrs["strides"] = strides
    rng = np.random.default_rng(len(name))
    x = rng.standard_normal(x_shape).astype(np.float32)
    y = col2im(x, image, block, dil, pad, st).astype(np.float32)
    node = helper.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["y"],
                            name=name, **attrs)
    consts = [numpy_helper.from_array(np.array(image, np.int64), "image_shape"),
              numpy_helper.from_array(np.array(block, np.int64), "block_shape")]
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))], consts)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, arr, nm in (("input", x, "x"), ("output", y, "y")):
        t = numpy_helper.from_array(arr, nm)
        with open(os.path.join(d, "test_data_set_0", f"{kind}_0.pb"), "wb") as f:
            f.write(t.SerializeToString())


def bitwise(out):
    rng = np.random.default_rng(18)
    a = rng.integers(-2**31, 2**31 - 1, size=[3, 4], dtype=np.int32)
    b = rng.integers(-2**31, 2**31 - 1, size=[4], dtype=np.int32)
    for op, fn in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or),
                   ("BitwiseXor", np.bitwise_xor)):
        name = "bitwise_" + op[7:].lower()
        graph = helper.make_graph(
            [helper.make_node(op, ["a", "b"], ["y"], name=name)], name,
            [helper.make_tensor_value_info("a", TensorProto.INT32, [3, 4]),
             helper.make_tensor_value_info("b", TensorProto.INT32, [4])],
            [helper.make_tensor_value_info("y", TensorProto.INT32, [3, 4])])
        d = os.path.join(out, name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]),
                  os.path.join(d, "model.onnx"))
        for kind, arr, nm in (("input_0", a, "a"), ("input_1", b, "b"),
                              ("output_0", fn(a, b), "y")):
            with open(os.path.join(d, "test_data_set_0", f"{kind}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(arr, nm).SerializeToString())


def main():
    out = sys.argv[1]
    cases = os.path.join(out, "cases")
    case(cases, "col2im", [1, 5, 5], [5, 5], [1, 5])
    case(cases, "col2im_strides", [1, 9, 4], [5, 5], [3, 3], strides=[2, 2])
    case(cases, "col2im_pads", [1, 5, 15], [5, 5], [1, 5], pads=[0, 1, 0, 1])
    case(cases, "col2im_dilations", [1, 4, 5], [6, 6], [2, 2], dilations=[1, 5])
    case(cases, "col2im_5d", [1, 10, 12], [3, 4, 5], [1, 1, 5])
    bitwise(cases)
    case(cases, "col2im_fold", [2, 27, 16], [7, 8], [3, 3], pads=[1, 1, 1, 1],
         strides=[2, 2])
    node = helper.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["y"],
                            name="fold_at_runtime_size")
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 5, 5]),
         helper.make_tensor_value_info("image_shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1, 5], np.int64), "block_shape")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]),
              os.path.join(out, "col2im_dynamic_image.onnx"))


if __name__ == "__main__":
    main()
