#!/bin/bash
# Packs what the GPU machine needs for bench/gpu/run.py's strata column into
# one folder, to carry with the device tool (docs/benchmarks.md, "GPU
# benchmark"). The python files travel with the working tree anyway.
#
#   bench/gpu/pack.sh [--out DIR] [--build DIR] [--strata BIN [--flags "..."]]
#                     [--onnx DIR] [--modules DIR] [--selftest]
#
#   --out DIR      the folder (default build-gpu-pack, ignored by git)
#   --build DIR    where strata-bench-gpu is built (default build-bench-gpu;
#                  configured and built there, runtime only, if missing)
#   --strata BIN   compile every ONNX model of the --onnx folder with
#                  `BIN compile --target=cuda [flags]` into DIR/modules; a
#                  model that does not compile is listed with the reason in
#                  DIR/modules/COMPILE_LOG.json, which run.py shows
#   --onnx DIR     the models to compile (default bench/gpu/models; the real
#                  models: build-real-models, from export_onnx.py --suite real)
#   --modules DIR  copy modules compiled elsewhere (<workload>.strata)
#   --selftest     also DIR/selftest/gelu_add_bf16.strata: the hand-written
#                  kernel of tools/strata-bench-gpu/selftest (needs nvcc)
#
# DIR then holds runtime.tar.xz (bin/strata-bench-gpu and the shared
# libraries it needs beyond the C/C++ runtime and the driver: oneDNN, libgomp,
# OpenCL's loader), modules/ and selftest/. A module over 2 MB (one that holds
# a real model's weights) is stored as <workload>.strata.xz, which device.sh
# unpacks: the device tool carries 64 MiB in all, the working tree included.
# On the GPU machine:
#   bash bench/gpu/device.sh [run.py options]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build-gpu-pack build=$root/build-bench-gpu strata="" flags="" modules="" selftest=0
onnx=$root/bench/gpu/models
while [ $# -gt 0 ]; do
  case $1 in
  --out) out=$2; shift 2 ;;
  --build) build=$2; shift 2 ;;
  --strata) strata=$2; shift 2 ;;
  --flags) flags=$2; shift 2 ;;
  --onnx) onnx=$2; shift 2 ;;
  --modules) modules=$2; shift 2 ;;
  --selftest) selftest=1; shift ;;
  *) echo "usage: $0 [--out DIR] [--build DIR] [--strata BIN [--flags F]] [--onnx DIR] [--modules DIR] [--selftest]" >&2; exit 2 ;;
  esac
done

# Always through ninja (a no-op when up to date): a tool left from an older
# runtime would time the modules with that runtime's library calls.
[ -f "$build/build.ninja" ] ||
  cmake -S "$root/tools/strata-bench-gpu" -B "$build" -G Ninja >/dev/null
ninja -C "$build" strata-bench-gpu
tool=$build/strata-bench-gpu
[ -x "$tool" ] || tool=$build/bin/strata-bench-gpu

rm -rf "$out"
mkdir -p "$out/modules" "$out/stage/bin" "$out/stage/lib"
cp "$tool" "$out/stage/bin/"
for lib in libdnnl.so.2 libgomp.so.1 libOpenCL.so.1; do
  path=$(ldd "$tool" | awk -v l="$lib" '$1 == l {print $3}')
  [ -n "$path" ] && cp -L "$path" "$out/stage/lib/"
done
tar -cJf "$out/runtime.tar.xz" -C "$out/stage" bin lib
rm -rf "$out/stage"

if [ -n "$modules" ]; then
  cp "$modules"/*.strata "$out/modules/" 2>/dev/null || true
  [ -f "$modules/COMPILE_LOG.json" ] && cp "$modules/COMPILE_LOG.json" "$out/modules/"
fi
if [ -n "$strata" ]; then
  log=$out/modules/compile.log
  : >"$log"
  for model in "$onnx"/*.onnx; do
    name=$(basename "$model" .onnx)
    echo "== $name" >>"$log"
    # shellcheck disable=SC2086
    if "$strata" compile "$model" --target=cuda $flags -o "$out/modules/$name.strata" \
        >>"$log" 2>&1 && [ -s "$out/modules/$name.strata" ]; then
      echo "compiled $name"
      if [ "$(stat -c %s "$out/modules/$name.strata")" -gt 2000000 ]; then
        xz -T0 -6 "$out/modules/$name.strata"
      fi
    else
      rm -f "$out/modules/$name.strata"
      echo "FAILED $name (see $log)"
    fi
  done
  # The reason per workload: the last line of its compiler output.
  python3 - "$log" "$out/modules" <<'PY'
import json, os, sys
log, mods = sys.argv[1], sys.argv[2]
why, name, last = {}, None, ""
for line in open(log, errors="replace").read().splitlines() + ["== "]:
    if line.startswith("== "):
        if name and not any(os.path.exists(os.path.join(mods, name + ext))
                        for ext in (".strata", ".strata.xz")):
            why[name] = "compile failed: " + (last.strip()[:300] or "no output")
        name, last = line[3:].strip(), ""
    elif line.strip():
        last = line
json.dump(why, open(os.path.join(mods, "COMPILE_LOG.json"), "w"), indent=1)
PY
fi
if [ "$selftest" = 1 ]; then
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  src=$root/tools/strata-bench-gpu/selftest/gelu_add.cu
  mkdir -p "$out/selftest"
  tmp=$(mktemp -d)
  # The tool links libcuda.so.1; here the toolkit's stub stands in for it.
  ln -s /usr/local/cuda/lib64/stubs/libcuda.so "$tmp/libcuda.so.1"
  "$nvcc" -cubin -gencode=arch=compute_90a,code=sm_90a "$src" -o "$tmp/k.cubin"
  "$nvcc" -ptx -arch=sm_90a "$src" -o "$tmp/k.ptx"
  LD_LIBRARY_PATH=$tmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    "$tool" selftest-module --cubin "$tmp/k.cubin" --ptx "$tmp/k.ptx" \
    -o "$out/selftest/gelu_add_bf16.strata"
  rm -rf "$tmp"
fi
du -sh "$out"
