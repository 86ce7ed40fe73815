#!/usr/bin/env python3
"""torchvision's detection models, exported as users export them, compiled
and run by strata on the CPU, against torch's own outputs.

usage: detection.py STRATA WORKDIR [--pack cuda] [--compressible]
                    [ssdlite|fasterrcnn|retinanet|maskrcnn|keypointrcnn ...]

With --pack cuda, each model is compiled for the cuda target instead of run:
WORKDIR/<name>.strata with <name>/input_0.bin and torch's outputs as .npy,
for check_pack.py on a GPU machine. --compressible rounds every weight to
one of 16 values per tensor before anything else, so that xz shrinks the
modules (random float weights do not compress); the test is as strong,
torch computing with the same weights.

Each model is built from torchvision's architecture with random weights
(fixed seeds) made to behave like trained ones: batch-norm statistics from a
training-mode pass over random images, and the heads' last layers scaled so
that scores spread instead of saturating (random heads give every box one
score, and then TopK and NMS only measure tie-breaking). Exports follow
torchvision's documentation: opset 17 for SSDlite and RetinaNet, opset 11
for Faster R-CNN, whose RoIAlign (aligned=False) torchvision 0.14 writes
without the coordinate_transformation_mode attribute, which opset 16 reads
as half_pixel.

Every op after the first NonZero runs as one of the runtime's host kernels
(docs/runtime.md, "Value-dependent shapes"), including the run-time If of
batched_nms, the mask and keypoint heads' convolutions over the detections
(oneDNN, with the number of detections known when they run) and the Loop
over the detections that Mask R-CNN pastes its masks with and Keypoint R-CNN
turns its heatmaps into points with (host.loop). Mask R-CNN and Keypoint
R-CNN are exported at opset 11, as Faster R-CNN. Detections are compared as a set: each of torch's (label, score,
box) must have a strata detection of the same label within 1e-4 in score and
0.1 pixel in box, and the counts must agree. Scores within 1e-4 of each
other may come out in either order (float32 sums in another order), which
an element-by-element comparison would call a failure. The ResNet-50 heads
of Mask R-CNN and Keypoint R-CNN go deeper (FPN, RoIAlign, four 3x3
convolutions over each detection): their scores are compared within 1e-3.
A matched detection's mask must agree within 1e-2 everywhere; each of its
keypoints within 0.1 pixel, or, where the heatmap's maximum is a near-tie
(its score within 1e-3), anywhere: the argmax of two near-equal values is
not stable under float32 reordering.
"""

import os
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torchvision.models import detection  # noqa: E402


def build(name, compressible=False):
    torch.manual_seed(0)
    if name == "ssdlite":
        model = detection.ssdlite320_mobilenet_v3_large(
            weights=None, weights_backbone=None, num_classes=3,
            width_mult=0.25)
        size, opset = 320, 17
        last = [{model.head.classification_head: 0.3}]
    elif name == "fasterrcnn":
        model = detection.fasterrcnn_mobilenet_v3_large_320_fpn(
            weights=None, weights_backbone=None, num_classes=3)
        size, opset = 320, 11
        last = [{model.rpn.head.cls_logits: 1.0, model.rpn.head.bbox_pred: 0.1},
                {model.roi_heads.box_predictor.cls_score: 1.0,
                 model.roi_heads.box_predictor.bbox_pred: 0.1}]
    elif name in ("maskrcnn", "keypointrcnn"):
        make = (detection.maskrcnn_resnet50_fpn if name == "maskrcnn" else
                detection.keypointrcnn_resnet50_fpn)
        model = make(weights=None, weights_backbone=None,
                     num_classes=3 if name == "maskrcnn" else 2,
                     min_size=256, max_size=256)
        size, opset = 256, 11
        last = [{model.rpn.head.cls_logits: 1.0, model.rpn.head.bbox_pred: 0.1},
                {model.roi_heads.box_predictor.cls_score: 1.0,
                 model.roi_heads.box_predictor.bbox_pred: 0.1}]
    else:
        model = detection.retinanet_resnet50_fpn(
            weights=None, weights_backbone=None, num_classes=3, min_size=256,
            max_size=256)
        size, opset = 256, 17
        last = [{model.head.classification_head.cls_logits: 1.0,
                 model.head.regression_head.bbox_reg: 1.0}]
    with torch.no_grad():
        if compressible:
            for p in model.parameters():
                scale = p.abs().max() / 7.5
                if scale > 0:
                    p.copy_(torch.round(p / scale).clamp(-8, 7) * scale)
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.momentum = 1.0
        model.backbone.train()
        batch = model.transform(list(torch.rand(4, 3, size, size)))[0]
        model.backbone(batch.tensors)
        model.eval()
        # `last` lists the layers in stages: a stage's layers read the same
        # features (a head's scores and boxes), so one forward pass measures
        # them all; a later stage's input depends on the earlier's scaling
        # (the proposals the RPN's scores choose).
        for stage in last:
            seen = {}

            def record(mod, inputs, output):  # the first call: the first level
                seen.setdefault(mod, output.std())

            hooks = [layer.register_forward_hook(record)
                     for layer in stage if hasattr(layer, "weight")]
            if hooks:
                model(torch.rand(1, 3, size, size))
            for hook in hooks:
                hook.remove()
            for layer, target in stage.items():
                if layer in seen:
                    layer.weight.mul_(target / seen[layer])
                    layer.bias.zero_()
                else:  # SSD's classification head: every level's convolution
                    for p in layer.parameters():
                        p.normal_(0, target)
    return model, size, opset


