#!/usr/bin/env python3
"""The GPU benchmark: strata against torch eager, torch.compile and JAX jit on the H200.

Runs on the GPU machine (docs/benchmarks.md, "GPU benchmark"):

    PYTHONUNBUFFERED=1 python3 bench/gpu/run.py [--only NAME ...] [--budget-s S]
        [--strata-modules DIR [--strata-bench PATH]] [--json FILE]

For each workload of workloads.py: seeded inputs on the GPU, a reference in higher precision
(float64 for float32 workloads, float32 for bf16 ones, TF32 off), then for each peer (torch
eager, torch.compile default and max-autotune, JAX jit; torch SDPA's backends for attention)
and for strata's module DIR/<workload>.strata when given: the result is checked against the
reference first (relative L2 error within the workload's tolerance, no NaN), then timed: warm-up,
then the median of many runs, each between two CUDA events (JAX: wall clock over back-to-back
calls, see time_jax). Ceilings (device copy bandwidth, bf16 matmul rate) are measured first.
Prints one table and writes every number to a JSON file as it goes, so that a run cut short
still leaves its results. Without strata modules the strata column says why, never a number.

`--rounds N` (N > 1) builds and checks every peer once, then times every engine, strata
included, once a round for N rounds, the order turned by one each round; each engine's time is
the median of its rounds' medians (bench_rounds).

`--strata-variants A B ...` compares module variants of strata (directories of
<workload>.strata, e.g. compiled with and without a change) in one process: the inputs, the
reference, the ceilings and the peers once, then each variant's strata run in turn, `--rounds`
times, so that the card's clocks and heat fall alike on every variant. The workload's entry gets
`variants` (every run) and `variants_summary` (per variant: the median of the rounds' medians,
the lowest p10, the ratio to the first variant, whether every check passed, the per-step means);
its `strata` column is the first variant's first run. An A/B of a change costs a few seconds of
device time per variant and round instead of a whole run.py each.

`--small --device cpu` runs the same code at the tracing sizes on the CPU (no CUDA events, no
torch.compile on torch 1.13): a test of the harness, with modules from
`export_onnx.py --small` compiled for the CPU.
"""

import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import report  # noqa: E402
import workloads as W  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
NO_MODULES = "not yet (no cuda codegen)"

# Rough cold-start seconds of each peer's first call on the H200 (compilation), used only to
# decide what still fits in --budget-s.
# (Seen on 2026-11-29: at most 4 s per memory-bound block after the first, max-autotune 14 s
# for gemm_gelu_bf16, BERT 1.4-6 s, GPT-2 9 s with torch.compile and 4-6 s with JAX.)
COMPILE_COST = {"compile": 15, "graphs": 15, "autotune": 40, "autotune_graphs": 15, "jax": 8}
COMPILE_COST_MODEL = {"bert_layer_bf16": {"compile": 20, "jax": 10},
                      "gpt2_small_bf16": {"compile": 30, "jax": 15}}


class Budget:
    def __init__(self, seconds):
        self.start = time.time()
        self.seconds = seconds

    def elapsed(self):
        return time.time() - self.start

    def allows(self, cost):
        return not self.seconds or self.elapsed() + cost <= self.seconds


def log(budget, msg):
    print(f"[{budget.elapsed():6.1f}s] {msg}", flush=True)


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------


def _summary(ms, **extra):
    d = {"median_ms": statistics.median(ms), "min_ms": min(ms), "mean_ms": statistics.fmean(ms),
         "runs": len(ms)}
    d.update(extra)
    return d


def _runs_for(est_ms, o):
    n = int(o.target_ms / est_ms) if est_ms > 0 else o.max_runs
    return max(o.min_runs, min(o.max_runs, n))


def time_torch(fn, args, dev, o):
    """Median of runs, each between two CUDA events (host clock on the CPU)."""
    for _ in range(o.warmup):
        fn(*args)
    sync(dev)
    if dev.type != "cuda":
        def once():
            t = time.perf_counter()
            fn(*args)
            return (time.perf_counter() - t) * 1e3
        est = statistics.median(once() for _ in range(3))
        return _summary([once() for _ in range(_runs_for(est, o))])

    def timed(n):
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(n)]
        for s, e in ev:
            s.record()
            fn(*args)
            e.record()
        torch.cuda.synchronize(dev)
        return [s.elapsed_time(e) for s, e in ev]
    est = statistics.median(timed(3))
    return _summary(timed(_runs_for(est, o)))


