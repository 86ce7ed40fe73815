#!/usr/bin/env bash
# Installs every package strata needs to build and test, from Debian's
# repositories. Idempotent: packages already present are left alone.
set -euo pipefail

packages=(
  cmake ninja-build g++ git python3 python3-numpy
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools lld-22
  libonnx-dev libonnx-testdata python3-onnx libprotobuf-dev protobuf-compiler
  libgtest-dev libflatbuffers-dev flatbuffers-compiler libdnnl-dev
  libxxhash-dev pkgconf pybind11-dev python3-dev
  # The Python package's torch.compile backend is tested on FX graphs;
  # torchvision's detection models are exported and checked against torch
  # (test/Detection).
  python3-torch python3-torchvision
  # The libFuzzer targets (fuzz/): clang with its sanitizer and fuzzer
  # runtimes.
  clang-22 libclang-rt-22-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
