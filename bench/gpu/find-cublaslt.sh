#!/bin/bash
# Sourced by the GPU machine's scripts (bench/gpu/device.sh,
# test/Gpu/device-conformance.sh): when the loader cannot find cuBLASLt by
# itself (no CUDA toolkit in its path, as on machines where only PyTorch's
# nvidia-cublas package has it), points STRATA_CUBLASLT at the package's
# copy. The runtime's own search is in runtime/lib/cuda/CublasLt.cpp.
if [ -z "${STRATA_CUBLASLT:-}" ] &&
  ! ldconfig -p 2>/dev/null | grep -q 'libcublasLt\.so\.1[23] ' &&
  [ ! -e /usr/local/cuda/lib64/libcublasLt.so.13 ] &&
  [ ! -e /usr/local/cuda/lib64/libcublasLt.so.12 ]; then
  lt=$(python3 - <<'PY' 2>/dev/null
import glob, importlib.util, os
spec = importlib.util.find_spec("nvidia")
for root in (spec.submodule_search_locations if spec else []):
    for path in sorted(glob.glob(os.path.join(root, "*", "lib", "libcublasLt.so.1[23]")), reverse=True):
        print(path)
        raise SystemExit
PY
)
  if [ -n "$lt" ]; then
    export STRATA_CUBLASLT=$lt
    echo "cuBLASLt: $lt (STRATA_CUBLASLT)"
  fi
fi