def time_jax(fn, args, o):
    """JAX runs on its own streams, which torch's events do not see: the wall clock over
    `per` back-to-back calls (dispatch overlaps the previous call's kernels), synchronized
    once at the end of each round; the median over rounds of the per-call time."""
    for _ in range(o.warmup):
        fn(*args).block_until_ready()

    def round_ms(per):
        t = time.perf_counter()
        out = None
        for _ in range(per):
            out = fn(*args)
        out.block_until_ready()
        return (time.perf_counter() - t) * 1e3 / per
    est = statistics.median(round_ms(1) for _ in range(3))
    per = max(1, min(50, int(20.0 / max(est, 1e-3))))
    rounds = max(5, min(50, int(o.target_ms / (per * est)) if est > 0 else 50))
    return _summary([round_ms(per) for _ in range(rounds)], calls_per_round=per)


# ---------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------


def compare(out, ref, tol):
    """Relative L2 error and largest absolute error, in float64, in chunks. A model of several
    outputs (a decode step's logits and cache) passes when every output does; the worst
    output's errors are reported."""
    if isinstance(ref, (tuple, list)):
        if not isinstance(out, (tuple, list)) or len(out) != len(ref):
            return {"pass": False, "why": f"{len(ref)} outputs expected"}
        checks = [compare(o, r, tol) for o, r in zip(out, ref)]
        worst = max(checks, key=lambda c: (not c["pass"], c.get("rel_err", 0.0)))
        return dict(worst, outputs=len(checks), **{"pass": all(c["pass"] for c in checks)})
    if tuple(out.shape) != tuple(ref.shape):
        return {"pass": False, "why": f"shape {tuple(out.shape)} != {tuple(ref.shape)}"}
    o = out.reshape(-1)
    r = ref.reshape(-1).to(o.device)
    num = den = 0.0
    maxabs = 0.0
    bad = 0
    step = 1 << 26
    for i in range(0, o.numel(), step):
        a = o[i:i + step].double()
        b = r[i:i + step].double()
        bad += int((~torch.isfinite(a)).sum()) - int((~torch.isfinite(b)).sum())
        d = torch.nan_to_num(a - b, nan=0.0, posinf=0.0, neginf=0.0)
        num += float((d * d).sum())
        den += float((b * b).sum())
        maxabs = max(maxabs, float(d.abs().max()))
    rel = (num ** 0.5) / (den ** 0.5) if den > 0 else num ** 0.5
    return {"pass": bool(bad == 0 and rel <= tol), "rel_err": rel, "max_abs_err": maxabs,
            "nonfinite": bad, "tol": tol}


def reference(w, inputs):
    hi = torch.float64 if all(i.dtype == torch.float32 for i in inputs if i.is_floating_point()) \
        else torch.float32
    args = [t.to(hi) if t.is_floating_point() else t for t in inputs]
    # A real model's function takes its compute type: a text model's inputs are integers.
    kw = {"dtype": hi} if w.group == "real" else {}
    with torch.no_grad():
        return w.torch_fn(*args, **kw), hi


# ---------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------


def torch_peer(name, w, reset=True):
    if name in ("eager", "sdpa"):
        return w.torch_fn
    if name in ("compile", "graphs", "autotune", "autotune_graphs"):
        if not hasattr(torch, "compile"):
            raise RuntimeError(f"torch.compile is not in torch {torch.__version__}")
        mode = {"compile": None, "graphs": "reduce-overhead",
                "autotune": "max-autotune-no-cudagraphs",
                "autotune_graphs": "max-autotune"}[name]
        import torch._dynamo as dynamo
        if reset:
            dynamo.reset()
        return torch.compile(w.torch_fn, mode=mode, dynamic=False)
    if name in ("sdpa_flash", "sdpa_cudnn"):
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backend = {"sdpa_flash": SDPBackend.FLASH_ATTENTION,
                   "sdpa_cudnn": SDPBackend.CUDNN_ATTENTION}[name]

        def fn(*a):
            with sdpa_kernel(backend):
                return w.torch_fn(*a)
        return fn
    raise ValueError(name)


_JAX = None


def jax_module(dev):
    global _JAX
    if _JAX is None:
        import jax
        if dev.type == "cuda" and jax.devices()[0].platform != "gpu":
            raise RuntimeError(f"JAX has no GPU here (devices: {jax.devices()})")
        _JAX = jax
    return _JAX


