#!/usr/bin/env bash
# The README's test command: installs what is needed, builds, runs every test
# (lit, unit tests, the import sweep over the ONNX test data) through CTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh" "$@"
build=${STRATA_BUILD_DIR:-$root/build}
cd "$build"
ctest --output-on-failure -j "${STRATA_JOBS:-$(nproc)}"
