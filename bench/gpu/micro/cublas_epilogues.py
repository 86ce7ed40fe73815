# What cuBLAS's epilogues cost at BERT-base's product shapes (16384 rows):
# the product alone, with a bias (addmm with a vector: cuBLASLt's bias
# epilogue), with a full C added (beta = 1: strata's residual add in
# cuBLASLt's C) and with bias and tanh GELU, each the median of 50 runs
# between CUDA events. On the device machine:
#
#   python3 bench/gpu/micro/cublas_epilogues.py
#
# bench/RESULTS.md (2026-12-01 06:04) uses it: the C input costs a
# quarter of FFN2's time, a bias almost nothing.
import torch

M = 16384
SHAPES = [(768, 2304, "QKV"), (768, 768, "output projection"), (768, 3072, "FFN1"),
          (3072, 768, "FFN2")]


def median_us(fn, n=50):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    for i in range(n):
        ev[i].record()
        fn()
    ev[n].record()
    torch.cuda.synchronize()
    return sorted(ev[i].elapsed_time(ev[i + 1]) for i in range(n))[n // 2] * 1e3


g = torch.Generator(device="cuda").manual_seed(0)
for k, n, name in SHAPES:
    a = torch.randn(M, k, device="cuda", dtype=torch.bfloat16, generator=g)
    w = torch.randn(k, n, device="cuda", dtype=torch.bfloat16, generator=g) * 0.05
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16, generator=g)
    c = torch.randn(M, n, device="cuda", dtype=torch.bfloat16, generator=g)
    flops = 2 * M * k * n
    cells = {"a@w": lambda: torch.mm(a, w),
             "+bias": lambda: torch.addmm(b, a, w),
             "+C": lambda: torch.addmm(c, a, w),
             "+bias, gelu_tanh": lambda: torch._addmm_activation(b, a, w, use_gelu=True)}
    print(f"{name:18s} {M}x{k}x{n}: " + ", ".join(
        f"{label} {us:.1f} us ({flops / us / 1e6:.0f} TFLOP/s)"
        for label, us in ((label, median_us(f)) for label, f in cells.items())))
