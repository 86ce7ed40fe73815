#!/bin/bash
# On the GPU machine: runs bench/gpu/run.py with what bench/gpu/pack.sh
# packed (strata-bench-gpu, its libraries, the modules). Logs, the JSON and
# the markdown section go to $OUT (or /tmp).
#
#   bash bench/gpu/device.sh [--pack DIR] [--selftest] [run.py options]
#
# --selftest first runs the hand-written stand-in module (pack.sh --selftest)
# through the strata path for gelu_add_bf16, to test the harness; its
# numbers are not strata's and go to selftest.json only.
set -u
here=$(cd "$(dirname "$0")" && pwd)
pack=$here/../../build-gpu-pack selftest=0
while [ $# -gt 0 ]; do
  case $1 in
  --pack) pack=$2; shift 2 ;;
  --selftest) selftest=1; shift ;;
  *) break ;;
  esac
done
out=${OUT:-/tmp}
export PYTHONUNBUFFERED=1
# shellcheck source=find-cublaslt.sh
. "$here/find-cublaslt.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
args=()
if [ -f "$pack/runtime.tar.gz" ]; then
  mkdir -p /tmp/strata-bench-gpu
  tar -xzf "$pack/runtime.tar.gz" -C /tmp/strata-bench-gpu
  args+=(--strata-bench /tmp/strata-bench-gpu/bin/strata-bench-gpu)
  if ls "$pack"/modules/*.strata >/dev/null 2>&1 || [ -f "$pack/modules/COMPILE_LOG.json" ]; then
    args+=(--strata-modules "$pack/modules")
  fi
fi
if [ "$selftest" = 1 ]; then
  echo "=== self-test of the strata path (hand-written kernel, not strata's numbers)"
  timeout 120 python3 "$here/run.py" --only gelu_add_bf16 --no-peers \
    --strata-bench /tmp/strata-bench-gpu/bin/strata-bench-gpu \
    --strata-modules "$pack/selftest" --strata-label "hand-written stand-in" \
    --json "$out/selftest.json" 2>&1 | tail -8
fi
echo "=== benchmark"
python3 "$here/run.py" --json "$out/gpu_bench.json" "${args[@]}" "$@" 2>&1 | tee "$out/gpu_bench.log"
rc=${PIPESTATUS[0]}
python3 "$here/report.py" "$out/gpu_bench.json" --markdown >"$out/gpu_bench.md"
exit "$rc"
