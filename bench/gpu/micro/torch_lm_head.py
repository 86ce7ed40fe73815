# How torch.compile produces GPT-2's logits (h @ wte.t(), vocab 50257, as
# bench/gpu/workloads.py's gpt2_forward ends): the output's strides, and the
# time of eager, compiled, and compiled followed by .contiguous(), each
# median of 50 runs between CUDA events. On the device machine:
#
#   python3 bench/gpu/micro/torch_lm_head.py
#
# bench/RESULTS.md (2026-11-30 05:03) uses it to explain the GPT-2 row:
# torch.compile returns a padded view, strata the contiguous tensor.
import torch

torch.manual_seed(0)
h = torch.randn(8, 1024, 768, device="cuda", dtype=torch.bfloat16)
wte = torch.randn(50257, 768, device="cuda", dtype=torch.bfloat16) * 0.02


def f(h, w):
    return h @ w.t()


g = torch.compile(f)


def median_ms(fn):
    for _ in range(5):
        fn()
    ts = []
    for _ in range(50):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


y = g(h, wte)
print("compiled output", tuple(y.shape), "strides", y.stride(), "contiguous", y.is_contiguous())
print("eager %.3f ms" % median_ms(lambda: f(h, wte)))
print("compiled %.3f ms" % median_ms(lambda: g(h, wte)))
print("compiled + contiguous %.3f ms" % median_ms(lambda: g(h, wte).contiguous()))