def to_jax(t, dev):
    """A JAX array that owns a copy of `t` (DLPack, else through the host)."""
    jax = jax_module(dev)
    import jax.numpy as jnp
    if t.dtype == torch.int64:
        t = t.to(torch.int32)  # JAX runs without x64
    t = t.contiguous()
    sync(dev)
    try:
        x = jnp.array(jax.dlpack.from_dlpack(t), copy=True)
    except Exception:
        if t.dtype == torch.bfloat16:
            x = jax.lax.bitcast_convert_type(jnp.asarray(t.view(torch.int16).cpu().numpy()),
                                             jnp.bfloat16)
        else:
            x = jnp.asarray(t.cpu().numpy())
    x.block_until_ready()
    return x


def from_jax(x, dev):
    x.block_until_ready()
    try:
        return torch.from_dlpack(x)
    except Exception:
        import jax
        import jax.numpy as jnp
        if x.dtype == jnp.bfloat16:
            a = np.asarray(jax.lax.bitcast_convert_type(x, jnp.int16))
            return torch.from_numpy(a).view(torch.bfloat16).to(dev)
        return torch.from_numpy(np.asarray(x)).to(dev)


def run_peer(name, w, inputs, ref, dev, o, budget):
    res, timer = prepare_peer(name, w, inputs, ref, dev, o)
    res["time"] = timer()
    return res


def prepare_peer(name, w, inputs, ref, dev, o, reset=True):
    """A peer built, called once and checked against the reference: its result so far and a
    function that times it (each call a new measurement of the same compiled function).
    reset=False keeps dynamo's caches (bench_rounds: the peers compiled before stay
    compiled)."""
    res = {}
    if name == "jax":
        jax = jax_module(dev)
        bshd = w.jax_layout == "bshd"
        args = [to_jax(t.transpose(1, 2) if bshd else t, dev) for t in inputs]
        impls = ("cudnn", None) if w.uses_attention else (W.JAX_ATTENTION_IMPL,)
        for impl in impls:
            W.JAX_ATTENTION_IMPL = impl
            try:
                fn = jax.jit(w.jax_builder())
                t0 = time.time()
                out = fn(*args)
                out.block_until_ready()
                break
            except Exception as e:
                if impl is impls[-1]:
                    raise
                res["attention_fallback"] = f"cuDNN attention refused: {short_error(e)[:300]}"
            finally:
                W.JAX_ATTENTION_IMPL = "cudnn"
        if w.uses_attention:
            res["attention_impl"] = impl or "default (JAX's choice)"
        res["first_call_s"] = time.time() - t0
        y = from_jax(out, dev)
        res["check"] = compare(y.transpose(1, 2) if bshd else y, ref, w.tol)
        del y
        del out

        def time_it():
            t = time_jax(fn, args, o)
            t["method"] = "wall clock, back-to-back calls"
            return t
        return res, time_it
    fn = torch_peer(name, w, reset)
    with torch.no_grad():
        t0 = time.time()
        out = fn(*inputs)
        sync(dev)
        res["first_call_s"] = time.time() - t0
        res["check"] = compare(out, ref, w.tol)
        del out

    def time_it():
        with torch.no_grad():
            return time_torch(fn, inputs, dev, o)
    return res, time_it


# ---------------------------------------------------------------------------
# strata
# ---------------------------------------------------------------------------


def _write_raw(t, path):
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    t.numpy().tofile(path)


def _read_raw(path, spec, shape, dev):
    np_dtype = {torch.float32: np.float32, torch.bfloat16: np.int16,
                torch.int64: np.int64, torch.float16: np.float16}[spec.dtype]
    a = np.fromfile(path, dtype=np_dtype)
    want = int(np.prod(shape))
    if a.size != want:
        raise RuntimeError(f"{os.path.basename(path)} holds {a.size} elements; {want} expected")
    t = torch.from_numpy(a)
    if spec.dtype == torch.bfloat16:
        t = t.view(torch.bfloat16)
    return t.reshape(shape).to(dev)


