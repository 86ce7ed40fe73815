#!/bin/bash
# On the GPU machine: runs bench/gpu/run.py with what bench/gpu/pack.sh
# packed (strata-bench-gpu, its libraries, the modules). Logs, the JSON and
# the markdown section go to $OUT (or /tmp).
#
#   bash bench/gpu/device.sh [--pack DIR] [--selftest] [--smi] [run.py options]
#       (the three options may also come among run.py's)
#
# --selftest first runs the hand-written stand-in module (pack.sh --selftest)
# through the strata path for gelu_add_bf16, to test the harness; its
# numbers are not strata's and go to selftest.json only.
# --smi reads the card's SM clock, power and throttle reasons every 100 ms
# while the benchmark runs (nvidia-smi, reading only: nothing is set) into
# smi.csv, and prints how often each throttle reason was active. A kernel
# that draws the card's power limit runs slower once the power cap engages,
# which moves a ratio at a goal's edge (bench/RESULTS.md, 2026-12-01 23:35).
set -u
here=$(cd "$(dirname "$0")" && pwd)
pack=$here/../../build-gpu-pack selftest=0 smi=0
# This script's options may come anywhere; the rest go to run.py in order.
rest=()
while [ $# -gt 0 ]; do
  case $1 in
  --pack) pack=$2; shift 2 ;;
  --selftest) selftest=1; shift ;;
  --smi) smi=1; shift ;;
  *) rest+=("$1"); shift ;;
  esac
done
set -- "${rest[@]}"
out=${OUT:-/tmp}
export PYTHONUNBUFFERED=1
# shellcheck source=find-cublaslt.sh
. "$here/find-cublaslt.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
args=()
runtime=""
for f in "$pack/runtime.tar.xz" "$pack/runtime.tar.gz"; do [ -f "$f" ] && runtime=$f && break; done
if [ -n "$runtime" ]; then
  mkdir -p /tmp/strata-bench-gpu
  tar -xf "$runtime" -C /tmp/strata-bench-gpu
  args+=(--strata-bench /tmp/strata-bench-gpu/bin/strata-bench-gpu)
  modules=$pack/modules
  # Modules that hold a real model's weights travel compressed (pack.sh).
  if ls "$modules"/*.strata.xz >/dev/null 2>&1; then
    mkdir -p /tmp/strata-modules
    cp "$modules"/* /tmp/strata-modules/
    xz -d -f -T0 /tmp/strata-modules/*.strata.xz
    modules=/tmp/strata-modules
  fi
  if ls "$modules"/*.strata >/dev/null 2>&1 || [ -f "$modules/COMPILE_LOG.json" ]; then
    args+=(--strata-modules "$modules")
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
if [ "$smi" = 1 ]; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv,noheader,nounits -lms 100 >"$out/smi.csv" 2>&1 &
  smi_pid=$!
fi
python3 "$here/run.py" --json "$out/gpu_bench.json" "${args[@]}" "$@" 2>&1 | tee "$out/gpu_bench.log"
rc=${PIPESTATUS[0]}
if [ "$smi" = 1 ]; then
  kill "$smi_pid" 2>/dev/null
  python3 - "$out/smi.csv" <<'PY'
import statistics, sys
# nvidia-smi's clocks_throttle_reasons bits (nvml.h, nvmlClocksEventReasons).
REASONS = {0x1: "GPU idle", 0x2: "applications clocks setting", 0x4: "SW power cap",
           0x8: "HW slowdown", 0x20: "SW thermal slowdown", 0x40: "HW thermal slowdown",
           0x80: "HW power brake slowdown", 0x100: "display clock setting"}
rows = []
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(",")]
    try:
        rows.append((float(f[1]), float(f[2]), int(f[4], 16)))
    except (IndexError, ValueError):
        pass
busy = [r for r in rows if not r[2] & 0x1]
print(f"smi: {len(rows)} samples, {len(busy)} not idle", end="")
if busy:
    print(f"; SM clock median {statistics.median(r[0] for r in busy):.0f} MHz, "
          f"power median {statistics.median(r[1] for r in busy):.0f} W, "
          f"max {max(r[1] for r in busy):.0f} W")
    for bit, name in REASONS.items():
        n = sum(1 for r in busy if r[2] & bit)
        if n:
            print(f"smi: {name}: {n} of {len(busy)} samples not idle ({100 * n / len(busy):.0f}%)")
else:
    print()
PY
fi
python3 "$here/report.py" "$out/gpu_bench.json" --markdown >"$out/gpu_bench.md"
exit "$rc"
