#!/usr/bin/env bash
# Regenerates models/: installs Debian's PyTorch (python3-torch) and python3-onnx
# if missing, then exports every model with models/export_models.py. The
# generated files are checked in, so only someone changing a model needs this;
# the export is deterministic (same bytes on every run with the same packages).
# Extra arguments go to the exporter (e.g. --only gpt_decoder).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

packages=(python3-torch python3-onnx python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "export-models: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Debian's python, not a pyenv/venv one on PATH: the packages above live there.
/usr/bin/python3 "$root/models/export_models.py" --out "$root/models" "$@"