def _compile_log(o):
    path = os.path.join(o.strata_modules, "COMPILE_LOG.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return {}


def run_strata(w, inputs, ref, dev, o, dims, modules=None):
    modules = modules or o.strata_modules
    if not modules:
        return {"status": NO_MODULES}
    module = os.path.join(modules, w.name + ".strata")
    if not os.path.exists(module):
        why = _compile_log(o).get(w.name)
        return {"status": f"no module ({why})" if why else f"no module {w.name}.strata"}
    tool = o.strata_bench
    env = dict(os.environ)
    libdir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(tool))), "lib")
    if os.path.isdir(libdir):
        env["LD_LIBRARY_PATH"] = libdir + ":" + env.get("LD_LIBRARY_PATH", "")
    res = {"module": module}
    if o.strata_label:
        res["label"] = o.strata_label
    with tempfile.TemporaryDirectory(dir=o.tmp) as d:
        for spec, t in zip(w.inputs, inputs):
            _write_raw(t, os.path.join(d, spec.name + ".bin"))
        rj = os.path.join(d, "result.json")
        cmd = [tool, "run", module, "--inputs", d, "--outputs", d, "--json", rj,
               "--warmup", str(o.warmup), "--min-runs", str(o.min_runs),
               "--max-runs", str(o.max_runs), "--target-ms", str(o.target_ms)]
        if o.strata_no_graph:
            cmd.append("--no-graph")
        if o.strata_times:
            os.makedirs(o.strata_times, exist_ok=True)
            cmd += ["--times", os.path.join(o.strata_times, w.name + ".times")]
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=o.strata_timeout)
        res["wall_s"] = time.time() - t0
        if p.returncode != 0:
            res["error"] = (p.stderr.strip() or p.stdout.strip())[-600:]
            return res
        with open(rj) as f:
            r = json.load(f)
        shapes = w.output_shapes(dims)
        outs = [_read_raw(os.path.join(d, f"output_{k}.bin"), spec, shp, dev)
                for k, (spec, shp) in enumerate(zip(w.outputs, shapes))]
        res["check"] = compare(outs if len(outs) > 1 else outs[0], ref, w.tol)
        del outs
        for k in ("time", "method", "session_replay", "session_replay_error", "profile",
                  "device", "loaded_image", "programmatic_launches", "own_ptx_launches",
                  "library_calls",
                  "session_run", "steps"):
            if k in r:
                res[k] = r[k]
        if p.stderr.strip():
            res["stderr"] = p.stderr.strip()[-400:]
    return res


# ---------------------------------------------------------------------------
# Ceilings and environment
# ---------------------------------------------------------------------------


def copy_ms(n, dev, o):
    """Median ms of a device copy of `n` float32 elements (random data), timed as the engines
    are."""
    src = torch.randn(n, device=dev)
    dst = torch.empty_like(src)
    return time_torch(lambda: dst.copy_(src), (), dev, o)["median_ms"]


def measure_ceilings(dev, o, small):
    """Device copy bandwidth (bytes read + written) and the bf16 matmul rate, on random data."""
    def matmul_ms(m, dt):
        a = torch.randn(m, m, device=dev, dtype=dt)
        b = torch.randn(m, m, device=dev, dtype=dt)
        return time_torch(lambda: a @ b, (), dev, o)["median_ms"]

    out = {}
    if dev.type == "cuda":
        # Clocks ramp up under load: half a second of matrix products first.
        a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
        t = time.time()
        while time.time() - t < 0.5:
            a @ a
            sync(dev)
        del a
    n = (1 << 28) if not small else (1 << 20)  # float32 elements: 1 GiB
    out["copy_bytes"] = 2 * n * 4
    out["copy_ms"] = copy_ms(n, dev, o)
    out["copy_tbps"] = out["copy_bytes"] / (out["copy_ms"] * 1e-3) / 1e12
    m = 8192 if not small else 256
    out["matmul_ms"] = matmul_ms(m, torch.bfloat16 if dev.type == "cuda" else torch.float32)
    out["matmul_bf16_tflops"] = 2 * m ** 3 / (out["matmul_ms"] * 1e-3) / 1e12
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    return out


def environment(dev):
    env = {"torch": torch.__version__, "python": platform.python_version(),
           "torch_cuda": torch.version.cuda}
    try:
        import triton
        env["triton"] = triton.__version__
    except Exception:
        env["triton"] = "none"
    try:
        import jax
        import jaxlib
        env["jax"] = jax.__version__
        env["jaxlib"] = jaxlib.__version__
    except Exception as e:
        env["jax"] = f"none ({type(e).__name__})"
    if dev.type == "cuda":
        env["cudnn"] = str(torch.backends.cudnn.version())
        p = torch.cuda.get_device_properties(dev)
        env["gpu"] = p.name
        env["sm_count"] = p.multi_processor_count
        try:
            q = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm,"
                 "clocks.max.mem,power.limit", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=30).stdout.strip().split(", ")
            env.update(gpu=q[0], driver=q[1], gpu_memory=q[2], max_sm_clock=q[3],
                       max_mem_clock=q[4], power_limit=q[5])
        except Exception as e:
            env["nvidia_smi"] = f"failed: {e}"
    else:
        env["gpu"] = "none (cpu run: " + platform.processor() + ")"
    return env


