# torch.compile's kernels for one workload of bench/gpu/workloads.py, each
# with its CUDA time per call (torch.profiler over 20 calls after 5 warm-up
# calls), to compare with strata's steps kernel by kernel. On the device
# machine:
#
#   python3 bench/gpu/micro/peer_kernels.py bert_layer_bf16 [--autotune]
#
# For per-kernel times under the same conditions as strata's (caches
# flushed, one kernel at a time), run it under
# `ncu --clock-control none --metrics gpu__time_duration.sum --csv`.
# bench/RESULTS.md (2026-12-01 06:04) uses it for BERT's layer.
import argparse
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import run  # noqa: E402  (its peers, built as the benchmark builds them)
import workloads  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("workload")
ap.add_argument("--autotune", action="store_true",
                help="mode='max-autotune-no-cudagraphs' instead of the default")
ap.add_argument("--calls", type=int, default=20)
a = ap.parse_args()
w = next((x for x in workloads.all_workloads() if x.name == a.workload), None)
if w is None:
    sys.exit(f"no workload {a.workload}")
inputs = w.make_inputs("cuda")
fn = run.torch_peer("autotune" if a.autotune else "compile", w)
for _ in range(5):
    fn(*inputs)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as p:
    for _ in range(a.calls):
        fn(*inputs)
    torch.cuda.synchronize()
rows = [(e.device_time_total / a.calls, e.count / a.calls, e.key) for e in p.key_averages()
        if e.device_time_total > 0]
print(f"{w.name}: torch.compile's kernels, us per call (of {a.calls} calls)")
for us, n, name in sorted(rows, reverse=True):
    print(f"{us:9.1f}  x{n:<4g} {name[:110]}")
print(f"{sum(r[0] for r in rows):9.1f}  total")
