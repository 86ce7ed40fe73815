#!/usr/bin/env bash
# The README's test command: installs what is needed, builds strata
# normally and with AddressSanitizer + UBSan (for the bad-input checks), and
# the runtime's stress test with ThreadSanitizer, then runs every test
# through one CTest run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${STRATA_BUILD_DIR:-$root/build}
asan=${STRATA_ASAN_BUILD_DIR:-$root/build-asan}
tsan=${STRATA_TSAN_BUILD_DIR:-$root/build-tsan}
fuzz=${STRATA_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${STRATA_JOBS:-$(nproc)}

bash "$root/scripts/install-deps.sh"
. "$root/scripts/toolchain.sh"

echo "== build ($build)"
cmake -S "$root" -B "$build" -G Ninja -DSTRATA_ASAN_TOOLS_DIR="$asan/bin" \
  -DSTRATA_TSAN_STRESS_TOOL="$tsan/strata-runtime-stress" \
  -DSTRATA_FUZZ_DIR="$fuzz" "$@"
cmake --build "$build" -j "$jobs"

# The sanitizer build only needs the importer driver; -O1 keeps it quick.
echo "== sanitizer build ($asan)"
cmake -S "$root" -B "$asan" -G Ninja -DSTRATA_ENABLE_SANITIZERS=ON \
  -DSTRATA_BUILD_PYTHON=OFF -DSTRATA_BUILD_COMPILER_LIBRARY=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
cmake --build "$asan" -j "$jobs" --target strata

# ThreadSanitizer: the runtime alone (no LLVM, a minute on two cores), for
# the concurrency stress test (test/Stress).
echo "== thread sanitizer build ($tsan)"
cmake -S "$root/runtime" -B "$tsan" -G Ninja -DSTRATA_ENABLE_TSAN=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
cmake --build "$tsan" -j "$jobs" --target strata-runtime-stress

# libFuzzer targets (fuzz/): the runtime, tensorio and the compiler's front
# (graph dialect, importer) again, with clang, AddressSanitizer and UBSan
# (about 4 minutes on two cores); CTest runs each for STRATA_FUZZ_SECONDS.
echo "== fuzz targets ($fuzz)"
cmake -S "$root/fuzz" -B "$fuzz" -G Ninja -DCMAKE_C_COMPILER=clang-22 \
  -DCMAKE_CXX_COMPILER=clang++-22
cmake --build "$fuzz" -j "$jobs" --target fuzz-module fuzz-npy fuzz-tensorproto \
  fuzz-import fuzz-decisions fuzz-cache

echo "== tests"
cd "$build"
ctest --output-on-failure -j "$jobs"
