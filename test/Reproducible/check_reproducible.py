#!/usr/bin/env python3
"""Compiling a model twice gives the same bytes.

  check_reproducible.py STRATA SOURCE_DIR WORK_DIR

Every model of models/ is compiled for the CPU, and every model of
bench/gpu/models for the cuda target, twice: each time from a copy of the
model in another directory (the second one deeper, under another name), with
another temporary directory, a second apart, without the compile cache. The
two module files must be byte-identical: a deployment runs exactly the module
that was tested, and a module can be rebuilt from its source to check it.
The first differing offset is reported otherwise.
"""

import os
import shutil
import subprocess
import sys
import time

# Models with dynamic inputs are compiled for one binding of them.
SHAPES = {"mlp_dynamic": ["--input-shape", "x=3,64"]}


def models(source):
    for name in sorted(os.listdir(os.path.join(source, "models"))):
        path = os.path.join(source, "models", name, "model.onnx")
        if os.path.isfile(path):
            yield name, path, "cpu"
    gpu = os.path.join(source, "bench", "gpu", "models")
    for name in sorted(os.listdir(gpu)):
        if name.endswith(".onnx"):
            yield name[:-5], os.path.join(gpu, name), "cuda"


def compile_in(strata, directory, name, model, target):
    os.makedirs(os.path.join(directory, "tmp"), exist_ok=True)
    local = os.path.join(directory, "model.onnx")
    shutil.copyfile(model, local)
    env = dict(os.environ, TMPDIR=os.path.join(directory, "tmp"))
    env.pop("STRATA_DUMP_DIR", None)
    cmd = [strata, "compile", "model.onnx", "-o", name + ".strata",
           "--target=" + target, "--no-cache"] + SHAPES.get(name, [])
    result = subprocess.run(cmd, cwd=directory, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    if result.returncode != 0:
        sys.exit(f"check_reproducible: compiling {model} for {target} "
                 f"failed:\n{result.stdout}")
    with open(os.path.join(directory, name + ".strata"), "rb") as f:
        return f.read()


def main():
    strata, source, work = sys.argv[1:4]
    strata = os.path.abspath(strata)
    shutil.rmtree(work, ignore_errors=True)
    cases = list(models(source))
    first = {}
    for name, model, target in cases:
        first[name] = compile_in(strata, os.path.join(work, "a", name), name,
                                 model, target)
    time.sleep(1)
    failures = []
    for name, model, target in cases:
        again = compile_in(strata,
                           os.path.join(work, "second-place", "deeper",
                                        name + "-copy"),
                           name, model, target)
        if again != first[name]:
            offset = next((i for i, (x, y) in
                           enumerate(zip(first[name], again)) if x != y),
                          min(len(again), len(first[name])))
            failures.append(f"{model} ({target}): {len(first[name])} and "
                            f"{len(again)} bytes, first difference at byte "
                            f"{offset}")
    if failures:
        sys.exit("check_reproducible: compiling twice gave different "
                 "modules:\n  " + "\n  ".join(failures))
    print(f"check_reproducible: {len(cases)} models, each compiled twice, "
          "byte-identical")


if __name__ == "__main__":
    main()
