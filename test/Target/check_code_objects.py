#!/usr/bin/env python3
"""Checks the HSA code objects `strata conformance --target=rocm
--compile-only DIR` wrote: each must be an AMDGPU shared object for the
expected GPU, whose AMDHSA metadata lists at least one kernel (read with
llvm-readelf, the only thing that can read them here: there is no AMD GPU).

usage: check_code_objects.py LLVM_READELF DIR GPU
"""
import pathlib
import subprocess
import sys


def main():
    readelf, root, gpu = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    objects = sorted(root.rglob("*.strata"))
    if not objects:
        sys.exit(f"no code objects under {root}")
    bad = []
    for path in objects:
        out = subprocess.run([readelf, "--file-header", "--notes", str(path)],
                             capture_output=True, text=True)
        text = out.stdout
        if (out.returncode != 0 or "AMDGPU" not in text or
                "DYN (Shared object file)" not in text or
                f"amdgcn-amd-amdhsa--{gpu}" not in text or
                ".kernarg_segment_size" not in text):
            bad.append(f"{path}: {out.stderr.strip() or 'not an HSA code object for ' + gpu}")
    for line in bad:
        print(line)
    print(f"{len(objects) - len(bad)} of {len(objects)} code objects are "
          f"HSA code objects for {gpu} with kernels")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
