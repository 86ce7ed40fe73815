#!/bin/bash
# Runs the CUDA executor's tests on a GPU machine that has the NVIDIA driver
# but not this build (the workplace's device machine, for instance).
#
#   runtime/test/cuda/device-run.sh pack <build-dir> <out-dir> [MODULE...]
#       copies strata-runtime-cuda-tests, the test kernels and the shared
#       libraries it needs beyond the C/C++ runtime (oneDNN, OpenCL's loader,
#       libgomp; libstdc++ as a fallback) into <out-dir> (about 42 MB); with
#       CUDA modules (compiled with --target=cuda), also strata-runtime-stress
#       and the modules;
#   <out-dir>/device-run.sh run
#       on the GPU machine: runs the tests, ptxas on the test PTX and the
#       tests again under compute-sanitizer's memcheck when it is there;
#       then, with modules, the stress test: 4 threads of $STRESS_RUNS
#       (default 250) runs each
#       on sessions of the shared modules, every output compared byte for
#       byte with one session's (cuBLASLt's heuristic pick in every
#       session, STRATA_CUBLASLT_TUNE=0: timing may choose differently).
#       Logs go to $OUT when it is set.
set -u
case "${1:-}" in
pack)
  build=$2 out=$3
  mkdir -p "$out/lib" "$out/compat" "$out/kernels" || exit 1
  bin=$build/bin/strata-runtime-cuda-tests
  [ -x "$bin" ] || bin=$build/strata-runtime-cuda-tests
  cp "$bin" "$out/" || exit 1
  kernels=$(find "$build" -name TestKernels.ptx -path '*cuda-test-kernels*' | head -1)
  cp "$(dirname "$kernels")"/TestKernels.{ptx,sm_90a.cubin,sm_80.cubin} "$out/kernels/" || exit 1
  for lib in libdnnl.so.2 libOpenCL.so.1 libgomp.so.1; do
    path=$(ldd "$bin" | awk -v l="$lib" '$1 == l {print $3}')
    [ -n "$path" ] && cp -L "$path" "$out/lib/"
  done
  cp -L "$(ldd "$bin" | awk '$1 == "libstdc++.so.6" {print $3}')" "$out/compat/"
  shift 3
  if [ $# -gt 0 ]; then
    stress=$build/bin/strata-runtime-stress
    [ -x "$stress" ] || stress=$build/strata-runtime-stress
    mkdir -p "$out/stress" && cp "$stress" "$out/" && cp "$@" "$out/stress/" || exit 1
  fi
  cp "$0" "$out/device-run.sh"
  du -sh "$out"
  ;;
run)
  cd "$(dirname "$0")" || exit 1
  log=${OUT:-/tmp}
  export LD_LIBRARY_PATH=$PWD/lib STRATA_RT_CUDA_TEST_KERNELS=$PWD/kernels
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  # The system's libstdc++ first; the carried one only if it is too old.
  ./strata-runtime-cuda-tests --gtest_list_tests >/dev/null 2>&1 ||
    export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/compat
  echo "=== gtest"
  ./strata-runtime-cuda-tests 2>&1 | tee "$log/gtest.log"
  rc=${PIPESTATUS[0]}
  echo "=== gtest rc=$rc"
  echo "=== repeat"
  ./strata-runtime-cuda-tests --gtest_repeat=3 --gtest_brief=1 2>&1 | tail -4
  echo "=== ptxas"
  ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
  "$ptxas" -arch=sm_90a kernels/TestKernels.ptx -o /tmp/check.cubin &&
    echo "ptxas sm_90a ok"
  if command -v compute-sanitizer >/dev/null; then
    echo "=== memcheck"
    timeout 150 compute-sanitizer --tool memcheck --report-api-errors no \
      ./strata-runtime-cuda-tests --gtest_brief=1 >"$log/memcheck.log" 2>&1
    echo "memcheck rc=$?"
    tail -6 "$log/memcheck.log"
  fi
  if [ -d stress ]; then
    echo "=== stress"
    # 4 x 1,000 runs of the GPU suite's five modules took 546 s on an H200
    # (sessions are made again every few requests, cuBLASLt set up each
    # time): the default keeps a device call short.
    STRATA_CUBLASLT_TUNE=0 ./strata-runtime-stress --workers 4 \
      --runs "${STRESS_RUNS:-250}" \
      stress/*.strata 2>&1 | tee "$log/stress.log" | tail -8
    src=${PIPESTATUS[0]}
    echo "stress rc=$src"
    [ "$src" = 0 ] || rc=1
  fi
  exit "$rc"
  ;;
*)
  echo "usage: $0 pack <build-dir> <out-dir> | run" >&2
  exit 2
  ;;
esac
