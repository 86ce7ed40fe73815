#!/bin/bash
# Sourced by the GPU machine's scripts (bench/gpu/device.sh,
# test/Gpu/device-conformance.sh): when the loader cannot find cuBLASLt by
# itself (no CUDA toolkit in its path, as on machines where only PyTorch's
# nvidia-cublas package has it), points STRATA_CUBLASLT at the package's
# copy; likewise cuDNN (STRATA_CUDNN) and NVRTC, below. The runtime's own
# searches are in runtime/lib/cuda/CublasLt.cpp and Cudnn.cpp.
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

# The same for cuDNN 9 (the "cudnn.conv" steps, runtime/lib/cuda/Cudnn.cpp):
# PyTorch's nvidia-cudnn package copy when the loader and the toolkit have
# none. cuDNN opens its sub-libraries (libcudnn_graph.so.9, the engines) by
# name, so their directory goes on LD_LIBRARY_PATH as well. Its
# runtime-fusion engines (a convolution with its bias, residual and ReLU)
# compile with NVRTC, which cuDNN also opens by name: libnvrtc.so.13 (.12
# for a cuDNN built for CUDA 12) from the nvidia packages when the loader
# cannot find it.
strata_on_loader_path() { # <regex of a soname> <file name>
  ldconfig -p 2>/dev/null | grep -q "$1 " && return 0
  local dir
  local IFS=:
  for dir in ${LD_LIBRARY_PATH:-}; do
    [ -n "$dir" ] && [ -e "$dir/$2" ] && return 0
  done
  return 1
}
strata_nvidia_lib() { # <glob of a file name> : the first nvidia/*/lib match
  python3 - "$1" <<'PY' 2>/dev/null
import glob, importlib.util, os, sys
spec = importlib.util.find_spec("nvidia")
for root in (spec.submodule_search_locations if spec else []):
    for path in sorted(glob.glob(os.path.join(root, "*", "lib", sys.argv[1])), reverse=True):
        print(path)
        raise SystemExit
PY
}
if [ -z "${STRATA_CUDNN:-}" ] &&
  ! strata_on_loader_path 'libcudnn\.so\.9' libcudnn.so.9 &&
  [ ! -e /usr/local/cuda/lib64/libcudnn.so.9 ]; then
  dnn=$(strata_nvidia_lib 'libcudnn.so.9')
  if [ -n "$dnn" ]; then
    export STRATA_CUDNN=$dnn
    export LD_LIBRARY_PATH=$(dirname "$dnn")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "cuDNN: $dnn (STRATA_CUDNN; its directory on LD_LIBRARY_PATH)"
  fi
fi
if ! strata_on_loader_path 'libnvrtc\.so\.13' libnvrtc.so.13 &&
  ! strata_on_loader_path 'libnvrtc\.so\.12' libnvrtc.so.12; then
  rtc=$(strata_nvidia_lib 'libnvrtc.so.1[23]')
  [ -z "$rtc" ] && [ -e /usr/local/cuda/lib64/libnvrtc.so.13 ] &&
    rtc=/usr/local/cuda/lib64/libnvrtc.so.13
  if [ -n "$rtc" ]; then
    export LD_LIBRARY_PATH=$(dirname "$rtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "NVRTC: $rtc (its directory on LD_LIBRARY_PATH)"
  fi
fi
unset -f strata_on_loader_path strata_nvidia_lib
