#!/usr/bin/env python3
"""Compiles the exported models and runs strata-runtime-stress on them.

  run_stress.py STRATA SOURCE_DIR WORK_DIR TOOL [TSAN_TOOL]

The models of models/ (oneDNN convolutions and matrix products, generated
kernels, attention, a decoder; docs/testing.md, "Concurrency") are compiled
for the CPU into WORK_DIR, then TOOL runs them from 8 threads, 1,000 requests
each, with sessions of one thread and, from 4 threads, of two, every output
compared byte for byte with a single-threaded reference. TSAN_TOOL, a
ThreadSanitizer build of the same tool (scripts/test.sh makes one), then runs
8 x 1,000 with sessions of one thread: Debian's libgomp is not instrumented,
so ThreadSanitizer cannot see the barriers of OpenMP regions and would
report races inside every parallel kernel.
"""

import os
import shutil
import subprocess
import sys

MODELS = {
    "resnet_small": [],
    "mobilenet_small": [],
    "transformer_encoder": [],
    "gpt_decoder": [],
    "mlp_dynamic": ["--input-shape", "x=3,64"],
}


def run(cmd, env=None):
    print("$ " + " ".join(cmd), flush=True)
    result = subprocess.run(cmd, env=env)
    if result.returncode != 0:
        sys.exit(f"run_stress: {os.path.basename(cmd[0])} exited with "
                 f"{result.returncode}")


def main():
    strata, source, work, tool = sys.argv[1:5]
    tsan_tool = sys.argv[5] if len(sys.argv) > 5 else None
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    modules = []
    for name, flags in MODELS.items():
        module = os.path.join(work, name + ".strata")
        run([strata, "compile", os.path.join(source, "models", name,
                                              "model.onnx"),
             "-o", module, "--no-cache"] + flags)
        modules.append(module)
    run([tool, "--workers", "8", "--runs", "1000"] + modules)
    run([tool, "--workers", "4", "--runs", "500", "--session-threads", "2"]
        + modules)
    if tsan_tool:
        env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1 exitcode=66")
        run([tsan_tool, "--workers", "8", "--runs", "1000"] + modules, env)


if __name__ == "__main__":
    main()
