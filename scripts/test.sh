#!/usr/bin/env bash
# The README's test command: installs what is needed, builds strata
# normally and with AddressSanitizer + UBSan (for the bad-input checks, with
# the libFuzzer targets of fuzz/), and the runtime's stress test with
# ThreadSanitizer, then runs every test through one CTest run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${STRATA_BUILD_DIR:-$root/build}
asan=${STRATA_ASAN_BUILD_DIR:-$root/build-asan}
tsan=${STRATA_TSAN_BUILD_DIR:-$root/build-tsan}
jobs=${STRATA_JOBS:-$(nproc)}

bash "$root/scripts/install-deps.sh"
. "$root/scripts/toolchain.sh"

echo "== build ($build)"
cmake -S "$root" -B "$build" -G Ninja -DSTRATA_ASAN_TOOLS_DIR="$asan/bin" \
  -DSTRATA_TSAN_STRESS_TOOL="$tsan/strata-runtime-stress" \
  -DSTRATA_FUZZ_DIR="$asan/bin" "$@"
cmake --build "$build" -j "$jobs"

# The sanitizer build makes the importer driver and the libFuzzer targets of
# fuzz/ (clang), which share its runtime, tensorio, graph dialect and
# importer; -O1 keeps it quick. CTest runs each fuzz target for
# STRATA_FUZZ_SECONDS.
echo "== sanitizer build with the fuzz targets ($asan)"
cmake -S "$root" -B "$asan" -G Ninja -DSTRATA_ENABLE_SANITIZERS=ON \
  -DSTRATA_BUILD_FUZZERS=ON \
  -DSTRATA_BUILD_PYTHON=OFF -DSTRATA_BUILD_COMPILER_LIBRARY=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
cmake --build "$asan" -j "$jobs" --target strata fuzz-module fuzz-npy \
  fuzz-tensorproto fuzz-import fuzz-decisions fuzz-cache

# ThreadSanitizer: the runtime alone (no LLVM, a minute on two cores), for
# the concurrency stress test (test/Stress).
echo "== thread sanitizer build ($tsan)"
cmake -S "$root/runtime" -B "$tsan" -G Ninja -DSTRATA_ENABLE_TSAN=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
cmake --build "$tsan" -j "$jobs" --target strata-runtime-stress

echo "== tests"
cd "$build"
ctest --output-on-failure -j "$jobs"
