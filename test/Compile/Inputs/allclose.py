#!/usr/bin/env python3
"""allclose.py ACTUAL.npy EXPECTED.npy: exits 0 when numpy.allclose holds at
rtol 1e-4, atol 1e-6 (a NaN matches a NaN only), and prints the largest
difference either way."""
import sys

import numpy as np

a, e = np.load(sys.argv[1]), np.load(sys.argv[2])
if a.shape != e.shape:
    sys.exit(f"shape {a.shape} != expected {e.shape}")
print(f"max abs diff {np.nanmax(np.abs(a - e)):.3g}")
sys.exit(0 if np.allclose(a, e, rtol=1e-4, atol=1e-6, equal_nan=True) else 1)
