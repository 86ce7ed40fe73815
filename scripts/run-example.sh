#!/usr/bin/env bash
# The README's first command: installs what is needed, builds, generates the
# bundled example model and runs the main job on it (today: import it and run
# the graph stage, printing the graph IR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
build=${STRATA_BUILD_DIR:-$root/build}
/usr/bin/python3 "$root/examples/make_examples.py" "$build/examples"
"$build/bin/strata" import --graph-pipeline "$build/examples/mlp.onnx"
