"""What the GPU tests' case generators share (make_row_cases.py,
make_lm_head_cases.py, make_attention_cases.py): rounding float64 values to
bf16, f16 and f32, tensors of those types, and a case in the ONNX backend-test
layout (model.onnx and test_data_set_0/{input,output}_N.pb).

The generators run with their own directory on sys.path (`python
test/Gpu/Inputs/make_row_cases.py OUT`), so `import onnx_cases` finds this.
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BF16, F16, F32 = TensorProto.BFLOAT16, TensorProto.FLOAT16, TensorProto.FLOAT
I64 = TensorProto.INT64


def to_bf16_bits(x):
    """Rounds to nearest even bfloat16, as uint16 words. Goes through float32:
    the double rounding can land one bf16 unit off on a float64 value just
    beside a tie, far inside the tests' tolerances."""
    a = np.asarray(x, np.float32)
    bits = a.reshape(-1).view(np.uint32).astype(np.uint64)
    sixteen = np.uint64(16)
    rounded = (bits + np.uint64(0x7FFF) +
               ((bits >> sixteen) & np.uint64(1))) >> sixteen
    return rounded.astype(np.uint16).reshape(a.shape)


def from_bf16_bits(words):
    words = np.asarray(words)
    flat = words.reshape(-1).astype(np.uint32) << np.uint32(16)
    return flat.view(np.float32).astype(np.float64).reshape(words.shape)


def bf16(x):
    """x rounded to bfloat16's values, as float64."""
    return from_bf16_bits(to_bf16_bits(x))


def round_to(x, dtype):
    """x (float64) rounded to dtype's values, as float64."""
    if dtype == F32:
        return np.asarray(x, np.float32).astype(np.float64)
    if dtype == F16:
        return np.asarray(x, np.float16).astype(np.float64)
    return bf16(x)


def tensor(x, name, dtype=BF16):
    """A TensorProto holding x (rounded to dtype) as dtype."""
    if dtype == I64:
        return numpy_helper.from_array(np.asarray(x, np.int64), name)
    if dtype == BF16:
        t = TensorProto()
        t.name = name
        t.data_type = BF16
        t.dims.extend(np.shape(x))
        t.raw_data = to_bf16_bits(x).astype("<u2").tobytes()
        return t
    np_type = np.float16 if dtype == F16 else np.float32
    return numpy_helper.from_array(np.asarray(x, np_type), name)


def write_pb(path, proto):
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def save_case(out, name, nodes, inputs, outputs, initializers=()):
    """Writes OUT/NAME/model.onnx (opset 17, checked) and its data set.
    inputs, outputs, initializers: (name, array, dtype) triples, the arrays
    float64 and rounded to dtype when stored."""
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, t, list(np.shape(a)))
         for n, a, t in inputs],
        [helper.make_tensor_value_info(n, t, list(np.shape(a)))
         for n, a, t in outputs],
        [tensor(a, n, t) for n, a, t in initializers])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    data = os.path.join(out, name, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))
    for kind, entries in (("input", inputs), ("output", outputs)):
        for i, (n, a, t) in enumerate(entries):
            write_pb(os.path.join(data, f"{kind}_{i}.pb"), tensor(a, n, t))
