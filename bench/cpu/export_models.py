#!/usr/bin/python3
"""Exports the real-size CPU model suite (issue 34) in the ONNX backend-test layout.

Every model is what a user exports: torchvision's architectures (Debian's torchvision 0.14, random
weights, a fixed seed per model) at 224x224, and BERT-base- and GPT-2-sized transformers written
in plain torch (models/export_models.py's layers at full size), all fp32 and batch 1, exported
with torch.onnx.export at opset 17. Each model gets <out>/<name>/model.onnx and
test_data_set_0/{input_0,output_0}.pb, the output computed by a float64 copy of the module (the
float32 module must agree with it), so that `strata conformance <out>` checks correctness and
`bench/compare.py --models <out>` times strata against ONNX Runtime on the same files.

The files are large (20-500 MB each) and stay out of the repository: generate them here.

    /usr/bin/python3 bench/cpu/export_models.py --out bench/cpu/models [--only NAME ...]

Needs Debian's python3-torchvision (scripts/export-models.sh installs python3-torch; add
python3-torchvision).
"""

import argparse
import copy
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "models"))
import export_models as small  # noqa: E402  (models/export_models.py: layers, seeds)

OPSET = 17


def vision(name):
    def make():
        return getattr(torchvision.models, name)(weights=None)
    return make, (1, 3, 224, 224), "image"


def encoder(seq):
    def make():
        return small.TransformerEncoder(d_model=768, heads=12, ff=3072, seq=seq, layers=12)
    return make, (1, seq, 768), "float"


def decoder(seq):
    def make():
        return small.GPTDecoder(vocab=50257, d_model=768, heads=12, seq=seq, layers=12)
    return make, (1, seq), "tokens"


# name -> (constructor, input shape, input kind)
MODELS = {
    "resnet18": vision("resnet18"),
    "resnet50": vision("resnet50"),
    "mobilenet_v2": vision("mobilenet_v2"),
    "mobilenet_v3_large": vision("mobilenet_v3_large"),
    "efficientnet_b0": vision("efficientnet_b0"),
    "convnext_tiny": vision("convnext_tiny"),
    "googlenet": vision("googlenet"),
    "densenet121": vision("densenet121"),
    "squeezenet1_1": vision("squeezenet1_1"),
    "bert_base_s128": encoder(128),
    "bert_base_s384": encoder(384),
    "gpt2_s128": decoder(128),
}


def export(name, out_dir):
    make, shape, kind = MODELS[name]
    seed = small.seed_for(name)
    torch.manual_seed(seed)
    model = make()
    small.randomize_norms(model, torch.Generator().manual_seed(seed + 1))
    model.eval()
    model64 = copy.deepcopy(model).double().eval()
    rng = np.random.default_rng(seed)
    if kind == "tokens":
        x = rng.integers(0, 50257, size=shape, dtype=np.int64)
    else:
        x = rng.standard_normal(shape).astype(np.float32)

    model_dir = os.path.join(out_dir, name)
    os.makedirs(os.path.join(model_dir, "test_data_set_0"), exist_ok=True)
    path = os.path.join(model_dir, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(model, (torch.from_numpy(x),), path, export_params=True,
                          opset_version=OPSET, do_constant_folding=True, input_names=["x"],
                          output_names=["y"], training=torch.onnx.TrainingMode.EVAL)
        y32 = model(torch.from_numpy(x)).numpy()
        t = torch.from_numpy(x)
        y = model64(t.double() if t.is_floating_point() else t).numpy().astype(np.float32)
    err = float(np.max(np.abs(y32 - y)))
    scale = float(np.max(np.abs(y)))
    if err > 1e-3 * max(scale, 1.0):
        sys.exit(f"{name}: float32 torch differs from its float64 copy by {err:.3g} "
                 f"(outputs up to {scale:.3g}); the reference would be meaningless")
    ds = os.path.join(model_dir, "test_data_set_0")
    for fname, arr, tname in (("input_0.pb", x, "x"), ("output_0.pb", y, "y")):
        with open(os.path.join(ds, fname), "wb") as f:
            f.write(numpy_helper.from_array(arr, tname).SerializeToString())
    proto = onnx.load(path, load_external_data=False)
    print(f"{name}: {os.path.getsize(path) / 2**20:.1f} MiB, {len(proto.graph.node)} nodes, "
          f"float32 vs float64 torch {err:.2g}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="directory that receives <name>/")
    parser.add_argument("--only", nargs="+", choices=sorted(MODELS), help="export only these")
    args = parser.parse_args()
    torch.set_num_threads(1)  # deterministic reductions in the reference run
    for name in args.only or MODELS:
        export(name, args.out)


if __name__ == "__main__":
    main()
