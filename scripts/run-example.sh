#!/usr/bin/env bash
# The README's first command: installs what is needed, builds, generates the
# bundled example model and runs the main job on it on the CPU: compile it to
# a module, run the module, run the model directly at other batch sizes (each
# a specialization, kept in the compile cache), and time it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
build=${STRATA_BUILD_DIR:-$root/build}
examples="$build/examples"
strata="$build/bin/strata"
/usr/bin/python3 "$root/examples/make_examples.py" "$examples"

echo "== strata compile (batch 4)"
"$strata" compile "$examples/mlp.onnx" -o "$examples/mlp.strata" \
  --input-shape x=4,64 -v --dump-ir "$examples/mlp-ir"
echo "   (each stage's IR is in $examples/mlp-ir)"
echo "== strata run (the module, random inputs)"
"$strata" run "$examples/mlp.strata"
for batch in 1 16; do
  echo "== strata run (the ONNX model, batch $batch)"
  "$strata" run "$examples/mlp.onnx" --input-shape "x=$batch,64"
done
echo "== strata bench"
"$strata" bench "$examples/mlp.strata" --runs 50 --profile
