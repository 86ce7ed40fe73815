#!/usr/bin/env python3
"""Feeds `strata import` damaged models and checks it never crashes.

For a few real models from the ONNX test data it writes truncated copies
(cut at many points), copies with flipped bytes, random-byte files and an
empty file. Every run must end with exit 0 (the damage happened to leave a
valid model) or exit 1 with an "error:" line naming the file -- never a
signal, a sanitizer report or another exit code. Truncated and random files
must be rejected (exit 1).

Usage: check_malformed.py STRATA TESTDATA_DIR WORK_DIR
"""

import os
import random
import subprocess
import sys

MODELS = [
    "node/test_conv_with_strides_padding",
    "node/test_layer_normalization_4d_axis0",
    "node/test_reshape_extended_dims",
    "pytorch-converted/test_ReLU",
    "simple/test_gradient_of_add",
]


def run(strata, path):
    proc = subprocess.run([strata, "import", path, "-o", os.devnull],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          timeout=60)
    return proc.returncode, proc.stderr.decode(errors="replace")


def main():
    strata, data, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    rng = random.Random(1234)
    cases = []  # (path, must_fail)
    for name in MODELS:
        model = os.path.join(data, name, "model.onnx")
        if not os.path.exists(model):
            continue
        blob = open(model, "rb").read()
        tag = name.replace("/", "_")
        cuts = sorted({1, 2, 7, len(blob) // 3, len(blob) // 2, len(blob) - 1}
                      | {rng.randrange(1, len(blob)) for _ in range(6)})
        for cut in cuts:
            if 0 < cut < len(blob):
                path = os.path.join(work, f"{tag}.cut{cut}.onnx")
                open(path, "wb").write(blob[:cut])
                # A prefix can still parse as a protobuf; it must then fail the
                # checker or conversion cleanly. Only "no crash" is required.
                cases.append((path, False))
        for i in range(8):
            damaged = bytearray(blob)
            for _ in range(rng.randrange(1, 8)):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
            path = os.path.join(work, f"{tag}.flip{i}.onnx")
            open(path, "wb").write(bytes(damaged))
            cases.append((path, False))
    for i in range(8):
        path = os.path.join(work, f"random{i}.onnx")
        open(path, "wb").write(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4096))))
        cases.append((path, True))
    empty = os.path.join(work, "empty.onnx")
    open(empty, "wb").close()
    cases.append((empty, True))
    text = os.path.join(work, "garbage.onnxtxt")
    open(text, "w").write("< ir_version: 8 > agraph (float[2 x) => {")
    cases.append((text, True))

    bad = 0
    for path, must_fail in cases:
        code, err = run(strata, path)
        clean = code == 0 or (code == 1 and f"{path}: error:" in err)
        if "Sanitizer" in err or "runtime error" in err:
            clean = False
        if not clean or (must_fail and code != 1):
            bad += 1
            print(f"FAIL {os.path.basename(path)}: exit {code}\n{err[-2000:]}")
    print(f"{len(cases) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