class Detections(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        d = self.model(x)[0]
        extra = [d[k] for k in ("masks", "keypoints", "keypoints_scores")
                 if k in d]
        return (d["boxes"], d["scores"], d["labels"], *extra)


# The outputs after boxes, scores and labels, by model.
EXTRA = {"maskrcnn": ["masks"],
         "keypointrcnn": ["keypoints", "keypoints_scores"]}


def compare(name, ref, got):
    b, s, l = ref[:3]
    gb, gs, gl = got[:3]
    tolerance = 1e-3 if name in EXTRA else 1e-4
    if len(gs) != len(s):
        return f"{len(gs)} detections, torch has {len(s)}"
    used = np.zeros(len(gs), bool)
    worst = 0.0
    for i in range(len(s)):
        candidates = np.where(~used & (gl == l[i]) &
                              (np.abs(gs - s[i]) < tolerance))[0]
        if len(candidates) == 0:
            return f"torch's detection {i} (label {l[i]}, score {s[i]}) " \
                   "has no match"
        d = np.abs(gb[candidates] - b[i]).max(axis=1)
        if d.min() > 0.1:
            return f"torch's detection {i}: nearest box {d.min()} px away"
        match = candidates[d.argmin()]
        used[match] = True
        worst = max(worst, float(d.min()))
        if name == "maskrcnn":
            off = np.abs(got[3][match] - ref[3][i]).max()
            if off > 1e-2:
                return f"torch's detection {i}: mask off by {off}"
        if name == "keypointrcnn":
            off = np.abs(got[3][match] - ref[3][i]).max(axis=1)
            score = np.abs(got[4][match] - ref[4][i])
            if score.max() > 1e-3:
                return f"torch's detection {i}: keypoint scores off by " \
                       f"{score.max()}"
            if (off > 0.1).sum() > 0 and (score[off > 0.1] > 1e-3).any():
                return f"torch's detection {i}: keypoint off by {off.max()}"
    print(f"{name}: {len(s)} detections match (worst box {worst:.2g} px, "
          f"{len(np.unique(s))} distinct scores)")
    return ""


def main():
    args = sys.argv[1:]
    pack = ""
    if "--pack" in args:
        i = args.index("--pack")
        pack = args[i + 1]
        del args[i:i + 2]
    compressible = "--compressible" in args
    args = [a for a in args if a != "--compressible"]
    strata, work = args[0], args[1]
    names = args[2:] or ["ssdlite", "fasterrcnn", "retinanet"]
    os.makedirs(work, exist_ok=True)
    failed = []
    for name in names:
        model, size, opset = build(name, compressible)
        wrapped = Detections(model).eval()
        # An 8-bit image, as a decoded photo is.
        torch.manual_seed(1)
        x = torch.randint(0, 256, (1, 3, size, size)).float() / 255
        with torch.no_grad():
            ref = [t.numpy() for t in wrapped(x)]
        path = os.path.join(work, f"{name}.onnx")
        names = ["boxes", "scores", "labels"] + EXTRA.get(name, [])
        torch.onnx.export(wrapped, (x,), path, opset_version=opset,
                          input_names=["images"], output_names=names)
        np.save(os.path.join(work, f"{name}_images.npy"), x.numpy())
        if pack:
            case = os.path.join(work, name)
            os.makedirs(case, exist_ok=True)
            x.numpy().tofile(os.path.join(case, "input_0.bin"))
            subprocess.run(["xz", "-f", "-T0", os.path.join(case, "input_0.bin")],
                           check=True)
            for n, r in zip(names, ref):
                np.save(os.path.join(case, f"{n}.npy"), r)
            made = subprocess.run(
                [strata, "compile", path, f"--target={pack}", "--no-cache",
                 "-o", os.path.join(work, f"{name}.strata")],
                capture_output=True, text=True)
            if made.returncode != 0:
                failed.append(f"{name}: compile failed:\n{made.stderr}")
            continue
        out = os.path.join(work, f"{name}_out")
        run = subprocess.run(
            [strata, "run", path, os.path.join(work, f"{name}_images.npy"),
             "--no-cache", "--output-dir", out],
            capture_output=True, text=True)
        if run.returncode != 0:
            failed.append(f"{name}: strata run failed:\n{run.stderr}")
            continue
        got = [np.load(os.path.join(out, f"{n}.npy")) for n in names]
        why = compare(name, ref, got)
        if why:
            failed.append(f"{name}: {why}")
    for line in failed:
        print("FAIL", line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
