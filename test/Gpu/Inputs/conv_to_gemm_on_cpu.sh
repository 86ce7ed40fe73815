#!/bin/bash
# conv_to_gemm_on_cpu.sh CASE_DIR WORK_DIR: the cuda target's rewrite of
# convolutions (strata-conv-to-gemm) checked by running it on the CPU: the
# case's model through the graph stage, the pass, then the CPU stages from
# there; the module's output must match the case's stored one. Prints the
# convolution ops left and the kernels made from them.
set -euo pipefail
case_dir=$1 work=$2
name=$(basename "$case_dir")
mkdir -p "$work/$name"
cd "$work/$name"
strata compile "$case_dir/model.onnx" --compile-to=graph --no-cache -o graph.mlir
strata-opt graph.mlir --strata-conv-to-gemm -o rewritten.mlir
echo "$name: $(grep -c 'graph.conv ' rewritten.mlir || true) conv left, $(grep -c 'graph.gemm ' rewritten.mlir || true) gemm, $(grep -c 'graph.gather ' rewritten.mlir || true) gather"
strata compile rewritten.mlir --compile-from=graph --no-cache -o m.strata
inputs=()
for f in "$case_dir"/test_data_set_0/input_*.pb; do inputs+=("$f"); done
strata run m.strata "${inputs[@]}" --output-dir out > /dev/null
/usr/bin/python3 - "$case_dir/test_data_set_0/output_0.pb" out <<'PY'
import glob, sys
import numpy as np
import onnx
from onnx import numpy_helper
t = onnx.TensorProto()
t.ParseFromString(open(sys.argv[1], "rb").read())
expected = numpy_helper.to_array(t)
actual = np.load(glob.glob(sys.argv[2] + "/*.npy")[0])
assert actual.shape == expected.shape, (actual.shape, expected.shape)
err = float(np.abs(actual - expected).max())
assert np.allclose(actual, expected, rtol=1e-3, atol=1e-5), err
PY
