#!/usr/bin/env python3
"""precision_check.py REF LOW.npy F32.npy --tolerance T [--closer K]

Checks a run under --precision=fp16|bf16 against the model's reference (an
ONNX TensorProto .pb, as in models/*/test_data_set_*, computed in float64 by
PyTorch; or a .npy): the relative error norm ||low - ref|| / ||ref||, in
float64, must be at most T; and the f32 run must be at least K times closer
(default 10), so that the option demonstrably changed the computation. Both
outputs must still be float32 (the model's interface does not change).
Prints both errors."""
import argparse
import sys

import numpy as np


def load(path):
    if path.endswith(".pb"):
        import onnx
        from onnx import numpy_helper

        tensor = onnx.TensorProto()
        with open(path, "rb") as f:
            tensor.ParseFromString(f.read())
        return numpy_helper.to_array(tensor)
    return np.load(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ref")
    parser.add_argument("low")
    parser.add_argument("f32")
    parser.add_argument("--tolerance", type=float, required=True)
    parser.add_argument("--closer", type=float, default=10.0)
    args = parser.parse_args()

    ref = load(args.ref).astype(np.float64)
    low, f32 = load(args.low), load(args.f32)
    for name, out in (("low", low), ("f32", f32)):
        if out.dtype != np.float32:
            sys.exit(f"{name} output is {out.dtype}, not float32")
        if out.shape != ref.shape:
            sys.exit(f"{name} output shape {out.shape} != {ref.shape}")

    def error(out):
        return np.linalg.norm(out.astype(np.float64) - ref) / np.linalg.norm(ref)

    low_error, f32_error = error(low), error(f32)
    print(f"relative error: low {low_error:.3e}, f32 {f32_error:.3e}, "
          f"tolerance {args.tolerance:.1e}")
    if not np.isfinite(low_error) or low_error > args.tolerance:
        sys.exit(f"low-precision error {low_error:.3e} exceeds "
                 f"{args.tolerance:.1e}")
    if f32_error * args.closer > low_error:
        sys.exit(f"the f32 run ({f32_error:.3e}) is not {args.closer:g}x "
                 f"closer than the low-precision one ({low_error:.3e}): "
                 "did the option change anything?")


if __name__ == "__main__":
    main()
