#!/usr/bin/python3
"""Writes the committed fixtures of the tensorio tests (run from anywhere):

  fixtures/npy/<name>.npy   arrays saved by numpy (np.save or write_array)
  fixtures/npy/<name>.bin   the same arrays' bytes (arr.tobytes())
  fixtures/npy/manifest.txt "<name> <tensorio type> <dims, comma-separated>"
  fixtures/npy/bad/*.npy    files readNpy must refuse
  fixtures/pb/<name>.pb     TensorProtos with data in the typed fields
  fixtures/pb/<name>.npy    onnx.numpy_helper.to_array of each .pb (and of a
                            few files of the installed ONNX test data)

Needs numpy and onnx (Debian's /usr/bin/python3 has both).
"""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
DATA = "/usr/share/libonnx-testdata/data"


def ints(dtype, n):
    info = np.iinfo(dtype)
    vals = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2]
    vals += list(range(3, 3 + n - len(vals)))
    return np.array(vals[:n], dtype=dtype)


def floats(dtype, n):
    special = [np.nan, np.inf, -np.inf, -0.0, np.finfo(dtype).tiny / 4,
               np.finfo(dtype).max]
    return np.array(special + [i * 0.5 - 3 for i in range(n - len(special))],
                    dtype=dtype)


def write_npy():
    out = os.path.join(HERE, "npy")
    os.makedirs(os.path.join(out, "bad"), exist_ok=True)
    arrays = {
        "f32": ("f32", floats(np.float32, 12).reshape(3, 4)),
        "f64": ("f64", floats(np.float64, 12).reshape(2, 3, 2)),
        "f16": ("f16", floats(np.float16, 10)),
        "bool": ("bool", np.array([[True, False, True], [False, False, True]])),
        "i8": ("i8", ints(np.int8, 6).reshape(2, 3)),
        "i16": ("i16", ints(np.int16, 6)),
        "i32": ("i32", ints(np.int32, 6).reshape(3, 2)),
        "i64": ("i64", ints(np.int64, 8).reshape(2, 2, 2)),
        "u8": ("u8", ints(np.uint8, 6)),
        "u16": ("u16", ints(np.uint16, 6)),
        "u32": ("u32", ints(np.uint32, 6)),
        "u64": ("u64", ints(np.uint64, 6).reshape(1, 6)),
        "scalar_f32": ("f32", np.array(3.5, dtype=np.float32)),
        "scalar_i64": ("i64", np.array(-7, dtype=np.int64)),
        "empty_f32": ("f32", np.zeros((0, 3), dtype=np.float32)),
        "empty_i64": ("i64", np.zeros((2, 0, 5), dtype=np.int64)),
        "big_dim": ("u8", np.arange(300, dtype=np.uint16).astype(np.uint8)),
    }
    lines = []
    for name, (tname, arr) in arrays.items():
        np.save(os.path.join(out, name + ".npy"), arr)
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(arr.tobytes())
        lines.append("%s %s %s" % (name, tname,
                                   ",".join(str(d) for d in arr.shape)))
    # Format versions 2.0 and 3.0 of the f32 array (np.save picks 1.0).
    for major in (2, 3):
        name = "f32_v%d" % major
        with open(os.path.join(out, name + ".npy"), "wb") as f:
            np.lib.format.write_array(f, arrays["f32"][1], version=(major, 0))
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(arrays["f32"][1].tobytes())
        lines.append("%s f32 3,4" % name)
    with open(os.path.join(out, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")

    bad = os.path.join(out, "bad")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(os.path.join(bad, "fortran.npy"), np.asfortranarray(a))
    np.save(os.path.join(bad, "big_endian.npy"), a.astype(">f4"))
    np.save(os.path.join(bad, "complex.npy"), a.astype(np.complex64))
    np.save(os.path.join(bad, "structured.npy"),
            np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")]))
    np.save(os.path.join(bad, "object.npy"), np.array([1, "a"], dtype=object),
            allow_pickle=True)


def write_pb():
    out = os.path.join(HERE, "pb")
    os.makedirs(out, exist_ok=True)
    # helper.make_tensor(raw=False) fills the typed fields, which the ONNX
    # test data itself almost never uses.
    f16 = np.array([1.5, -2.0, np.inf, np.nan, 6.1e-5, 65504], np.float16)
    typed = {
        "typed_float": (TensorProto.FLOAT, [2, 3],
                        [1.5, -2.25, np.inf, np.nan, 0.0, 3.0e38]),
        "typed_double": (TensorProto.DOUBLE, [3], [1e300, -0.5, 2.0]),
        "typed_int32": (TensorProto.INT32, [2, 2], [-2**31, 2**31 - 1, 0, 7]),
        "typed_int64": (TensorProto.INT64, [3], [-2**63, 2**63 - 1, 5]),
        "typed_int8": (TensorProto.INT8, [4], [-128, 127, 0, -1]),
        "typed_int16": (TensorProto.INT16, [2], [-32768, 32767]),
        "typed_uint8": (TensorProto.UINT8, [3], [0, 255, 17]),
        "typed_uint16": (TensorProto.UINT16, [2], [0, 65535]),
        "typed_uint32": (TensorProto.UINT32, [2], [0, 2**32 - 1]),
        "typed_uint64": (TensorProto.UINT64, [2], [0, 2**64 - 1]),
        "typed_bool": (TensorProto.BOOL, [2, 2], [True, False, False, True]),
        "typed_float16": (TensorProto.FLOAT16, [6], f16),
        "typed_scalar": (TensorProto.FLOAT, [], [4.25]),
        "typed_empty": (TensorProto.INT64, [0, 4], []),
    }
    for name, (dtype, dims, vals) in typed.items():
        t = helper.make_tensor(name, dtype, dims, vals)
        assert not t.HasField("raw_data")
        with open(os.path.join(out, name + ".pb"), "wb") as f:
            f.write(t.SerializeToString())
        np.save(os.path.join(out, name + ".npy"), numpy_helper.to_array(t))
    # bfloat16: onnx 1.12's to_array widens it to float32; store the bits
    # (int32_data) and the widened values.
    bits = [0x3fc0, 0xc000, 0x7f80, 0x7fc0, 0x0001, 0x8000]
    t = TensorProto(name="typed_bfloat16", data_type=TensorProto.BFLOAT16,
                    dims=[2, 3], int32_data=bits)
    with open(os.path.join(out, "typed_bfloat16.pb"), "wb") as f:
        f.write(t.SerializeToString())
    np.save(os.path.join(out, "typed_bfloat16.npy"), numpy_helper.to_array(t))

    # numpy's reading of a few files of the installed conformance data.
    for rel in ["node/test_add/test_data_set_0/input_0.pb",
                "node/test_cast_FLOAT_to_FLOAT16/test_data_set_0/output_0.pb",
                "node/test_and2d/test_data_set_0/output_0.pb",
                "node/test_argmax_default_axis_example/test_data_set_0/output_0.pb",
                "node/test_bitshift_left_uint64/test_data_set_0/input_0.pb",
                "node/test_max_int16/test_data_set_0/input_0.pb",
                "node/test_bernoulli/test_data_set_0/input_0.pb"]:
        t = onnx.load_tensor(os.path.join(DATA, rel))
        name = "data_" + rel.split("/")[1] + "_" + rel.split("/")[-1][:-3]
        np.save(os.path.join(out, name + ".npy"), numpy_helper.to_array(t))


if __name__ == "__main__":
    write_npy()
    write_pb()
