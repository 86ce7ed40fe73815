#!/usr/bin/env bash
# The README's test command: installs what is needed, builds strata twice
# (normally, and with AddressSanitizer + UBSan for the bad-input checks), then
# runs every test through one CTest run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${STRATA_BUILD_DIR:-$root/build}
asan=${STRATA_ASAN_BUILD_DIR:-$root/build-asan}
jobs=${STRATA_JOBS:-$(nproc)}

bash "$root/scripts/install-deps.sh"

echo "== build ($build)"
cmake -S "$root" -B "$build" -G Ninja -DSTRATA_ASAN_TOOLS_DIR="$asan/bin" "$@"
cmake --build "$build" -j "$jobs"

# The sanitizer build only needs the importer driver; -O1 keeps it quick.
echo "== sanitizer build ($asan)"
cmake -S "$root" -B "$asan" -G Ninja -DSTRATA_ENABLE_SANITIZERS=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
cmake --build "$asan" -j "$jobs" --target strata

echo "== tests"
cd "$build"
ctest --output-on-failure -j "$jobs"
