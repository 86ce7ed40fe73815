#!/bin/bash
# window_indices_on_cpu.sh CASE_DIR WORK_DIR: strata-gpu-window-indices
# checked by running it on the CPU. The case's model goes through the graph
# stage and strata-conv-to-gemm (which marks its windows' index, mask and
# condition constants), the CPU's fused and kernel stages, then the pass,
# which computes those constants from the loops inside the kernels that
# read them whole; the CPU stages from there build the module, whose output
# must match the case's stored one (numpy.allclose at rtol 1e-3, atol
# 1e-5). Prints how many marked constants the kernels read and how many of
# those reads the pass replaced.
set -euo pipefail
case_dir=$1 work=$2
name=$(basename "$case_dir")
mkdir -p "$work/$name"
cd "$work/$name"
strata compile "$case_dir/model.onnx" --compile-to=graph --no-cache -o graph.mlir
strata-opt graph.mlir --strata-conv-to-gemm -o rewritten.mlir
strata compile rewritten.mlir --compile-from=graph --compile-to=kernel --no-cache -o kernel.mlir
strata-opt kernel.mlir --strata-gpu-window-indices -o computed.mlir
marked=$(grep -c 'strata.windows' kernel.mlir || true)
# Each replaced read tests its position against the input's start once per
# spatial axis (the cases here are 2-D): two `arith.cmpi sge`.
before=$(grep -c 'arith.cmpi sge' kernel.mlir || true)
after=$(grep -c 'arith.cmpi sge' computed.mlir || true)
echo "$name: $marked marked, $(( (after - before) / 2 )) computed"
strata compile computed.mlir --compile-from=kernel --no-cache -o m.strata > log 2>&1 || { cat log; exit 1; }
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
expected = numpy_helper.to_array(t).astype(np.float64)
actual = np.load(glob.glob(sys.argv[2] + "/*.npy")[0]).astype(np.float64)
assert actual.shape == expected.shape, (actual.shape, expected.shape)
err = float(np.abs(actual - expected).max())
assert np.allclose(actual, expected, rtol=1e-3, atol=1e-5), f"max error {err}"
PY
