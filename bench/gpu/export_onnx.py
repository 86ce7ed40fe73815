#!/usr/bin/python3
"""Exports the GPU benchmark's workloads (workloads.py) to ONNX, one model per workload.

    /usr/bin/python3 bench/gpu/export_onnx.py [--out bench/gpu/models] [--only NAME ...] [--small]
    /usr/bin/python3 bench/gpu/export_onnx.py --suite real [--out build-real-models] [--only ...]
        [--exporter torchscript|dynamo]

Run with Debian's python (torch 1.13, onnx 1.12). Each model has every tensor, weights too, as
a graph input and no initializers, so the files are a few kilobytes and are committed; the
benchmark draws the weights on the GPU. The exporter traces with small sizes for the dynamic
dimensions (workloads.py's `trace`) and the model's inputs and outputs are then given the
benchmark's static shapes (`dims`); shapes inside the graph follow from them through Shape,
Gather and Reshape, as in models exported from real frameworks. Opset 17, no constant folding
(a causal mask stays Trilu of ConstantOfShape instead of a seq x seq initializer). The export
is deterministic: the same packages give the same bytes.

`--suite real` exports the real-model suite instead (real_models.py: torchvision architectures
with their weights as initializers, in bfloat16, one file per batch size; needs Debian's
python3-torchvision). Those files are 10-170 MB and go to build-real-models/, out of git.
"""

import argparse
import io
import os
import sys
import warnings

import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as W  # noqa: E402

OPSET = 17
HERE = os.path.dirname(os.path.abspath(__file__))


class _Wrap(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _set_static_shapes(model, w, dims):
    """Replaces the traced dynamic dimensions of the graph's inputs and outputs by `dims`."""
    for value, shape in zip(list(model.graph.input) + list(model.graph.output),
                            w.input_shapes(dims) + w.output_shapes(dims)):
        dims = value.type.tensor_type.shape.dim
        assert len(dims) == len(shape), (w.name, value.name)
        for d, n in zip(dims, shape):
            d.Clear()
            d.dim_value = n
    # The traced sizes of intermediate values would contradict the static inputs.
    del model.graph.value_info[:]


def export(w, out_dir, small=False):
    tdims = w.trace_dims()
    args = tuple(w.make_inputs("cpu", seed=0, dims=tdims))
    # torch 1.13 has no f16 convolution on the CPU: such a workload is traced
    # in f32 and its inputs and outputs retyped to f16 after (below), which
    # is the same graph as long as it holds no typed constants or casts.
    half = any(i.dtype == torch.float16 for i in w.inputs)
    if half:
        args = tuple(a.float() if a.dtype == torch.float16 else a for a in args)
    dynamic = {}
    for spec in w.inputs + w.outputs:
        axes = {k: d for k, d in enumerate(spec.shape) if isinstance(d, str) and d in w.trace}
        if axes:
            dynamic[spec.name] = axes
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            torch.onnx.export(_Wrap(w.torch_fn), args, buf, opset_version=OPSET,
                              input_names=[i.name for i in w.inputs],
                              output_names=[o.name for o in w.outputs],
                              dynamic_axes=dynamic, do_constant_folding=False)
    model = onnx.load_from_string(buf.getvalue())
    _set_static_shapes(model, w, tdims if small else w.dims)
    if half:
        assert not any(n.op_type in ("Cast", "Constant", "ConstantOfShape")
                       for n in model.graph.node), f"{w.name}: typed constants"
        for value, spec in zip(list(model.graph.input) + list(model.graph.output),
                               w.inputs + w.outputs):
            if spec.dtype == torch.float16:
                value.type.tensor_type.elem_type = onnx.TensorProto.FLOAT16
    model.producer_name = "strata bench/gpu/export_onnx.py"
    model.doc_string = f"{w.title} (bench/gpu/workloads.py: {w.name}; every tensor is an input)"
    assert not model.graph.initializer, f"{w.name}: unexpected initializers"
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(out_dir, f"{w.name}.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path, len(model.graph.node)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None,
                    help="default: bench/gpu/models, or build-real-models with --suite real")
    ap.add_argument("--suite", choices=("kernels", "real"), default="kernels")
    ap.add_argument("--only", nargs="*", help="workload names (default: all)")
    ap.add_argument("--exporter", choices=("torchscript", "dynamo"), default="torchscript",
                    help="--suite real: the exporter of the torchvision models (dynamo: torch "
                         "2.9 and later's default, on the GPU machine; the text models always "
                         "use it)")
    ap.add_argument("--small", action="store_true",
                    help="static shapes at the small tracing sizes (for testing the harness on "
                         "the CPU: run.py --small); write them elsewhere with --out")
    a = ap.parse_args()
    real = a.suite == "real"
    if a.out is None:
        a.out = os.path.join(HERE, "..", "..", "build-real-models") if real else \
            os.path.join(HERE, "models")
    os.makedirs(a.out, exist_ok=True)
    names = a.only or [w.name for w in (W.REAL if real else W.WORKLOADS)]
    for n in names:
        if n not in W.BY_NAME:
            sys.exit(f"unknown workload {n!r}; known: {', '.join(W.BY_NAME)}")
    torch.manual_seed(0)
    for n in names:
        w = W.BY_NAME[n]
        if w.group == "real":
            import real_models as R
            path = os.path.join(a.out, f"{n}.onnx")
            nodes = R.export(w, path, a.exporter)
            print(f"{os.path.relpath(path)}: {nodes} nodes, "
                  f"{os.path.getsize(path) / 2**20:.1f} MiB", flush=True)
            continue
        path, nodes = export(w, a.out, a.small)
        print(f"{os.path.relpath(path)}: {nodes} nodes, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
