"""torch.compile(backend="strata") on real models, against eager and Inductor (issue 35).

On the GPU machine, with the package of python-pack.sh installed by python-device.sh:

    . /tmp/strata-python/env.sh
    python3 bench/gpu/torch_compile.py --out $OUT/torch-compile.json [--models resnet50,vit,bert]

Each model is built from the architecture its package ships (torchvision's ResNet-50 and
ViT-B/16, transformers' BERT-base with a padding mask; random weights, seed 0), in eval mode,
and run three ways on the same inputs:
  - eager torch (the reference; TF32 off);
  - torch.compile(model) with Inductor's default mode;
  - torch.compile(model, backend="strata"): the backend found by its entry point, as a user's
    installed package is.
The strata column checks that every graph Dynamo handed over ran as a strata module (none fell
back to eager), and its outputs against eager's (the largest difference relative to the largest
reference value). Times are the median of --runs calls after --warmup, each call synchronized
(wall clock, as a caller sees it: strata's run includes its copies between the tensors and its
session). The first call's time (compile included) is reported too.
"""

import argparse
import json
import statistics
import sys
import time
import warnings

import torch


def build(name, batch, dtype):
    torch.manual_seed(0)
    if name == "resnet50":
        import torchvision
        model = torchvision.models.resnet50(weights=None)
        inputs = (torch.randn(batch, 3, 224, 224),)
    elif name == "vit":
        import torchvision
        model = torchvision.models.vit_b_16(weights=None)
        # torchvision zeroes the classifier (every logit 0, which would
        # check nothing): random, as a trained one's are.
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
        inputs = (torch.randn(batch, 3, 224, 224),)
    elif name == "bert":
        import transformers
        config = transformers.BertConfig()
        model = transformers.BertModel(config)
        seq = 128
        ids = torch.randint(0, config.vocab_size, (batch, seq))
        mask = torch.ones(batch, seq, dtype=torch.int64)
        # Padding as a batch of real sentences has it: the second half of
        # the batch is padded to a quarter of the length.
        mask[batch // 2:, seq // 4:] = 0
        inputs = (ids, mask)
    else:
        raise SystemExit(f"unknown model {name}")
    model = model.eval().to("cuda", dtype)
    inputs = tuple(t.to("cuda", dtype) if t.is_floating_point() else t.to("cuda")
                   for t in inputs)
    return model, inputs


def tensors(value):
    """The tensors of a model's output, in order (HF outputs are dict-like)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if hasattr(value, "to_tuple"):
        value = value.to_tuple()
    if isinstance(value, dict):
        value = list(value.values())
    out = []
    for v in value:
        out.extend(tensors(v))
    return out


def timed(fn, inputs, warmup, runs):
    torch.cuda.synchronize()
    start = time.perf_counter()
    with torch.no_grad():
        first = fn(*inputs)
    torch.cuda.synchronize()
    first_s = time.perf_counter() - start
    with torch.no_grad():
        for _ in range(warmup):
            fn(*inputs)
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            fn(*inputs)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
    return first, first_s, statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="resnet50,vit,bert")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16"])
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--tolerance", type=float, default=None,
                        help="largest relative difference (default 1e-3 in float32, "
                             "3e-2 in float16)")
    parser.add_argument("--cuda-graphs", action="store_true",
                        help="also time Inductor's reduce-overhead mode (CUDA graphs)")
    parser.add_argument("--out")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dtype = getattr(torch, args.dtype)
    if args.tolerance is None:
        args.tolerance = 1e-3 if args.dtype == "float32" else 3e-2

    import strata.torch_backend as backend
    compiled = []
    original = backend.strata_backend

    def recording(gm, example_inputs, **kwargs):
        fn = original(gm, example_inputs, **kwargs)
        compiled.append(fn)
        return fn

    # torch.compile(backend="strata") loads the entry point's
    # strata.torch_backend:strata_backend when first named: this wrapper then,
    # which counts the graphs and the eager fallbacks.
    backend.strata_backend = recording

    from torch._dynamo import list_backends
    found = "strata" in list_backends(exclude_tags=())
    rows = []
    failed = False
    for name in args.models.split(","):
        model, inputs = build(name, args.batch, dtype)
        row = {"model": name, "batch": args.batch, "dtype": args.dtype,
               "gpu": torch.cuda.get_device_name(), "backend_by_entry_point": found}
        ref, _, row["eager_ms"] = timed(model, inputs, args.warmup, args.runs)
        ref = tensors(ref)
        torch._dynamo.reset()
        inductor = torch.compile(model)
        _, row["inductor_first_s"], row["inductor_ms"] = timed(
            inductor, inputs, args.warmup, args.runs)
        if args.cuda_graphs:
            # Inductor with CUDA graphs: its fastest mode for small batches.
            torch._dynamo.reset()
            graphs = torch.compile(model, mode="reduce-overhead")
            _, row["inductor_graphs_first_s"], row["inductor_graphs_ms"] = timed(
                graphs, inputs, args.warmup, args.runs)
            del graphs
        torch._dynamo.reset()
        compiled.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn = torch.compile(model, backend="strata")
            got, row["strata_first_s"], row["strata_ms"] = timed(
                fn, inputs, args.warmup, args.runs)
        row["graphs"] = len(compiled)
        row["graphs_eager"] = sum(1 for c in compiled if c.eager)
        row["modules"] = sum(len(c.modules) for c in compiled)
        row["exporters"] = [c.exporter for c in compiled if not c.eager]
        row["warnings"] = sorted({str(w.message)[:300] for w in caught
                                  if "strata" in str(w.message)})
        got = tensors(got)
        errors = []
        for g, r in zip(got, ref):
            scale = r.float().abs().max().item() or 1.0
            errors.append((g.float() - r.float()).abs().max().item() / scale)
        row["max_rel_error"] = max(errors) if errors else None
        row["ok"] = (len(got) == len(ref) and row["graphs"] > 0 and
                     row["graphs_eager"] == 0 and max(errors) <= args.tolerance)
        row["strata_vs_inductor"] = row["inductor_ms"] / row["strata_ms"]
        row["strata_vs_eager"] = row["eager_ms"] / row["strata_ms"]
        if "inductor_graphs_ms" in row:
            row["strata_vs_inductor_graphs"] = row["inductor_graphs_ms"] / row["strata_ms"]
        failed |= not row["ok"]
        rows.append(row)
        print(json.dumps(row), flush=True)
        del model, fn, inductor
        torch._dynamo.reset()
        torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    print(f"{'model':10} {'dtype':8} {'b':>3} {'eager ms':>9} {'inductor':>9} {'ind+cg':>9} "
          f"{'strata':>9} {'vs ind.':>7} {'vs +cg':>7} {'rel err':>8} ok")
    for r in rows:
        graphs = r.get("inductor_graphs_ms")
        print(f"{r['model']:10} {r['dtype']:8} {r['batch']:3} {r['eager_ms']:9.3f} "
              f"{r['inductor_ms']:9.3f} {graphs or float('nan'):9.3f} {r['strata_ms']:9.3f} "
              f"{r['strata_vs_inductor']:7.2f} "
              f"{r.get('strata_vs_inductor_graphs', float('nan')):7.2f} "
              f"{r['max_rel_error']:8.1e} {r['ok']}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
