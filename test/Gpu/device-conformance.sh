#!/bin/bash
# The ONNX conformance suites on the GPU target, compiled on one machine and
# run on another that has an NVIDIA GPU but neither LLVM nor this build
# (docs/gpu.md, "Running the conformance suites on a GPU").
#
#   test/Gpu/device-conformance.sh pack <build-dir> <out-dir> [--cpu=GPU]
#                        [--no-libraries] [--precision=P] [suite dir...]
#       compiles every case of the suites (default: the four suites of
#       libonnx-testdata) for --target=cuda (and --cpu=GPU, e.g. sm_90a;
#       --no-libraries: every kernel generated; --precision=fp16|bf16: run
#       them with a tolerance to match, `run PACK --rtol R --atol A`) with
#       `strata conformance --compile-only`, and packs the modules, the cases' data (the data sets
#       and model.onnx, whose declared types say how each .pb is read), strata-run-cases
#       with the shared libraries it needs beyond the C library, the CUDA
#       expected failures and this script into <out-dir>/pack.tar.xz;
#   device-conformance.sh run <pack.tar.xz> [strata-run-cases options]
#       on the GPU machine: unpacks, runs every case with strata-run-cases
#       against test/Conformance/cuda-expected-failures.txt, then the cases
#       that failed again with --profile (each step synchronized, so a fault
#       names its step). Reports go to $OUT (or /tmp): cuda-conformance.json,
#       cuda-conformance.log, cuda-failures.txt.
set -u
here=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
pack)
  build=$2 out=$3
  shift 3
  flags=()
  while :; do
    case "${1:-}" in --cpu=* | --no-libraries | --precision=*) flags+=("$1"); shift ;; *) break ;; esac
  done
  data=/usr/share/libonnx-testdata/data
  suites=("$@")
  [ ${#suites[@]} -eq 0 ] &&
    suites=("$data/node" "$data/pytorch-converted" "$data/pytorch-operator"
            "$data/simple")
  stage=$(mktemp -d)
  mkdir -p "$stage/pack/bin" "$stage/pack/lib" "$stage/pack/compat" \
    "$stage/pack/data" || exit 1
  echo "== compiling for cuda"
  "$build/bin/strata" conformance --target=cuda "${flags[@]}" --quiet \
    --compile-only "$stage/pack/modules" "${suites[@]}" \
    --json "$stage/pack/compile.json" >"$stage/pack/compile.log" 2>&1
  tail -1 "$stage/pack/compile.log"
  for suite in "${suites[@]}"; do
    name=$(basename "$suite")
    # The data sets and the models (0.5 MB in all), whose declared input and
    # output types say how strata-run-cases reads each .pb (a tensor, a
    # sequence or an optional).
    tar -C "$suite/.." -cf - "$name" | tar -C "$stage/pack/data" -xf - ||
      exit 1
  done
  bin=$build/bin/strata-run-cases
  cp "$bin" "$stage/pack/bin/" || exit 1
  for lib in libdnnl.so.2 libOpenCL.so.1 libgomp.so.1 libonnx_proto.so.1 \
    libprotobuf.so.32 libz.so.1; do
    path=$(ldd "$bin" | awk -v l="$lib" '$1 == l {print $3}')
    [ -n "$path" ] && cp -L "$path" "$stage/pack/lib/"
  done
  cp -L "$(ldd "$bin" | awk '$1 == "libstdc++.so.6" {print $3}')" \
    "$stage/pack/compat/"
  cp "$here/../Conformance/cuda-expected-failures.txt" "$stage/pack/"
  cp "$0" "$stage/pack/device-conformance.sh"
  mkdir -p "$out"
  tar -C "$stage" -cJf "$out/pack.tar.xz" pack || exit 1
  rm -rf "$stage"
  ls -la "$out/pack.tar.xz"
  ;;
run)
  pack=$2
  shift 2
  log=${OUT:-/tmp}
  work=$(mktemp -d)
  tar -C "$work" -xJf "$pack" || exit 1
  cd "$work/pack" || exit 1
  export LD_LIBRARY_PATH=$PWD/lib
  ./bin/strata-run-cases --help >/dev/null 2>&1 ||
    export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/compat
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  # shellcheck source=../../bench/gpu/find-cublaslt.sh
  . "$here/../../bench/gpu/find-cublaslt.sh"
  suites=()
  for suite in data/*; do suites+=("$suite"); done
  echo "== all cases"
  start=$(date +%s)
  ./bin/strata-run-cases --modules modules "${suites[@]}" \
    --expected-failures cuda-expected-failures.txt --quiet \
    --json "$log/cuda-conformance.json" \
    --write-expected-failures "$log/cuda-failures.txt" "$@" \
    >"$log/cuda-conformance.log" 2>&1
  rc=$?
  echo "rc=$rc, $(($(date +%s) - start)) s"
  tail -40 "$log/cuda-conformance.log"
  # Failures not expected, again with each step synchronized.
  mapfile -t again < <(grep -E '^(FAIL|XPASS)' "$log/cuda-conformance.log" |
    awk '{print "data/" $2}' | head -40)
  if [ ${#again[@]} -gt 0 ]; then
    echo "== profiled reruns of ${#again[@]} failures"
    ./bin/strata-run-cases --modules modules "${again[@]}" --profile -j 8 \
      --timeout 60 2>&1 | tail -45
  fi
  exit "$rc"
  ;;
*)
  echo "usage: $0 pack <build-dir> <out-dir> [suite...] | run <pack> [options]" >&2
  exit 2
  ;;
esac