# ---------------------------------------------------------------------------
# Main loop
# ---------------------------------------------------------------------------


def save(res, path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1)
    os.replace(tmp, path)


def cost(w, peer):
    if w.group == "real" and peer in ("compile", "graphs"):
        return 60  # a whole network's first torch.compile
    return COMPILE_COST_MODEL.get(w.name, {}).get(peer, COMPILE_COST.get(peer, 2))


def short_error(e):
    msg = f"{type(e).__name__}: {e}".strip().replace("\n", " ")
    return msg[:500]


def same_size_copy(nbytes, dev, o):
    """A device copy that reads and writes `nbytes` in all, timed as the engines are. The
    ceiling's 1 GiB copy hides the launch, ramp and tail that a copy of a workload's size
    pays; this one shows how near a plain copy comes at that size."""
    n = max(nbytes // 8, 1)  # float32 elements read, and as many written
    ms = copy_ms(n, dev, o)
    return {"bytes": 8 * n, "ms": ms, "tbps": 8 * n / (ms * 1e-3) / 1e12}


def combine_rounds(times):
    """One engine's time over interleaved rounds: the median of the rounds' medians (the
    number the table shows), the mean of their means, the lowest minimum and p10, the highest
    p90, and each round's median."""
    out = dict(times[0])
    meds = [t["median_ms"] for t in times]
    out["median_ms"] = statistics.median(meds)
    out["min_ms"] = min(t.get("min_ms", t["median_ms"]) for t in times)
    if all("mean_ms" in t for t in times):
        out["mean_ms"] = statistics.fmean(t["mean_ms"] for t in times)
    if all("p10_ms" in t for t in times):
        out["p10_ms"] = min(t["p10_ms"] for t in times)
    if all("p90_ms" in t for t in times):
        out["p90_ms"] = max(t["p90_ms"] for t in times)
    out["runs"] = sum(t.get("runs", 0) for t in times)
    out["rounds_median_ms"] = meds
    return out


def guarded_peer(w, p, budget, o, fn):
    """fn()'s result for peer p, unless the time budget leaves no room for its compilation
    ({"skipped": ...}, logged) or it raises ({"error": ...})."""
    if not budget.allows(cost(w, p)):
        log(budget, f"{w.name} {p}: skipped (time budget)")
        return {"skipped": "time budget"}
    try:
        return fn()
    except Exception as e:
        if o.verbose:
            traceback.print_exc()
        return {"error": short_error(e)}


def bench_rounds(w, peers, entry, dev, o, budget, res, inputs, ref, dims):
    """--rounds N without variants: every peer is built and checked once, then each round
    times every engine once, strata included, the order turned by one each round, so that
    no engine always runs first or last on a card whose clocks fall under load."""
    timers = {}
    # dynamo's caches are cleared before the workload's first compiled peer only: a reset
    # before each would make the peers compiled before it compile again in the rounds.
    reset = True
    for p in peers:
        def build():
            nonlocal reset
            r, timers[p] = prepare_peer(p, w, inputs, ref, dev, o, reset)
            reset = reset and p not in ("compile", "graphs", "autotune", "autotune_graphs")
            return r
        entry["peers"][p] = guarded_peer(w, p, budget, o, build)
        if "error" in entry["peers"][p]:
            _log_result(budget, w, p, entry["peers"][p], res["ceilings"], entry)
    engines = list(timers) + (["strata"] if o.strata_modules else [])
    times = {e: [] for e in engines}
    strata_runs = []
    for r in range(o.rounds):
        k = r % len(engines) if engines else 0
        for e in engines[k:] + engines[:k]:
            try:
                if e == "strata":
                    v = run_strata(w, inputs, ref, dev, o, dims)
                    strata_runs.append(v)
                    if v.get("time"):
                        times[e].append(v["time"])
                else:
                    times[e].append(timers[e]())
            except Exception as ex:
                log(budget, f"{w.name} {e} round {r + 1}: {short_error(ex)}")
    for p in timers:
        if times[p]:
            entry["peers"][p]["time"] = combine_rounds(times[p])
        else:
            entry["peers"][p]["error"] = "no round was timed"
        _log_result(budget, w, p, entry["peers"][p], res["ceilings"], entry)
    if "strata" in engines:
        st = dict(strata_runs[0]) if strata_runs else {"error": "not run"}
        if times["strata"]:
            st["time"] = combine_rounds(times["strata"])
            st["checks_pass_all_rounds"] = all(v.get("check", {}).get("pass")
                                               for v in strata_runs if v.get("time"))
        entry["strata"] = st
    else:
        entry["strata"] = run_strata(w, inputs, ref, dev, o, dims)
    _log_result(budget, w, "strata", entry["strata"], res["ceilings"], entry)
    save(res, o.json)


def bench_workload(w, peers, entry, dev, o, budget, res, with_strata):
    dims = w.trace_dims() if o.small else w.dims
    if not w.flops:
        entry["same_size_copy"] = same_size_copy(entry["bytes"], dev, o)
    inputs = w.make_inputs(dev, seed=o.seed, dims=dims)
    ref, hi = reference(w, inputs)
    entry["reference"] = str(hi).replace("torch.", "")
    if with_strata and o.rounds > 1 and not o.strata_variants:
        bench_rounds(w, peers, entry, dev, o, budget, res, inputs, ref, dims)
        del inputs, ref
        if dev.type == "cuda":
            torch.cuda.empty_cache()
        return
    for p in peers:
        r = guarded_peer(w, p, budget, o,
                         lambda: run_peer(p, w, inputs, ref, dev, o, budget))
        entry["peers"][p] = r
        if "skipped" in r:
            continue
        _log_result(budget, w, p, r, res["ceilings"], entry)
        save(res, o.json)
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    if with_strata and o.strata_variants:
        run_variants(w, inputs, ref, dev, o, dims, entry, budget, res)
    elif with_strata:
        try:
            entry["strata"] = run_strata(w, inputs, ref, dev, o, dims)
        except Exception as e:
            entry["strata"] = {"error": short_error(e)}
        _log_result(budget, w, "strata", entry["strata"], res["ceilings"], entry)
        save(res, o.json)
    del inputs, ref
    if dev.type == "cuda":
        torch.cuda.empty_cache()


def variant_labels(dirs):
    """A label per variant directory: its last path component, made unique."""
    labels = []
    for d in dirs:
        base = os.path.basename(os.path.normpath(d)) or d
        label, k = base, 2
        while label in labels:
            label, k = f"{base}#{k}", k + 1
        labels.append(label)
    return labels


def summarize_variants(runs, labels):
    """Per variant: the median of its rounds' medians, the lowest p10, the ratio of the first
    variant's median to its own (above 1: faster than the first), every check passed, and the
    mean of each step's per-step means over the rounds (aligned with step_names). Without a
    time for the first variant there is no ratio."""
    out = {}
    first = None
    for i, label in enumerate(labels):
        timed = [r for r in runs.get(label, []) if r.get("time")]
        s = {"rounds": len(runs.get(label, [])), "timed": len(timed)}
        if timed:
            s["median_ms"] = statistics.median(r["time"]["median_ms"] for r in timed)
            s["p10_ms"] = min(r["time"].get("p10_ms", r["time"]["median_ms"]) for r in timed)
            s["medians_ms"] = [r["time"]["median_ms"] for r in timed]
            s["checks_pass"] = all(r.get("check", {}).get("pass") for r in timed)
            steps = [r["profile"] for r in timed if r.get("profile", {}).get("step_names")]
            if steps and all(p["step_names"] == steps[0]["step_names"] for p in steps):
                s["step_names"] = steps[0]["step_names"]
                s["per_step_mean_ms"] = [statistics.fmean(col) for col in
                                         zip(*(p["per_step_mean_ms"] for p in steps))]
            if i == 0:
                first = s["median_ms"]
            if first is not None:
                s["speedup_vs_first"] = first / s["median_ms"]
        errors = list(dict.fromkeys(r.get("error") or r.get("status")
                                    for r in runs.get(label, []) if not r.get("time")))
        if errors:
            s["errors"] = errors[:3]
        out[label] = s
    return out


def run_variants(w, inputs, ref, dev, o, dims, entry, budget, res):
    """Each variant's module in turn, `o.rounds` times (run.py's docstring)."""
    labels = variant_labels(o.strata_variants)
    runs = {label: [] for label in labels}
    entry["variants"] = runs
    for r in range(o.rounds):
        for label, d in zip(labels, o.strata_variants):
            try:
                v = run_strata(w, inputs, ref, dev, o, dims, modules=d)
            except Exception as e:
                v = {"error": short_error(e)}
            runs[label].append(v)
            _log_result(budget, w, f"strata[{label}] round {r + 1}", v, res["ceilings"], entry)
            save(res, o.json)
    entry["strata"] = runs[labels[0]][0] if runs[labels[0]] else {"status": NO_MODULES}
    entry["variants_summary"] = summarize_variants(runs, labels)
    for label, s in entry["variants_summary"].items():
        if "median_ms" in s:
            ratio = (f"x{s['speedup_vs_first']:.3f} against {labels[0]}"
                     if "speedup_vs_first" in s else f"{labels[0]} has no time")
            log(budget, f"{w.name} strata[{label}]: median of {s['timed']} medians "
                f"{s['median_ms']:.4f} ms, lowest p10 {s['p10_ms']:.4f}, {ratio}, checks "
                + ("ok" if s["checks_pass"] else "FAILED"))
        else:
            why = "; ".join(map(str, s.get("errors", [])))
            log(budget, f"{w.name} strata[{label}]: no time ({why})")
    save(res, o.json)


def _log_result(budget, w, p, r, ceilings, entry):
    if r.get("time"):
        ms = r["time"]["median_ms"]
        rs, frac = report.rate(entry, ms, ceilings)
        c = r.get("check", {})
        log(budget, f"{w.name} {p}: {ms:.3f} ms ({rs}"
            + (f", {frac * 100:.0f}%" if frac is not None else "") + "), check "
            + ("ok" if c.get("pass") else "FAILED") + f" rel {c.get('rel_err', float('nan')):.1e}"
            + (f", first call {r['first_call_s']:.1f} s" if "first_call_s" in r else ""))
    else:
        log(budget, f"{w.name} {p}: " + str(r.get("error") or r.get("status") or r.get("skipped")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="workload names (default: all of the suite)")
    ap.add_argument("--suite", choices=("kernels", "real"), default="kernels",
                    help="the default workloads: the kernel workloads, or the real models "
                         "(real_models.py)")
    ap.add_argument("--skip", nargs="*", default=[], help="workload names to leave out")
    ap.add_argument("--json", default=os.path.join(os.environ.get("OUT", "."), "gpu_bench.json"))
    ap.add_argument("--budget-s", type=float, default=0,
                    help="stop starting compilations that would end past this many seconds")
    ap.add_argument("--strata-modules", help="directory of <workload>.strata (target cuda)")
    ap.add_argument("--strata-bench", default=os.path.join(ROOT, "build-gpu-pack", "bin",
                                                           "strata-bench-gpu"))
    ap.add_argument("--strata-label", help="the strata column's name (self-tests)")
    ap.add_argument("--strata-variants", nargs="+", metavar="DIR",
                    help="compare these directories of <workload>.strata, interleaved "
                         "(replaces --strata-modules; see the docstring)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="interleaved rounds: of each module variant with --strata-variants "
                         "(default 3), else of every engine, peers and strata (default 1)")
    ap.add_argument("--strata-timeout", type=float, default=300)
    ap.add_argument("--strata-times", metavar="DIR",
                    help="write each strata replay's time to DIR/<workload>.times")
    ap.add_argument("--strata-no-graph", action="store_true",
                    help="time strata's steps launched one by one, not its CUDA graph")
    ap.add_argument("--no-peers", action="store_true", help="strata only (and the reference)")
    ap.add_argument("--peers", nargs="*", help="only these peers (eager, compile, graphs "
                    "(torch.compile mode='reduce-overhead'), autotune, "
                    "autotune_graphs, sdpa, sdpa_flash, sdpa_cudnn, jax)")
    ap.add_argument("--no-optional", action="store_true",
                    help="leave out the optional peers even when time is left")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--small", action="store_true", help="the tracing sizes (harness tests)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--min-runs", type=int, default=10)
    ap.add_argument("--max-runs", type=int, default=300)
    ap.add_argument("--target-ms", type=float, default=200,
                    help="timed runs per measurement: about this much work")
    ap.add_argument("--tmp", default=None, help="where strata's inputs and outputs go")
    ap.add_argument("-v", "--verbose", action="store_true")
    o = ap.parse_args()

    if o.rounds is None:
        o.rounds = 3 if o.strata_variants else 1
    if o.rounds < 1:
        sys.exit("--rounds must be at least 1")
    if o.strata_variants:
        for d in o.strata_variants:
            if not os.path.isdir(d):
                sys.exit(f"--strata-variants: {d!r} is not a directory")
        o.strata_modules = o.strata_variants[0]
    dev = torch.device(o.device)
    budget = Budget(o.budget_s)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    names = o.only or [w.name for w in (W.REAL if o.suite == "real" else W.WORKLOADS)]
    for n in names + o.skip:
        if n not in W.BY_NAME:
            sys.exit(f"unknown workload {n!r}; known: {', '.join(W.BY_NAME)}")
    ws = [W.BY_NAME[n] for n in names if n not in o.skip]

    res = {"date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "argv": sys.argv[1:], "env": environment(dev), "small": o.small,
           "method": {"torch": "runs each between two CUDA events after "
                               f"{o.warmup} warm-up runs (about {o.target_ms:.0f} ms of runs, "
                               f"{o.min_runs}..{o.max_runs})",
                      "jax": "wall clock over back-to-back calls, median of rounds",
                      "strata": "strata-bench-gpu: CUDA events around each replay of the "
                                "Session's CUDA graph of all its steps, kernels and cuBLASLt "
                                "calls (cudaTimeRuns; device only)"},
           "notes": [], "workloads": []}
    if o.rounds > 1:
        res["method"]["rounds"] = (
            f"{o.rounds} interleaved rounds: " + (
                "each module variant's strata run in turn per round; each variant's time is "
                "the median of its rounds' medians" if o.strata_variants else
                "each peer built and checked once, then every engine (peers and strata) timed "
                "once a round, the order turned by one each round; each engine's time is the "
                "median of its rounds' medians (optional peers: one round)"))
    log(budget, "env: " + json.dumps(res["env"]))
    res["ceilings"] = measure_ceilings(dev, o, o.small)
    log(budget, f"ceilings: copy {res['ceilings']['copy_tbps']:.2f} TB/s, "
        f"matmul {res['ceilings']['matmul_bf16_tflops']:.0f} TFLOP/s")
    res["notes"].append(
        "max-autotune runs on the GEMM workloads only, to bound the run's time; the column "
        "'max-autotune (no cudagraphs)' is mode='max-autotune-no-cudagraphs': in mode "
        "'max-autotune' cudagraph trees copy every input that is not a parameter into the "
        "graph's static buffers on each call, which charges those copies to it")
    res["notes"].append("attention: torch.compile of SDPA calls the same kernels as eager "
                        "SDPA, so the peers are SDPA's backends and JAX "
                        "(jax.nn.dot_product_attention with implementation='cudnn', else "
                        "JAX's own choice; BERT and GPT-2 in JAX use it too)")
    save(res, o.json)

    entries = {}
    for w in ws:
        entry = {"name": w.name, "title": w.title, "group": w.group, "goal": w.goal,
                 "bytes": w.bytes_moved(w.trace_dims() if o.small else None),
                 "flops": w.flops if not o.small else 0, "tol": w.tol, "peers": {},
                 "strata": {"status": NO_MODULES}}
        res["workloads"].append(entry)
        entries[w.name] = entry
        peers = [] if o.no_peers else [p for p in w.peers if not o.peers or p in o.peers]
        log(budget, f"== {w.name}: {w.title}")
        try:
            bench_workload(w, peers, entry, dev, o, budget, res, with_strata=True)
        except Exception as e:
            entry["error"] = short_error(e)
            log(budget, f"{w.name}: {entry['error']}")
            if o.verbose:
                traceback.print_exc()
        save(res, o.json)
    if not o.no_peers and not o.no_optional:
        for w in ws:
            opt = [p for p in w.optional_peers if not o.peers or p in o.peers]
            if not opt:
                continue
            if not budget.allows(min(cost(w, p) for p in opt)):
                for p in opt:
                    entries[w.name]["peers"][p] = {"skipped": "time budget"}
                continue
            log(budget, f"== {w.name} (optional peers: {', '.join(opt)})")
            try:
                bench_workload(w, opt, entries[w.name], dev, o, budget, res, with_strata=False)
            except Exception as e:
                log(budget, f"{w.name}: {short_error(e)}")
    res["total_s"] = budget.elapsed()
    save(res, o.json)
    print()
    print(report.text_table(res))
    print(f"\nresults: {o.json} ({res['total_s']:.0f} s)")


if __name__ == "__main__":
    main()
