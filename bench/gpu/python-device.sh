#!/bin/bash
# On the GPU machine: installs the strata Python package from the parts of
# bench/gpu/python-pack.sh and builds its extension for this machine's
# python3 (docs/python.md, "On the GPU machine").
#
#   bash bench/gpu/python-device.sh PARTS_DIR [DEST]
#
# PARTS_DIR holds strata-python.tar.xz.part-* (gathered there over several
# calls: each call carries one). DEST (default /tmp/strata-python) receives
# the unpacked tree; DEST/env.sh then sets PYTHONPATH (the package, with its
# metadata, so that torch.compile finds backend="strata" by its entry
# point), LD_LIBRARY_PATH and PATH (ld.lld).
set -eu
parts=$1 dest=${2:-/tmp/strata-python}
py=${PYTHON:-python3}
rm -rf "$dest"
mkdir -p "$dest/root" "$dest/site"
cat "$parts"/strata-python.tar.xz.part-* | xz -dc | tar -C "$dest/root" -xf -
root=$dest/root
pkg=$dest/site

cp -r "$root/python/strata" "$pkg/"
version=$(cat "$root/python/VERSION")
info=$pkg/strata-$version.dist-info
mkdir -p "$info"
printf 'Metadata-Version: 2.1\nName: strata\nVersion: %s\n' "$version" >"$info/METADATA"
printf '[torch_dynamo_backends]\nstrata = strata.torch_backend:strata_backend\n' \
  >"$info/entry_points.txt"
echo strata >"$info/top_level.txt"

# pybind11's headers: its own package, else the copy torch ships.
includes=$($py -m pybind11 --includes 2>/dev/null) || includes="-I$($py -c \
  'import os, sysconfig, torch; print(os.path.join(os.path.dirname(torch.__file__), "include") + " -I" + sysconfig.get_paths()["include"])')"
suffix=$($py -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
start=$(date +%s)
${CXX:-g++} -O2 -std=c++17 -shared -fPIC -fvisibility=hidden $includes \
  -I"$root/include" "$root/python/StrataModule.cpp" \
  -o "$pkg/strata/_strata$suffix" -L"$root/lib" -lstrata_compiler \
  -Wl,-rpath,"$root/lib"
echo "python-device: built _strata$suffix in $(($(date +%s) - start)) s"

cat >"$dest/env.sh" <<EOF
export PYTHONPATH=$pkg\${PYTHONPATH:+:\$PYTHONPATH}
export LD_LIBRARY_PATH=$root/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export PATH=$root/bin:\$PATH
EOF
. "$dest/env.sh"
$py -c 'import strata; print("python-device: strata", strata.__version__, "from", strata.__file__)'
