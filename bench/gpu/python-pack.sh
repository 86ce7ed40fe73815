#!/bin/bash
# Packs the strata Python package, compiler included, for a machine that has
# no LLVM 22: the GPU machine, whose python3 (3.12, torch 2.11) is not the one
# the package is built for here (docs/python.md, "On the GPU machine").
#
#   bench/gpu/python-pack.sh [--out DIR] [--build DIR] [--part-mb N]
#
#   --out DIR      the folder (default build-python-pack, ignored by git)
#   --build DIR    a build of strata with libstrata_compiler.so (default build)
#   --part-mb N    split the archive into parts of N MiB (default 30): the
#                  device tool carries 64 MiB a call, the working tree
#                  included, so the parts travel in separate calls
#
# DIR then holds strata-python.tar.xz.part-*: lib/ (libstrata_compiler.so,
# which holds the compiler and the runtime, and every shared library it needs
# beyond the C and C++ runtimes: libLLVM, libMLIR, oneDNN, ONNX, protobuf and
# theirs), bin/ld.lld (host kernels of CUDA modules link with it), include/
# (the public headers), and python/ (the extension's source and the package's
# Python files). bench/gpu/python-device.sh, on the GPU machine, unpacks it
# and builds the extension for that machine's python3 against lib/.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build-python-pack build=$root/build part_mb=30
while [ $# -gt 0 ]; do
  case $1 in
  --out) out=$2; shift 2 ;;
  --build) build=$2; shift 2 ;;
  --part-mb) part_mb=$2; shift 2 ;;
  *) echo "usage: $0 [--out DIR] [--build DIR] [--part-mb N]" >&2; exit 2 ;;
  esac
done

ninja -C "$build" StrataCompilerShared
compiler=$(ls "$build"/lib/Api/libstrata_compiler.so.*.*.* | head -1)
[ -f "$compiler" ] || { echo "no libstrata_compiler.so in $build" >&2; exit 1; }

rm -rf "$out"
stage=$out/stage
mkdir -p "$stage/lib" "$stage/bin" "$stage/include" "$stage/python/strata"
cp "$compiler" "$stage/lib/"
soname=$(objdump -p "$compiler" | awk '$1 == "SONAME" {print $2}')
ln -s "$(basename "$compiler")" "$stage/lib/$soname"
ln -s "$soname" "$stage/lib/libstrata_compiler.so"
lld=$(command -v ld.lld-22 || echo /usr/lib/llvm-22/bin/lld)
cp -L "$lld" "$stage/bin/ld.lld"
# Every library the compiler and ld.lld load, but glibc's and the C++
# runtime's, which the GPU machine has (newer).
for path in $(ldd "$compiler" "$lld" | awk '$3 ~ /^\// {print $3}' | sort -u); do
  case $(basename "$path") in
  libc.so.* | libm.so.* | libstdc++.so.* | libgcc_s.so.* | libpthread.so.* | libdl.so.*) ;;
  *) cp -L "$path" "$stage/lib/" ;;
  esac
done
cp -r "$root/include/strata" "$stage/include/"
cp -r "$root/runtime/include/strata" "$stage/include/"
cp "$root/python/src/StrataModule.cpp" "$stage/python/"
cp "$root"/python/strata/*.py "$stage/python/strata/"
version=$(sed -n 's/.*STRATA_VERSION_STRING "\(.*\)".*/\1/p' \
  "$root/include/strata/Version.h" | head -1)
echo "${version:-0}" >"$stage/python/VERSION"

tar -C "$stage" -cf - . | xz -6 -T0 | split -b "${part_mb}M" - "$out/strata-python.tar.xz.part-"
rm -rf "$stage"
ls -la "$out"
