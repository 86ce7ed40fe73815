#!/usr/bin/env python3
"""Runs the modules detection.py --pack cuda wrote, on a GPU, and compares
their detections with torch's (numpy only; no torch needed).

usage: check_pack.py STRATA_BENCH_GPU PACKDIR [name ...]

Each module runs under strata-bench-gpu (the CUDA executor, host steps and
all) with the image detection.py saved; the outputs it writes are compared
as detection.py compares them: as a set, label for label, scores within
1e-4 and boxes within 0.1 pixel.
"""

import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from detection import compare  # noqa: E402


def main():
    tool, pack = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or sorted(
        f[:-len(".strata")] for f in os.listdir(pack) if f.endswith(".strata"))
    failed = 0
    for name in names:
        case = os.path.join(pack, name)
        out = os.path.join(case, "out")
        os.makedirs(out, exist_ok=True)
        run = subprocess.run(
            [tool, "run", os.path.join(pack, f"{name}.strata"), "--inputs",
             case, "--outputs", out, "--json", os.path.join(case, "run.json"),
             "--max-runs", "50"], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL {name}: strata-bench-gpu failed:\n{run.stderr[-3000:]}")
            failed += 1
            continue
        got = [np.fromfile(os.path.join(out, f"output_{i}.bin"), dtype)
               for i, dtype in enumerate((np.float32, np.float32, np.int64))]
        got[0] = got[0].reshape(-1, 4)
        ref = [np.load(os.path.join(case, f"{n}.npy"))
               for n in ("boxes", "scores", "labels")]
        why = compare(name + " (GPU)", ref, got)
        if why:
            print(f"FAIL {name}: {why}")
            failed += 1
        print(open(os.path.join(case, "run.json")).read()[:600])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
