#!/usr/bin/env bash
# Configures and builds strata into build/ (or $STRATA_BUILD_DIR).
# Extra arguments go to CMake, e.g. -DSTRATA_ENABLE_SANITIZERS=ON.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${STRATA_BUILD_DIR:-$root/build}
. "$root/scripts/toolchain.sh"
cmake -S "$root" -B "$build" -G Ninja "$@"
cmake --build "$build" -j "${STRATA_JOBS:-$(nproc)}"
