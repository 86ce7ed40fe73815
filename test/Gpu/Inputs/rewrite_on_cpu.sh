#!/bin/bash
# rewrite_on_cpu.sh PASS CASE_DIR WORK_DIR [OP...]: a rewrite of the cuda
# target's graph (strata-conv-to-gemm, strata-pad-attention) checked by
# running it on the CPU: the case's model through the graph stage, the pass,
# then the CPU stages from there; the module's output must match the case's
# stored one (numpy.allclose at $RTOL, default 1e-3, and $ATOL, default
# 1e-5). Prints how many of each OP (graph.conv, ...) the rewrite left.
set -euo pipefail
pass=$1 case_dir=$2 work=$3
shift 3
name=$(basename "$case_dir")
mkdir -p "$work/$name"
cd "$work/$name"
strata compile "$case_dir/model.onnx" --compile-to=graph --no-cache -o graph.mlir
strata-opt graph.mlir "--$pass" -o rewritten.mlir
counts=()
for op in "$@"; do
  counts+=("$(grep -c "$op " rewritten.mlir || true) $op")
done
(IFS=,; echo "$name: ${counts[*]}" | sed 's/,/, /g')
strata compile rewritten.mlir --compile-from=graph --no-cache -o m.strata
inputs=()
for f in "$case_dir"/test_data_set_0/input_*.pb; do inputs+=("$f"); done
strata run m.strata "${inputs[@]}" --output-dir out > /dev/null
/usr/bin/python3 - "$case_dir/test_data_set_0/output_0.pb" out "${RTOL:-1e-3}" "${ATOL:-1e-5}" <<'PY'
import glob, sys
import numpy as np
import onnx
from onnx import numpy_helper
t = onnx.TensorProto()
t.ParseFromString(open(sys.argv[1], "rb").read())
expected = numpy_helper.to_array(t).astype(np.float64)
actual = np.load(glob.glob(sys.argv[2] + "/*.npy")[0])
if t.data_type == onnx.TensorProto.BFLOAT16:
    # strata writes bf16 as its bits (numpy has no bf16).
    actual = (actual.astype(np.uint32) << 16).view(np.float32)
actual = actual.astype(np.float64)
assert actual.shape == expected.shape, (actual.shape, expected.shape)
err = float(np.abs(actual - expected).max())
assert np.allclose(actual, expected, rtol=float(sys.argv[3]),
                   atol=float(sys.argv[4])), err
PY
