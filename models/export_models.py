#!/usr/bin/python3
"""Builds strata's benchmark and end-to-end models in PyTorch and exports them to ONNX.

Each model lands in the layout of ONNX's backend tests, so the conformance runner and the
benchmark harness read them the same way as libonnx-testdata:

    models/<name>/model.onnx
    models/<name>/test_data_set_<N>/input_<K>.pb, output_<K>.pb

The weights are random (fixed seeds) but shaped like trained ones: torchvision's He
initialisation for convolutions, normalization statistics and affine parameters away from the
identity, so a bug that only shows with non-trivial parameters is not hidden. The reference outputs come from a float64 copy of each
module, cast to the model's output type, so an engine's float32 error is measured against the
true result rather than against another float32 implementation.

Run with Debian's python (it has torch 1.13 and onnx 1.12):

    /usr/bin/python3 models/export_models.py [--out models] [--only NAME ...]
"""

import argparse
import copy
import hashlib
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

OPSET = 17


# ---------------------------------------------------------------------------
# resnet_small: conv-bn-relu stem, three stages of basic residual blocks.
# ---------------------------------------------------------------------------


class BasicBlock(nn.Module):
    """ResNet basic block; a strided block projects its shortcut with a 1x1 conv + BN."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, 0, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        s = x if self.shortcut is None else self.shortcut(x)
        return F.relu(y + s)


class ResNetSmall(nn.Module):
    def __init__(self, widths=(16, 32, 64), blocks=2, classes=10):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU())
        layers = []
        cin = widths[0]
        for i, w in enumerate(widths):
            for b in range(blocks):
                stride = 2 if (i > 0 and b == 0) else 1
                layers.append(BasicBlock(cin, w, stride))
                cin = w
        self.layers = nn.Sequential(*layers)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        y = self.layers(self.stem(x))
        y = torch.flatten(F.adaptive_avg_pool2d(y, 1), 1)
        return self.head(y)


# ---------------------------------------------------------------------------
# mobilenet_small: MobileNetV2 inverted residuals (expand 1x1, depthwise 3x3, linear 1x1).
# ---------------------------------------------------------------------------


def conv_bn_relu6(cin, cout, kernel, stride, groups=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout), nn.ReLU6())


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = []
        if expand != 1:
            layers.append(conv_bn_relu6(cin, hidden, 1, 1))
        # Depthwise: one filter per channel (group = channels).
        layers.append(conv_bn_relu6(hidden, hidden, 3, stride, groups=hidden))
        layers += [nn.Conv2d(hidden, cout, 1, 1, 0, bias=False), nn.BatchNorm2d(cout)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class MobileNetSmall(nn.Module):
    # (expand ratio t, output channels c, repeats n, first stride s), as in the MobileNetV2 paper.
    CONFIG = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 2, 2)]

    def __init__(self, classes=10, last=256):
        super().__init__()
        layers = [conv_bn_relu6(3, 16, 3, 2)]
        cin = 16
        for t, c, n, s in self.CONFIG:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers.append(conv_bn_relu6(cin, last, 1, 1))
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(last, classes)

    def forward(self, x):
        y = self.features(x)
        y = torch.flatten(F.adaptive_avg_pool2d(y, 1), 1)
        return self.head(y)


# ---------------------------------------------------------------------------
# Attention blocks. Head splitting uses constants from the config rather than x.shape, so the
# exported graph has fixed Reshape targets instead of Shape/Gather/Concat chains.
# ---------------------------------------------------------------------------


class SelfAttention(nn.Module):
    def __init__(self, d_model, heads, seq, causal):
        super().__init__()
        self.heads, self.dh, self.seq = heads, d_model // heads, seq
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.causal = causal
        if causal:
            # True above the diagonal: position i must not see positions j > i.
            self.register_buffer(
                "mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1),
                persistent=False)

    def forward(self, x):
        d = self.heads * self.dh
        q, k, v = self.qkv(x).split(d, dim=-1)
        # [B, S, D] -> [B, H, S, Dh]
        q = q.reshape(-1, self.seq, self.heads, self.dh).transpose(1, 2)
        k = k.reshape(-1, self.seq, self.heads, self.dh).transpose(1, 2)
        v = v.reshape(-1, self.seq, self.heads, self.dh).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.dh))
        if self.causal:
            att = att.masked_fill(self.mask, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(-1, self.seq, d)
        return self.proj(y)


class EncoderLayer(nn.Module):
    """Post-norm block, as nn.TransformerEncoderLayer(norm_first=False, activation='gelu')."""

    def __init__(self, d_model, heads, ff, seq):
        super().__init__()
        self.attn = SelfAttention(d_model, heads, seq, causal=False)
        self.norm1 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, ff)
        self.ff2 = nn.Linear(ff, d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x):
        x = self.norm1(x + self.attn(x))
        return self.norm2(x + self.ff2(F.gelu(self.ff1(x))))


class TransformerEncoder(nn.Module):
    def __init__(self, d_model=64, heads=4, ff=256, seq=16, layers=2):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(d_model, heads, ff, seq) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class DecoderBlock(nn.Module):
    """Pre-norm GPT-2 block: causal self-attention and a GELU MLP, each with a residual."""

    def __init__(self, d_model, heads, seq):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, heads, seq, causal=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.out = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPTDecoder(nn.Module):
    def __init__(self, vocab=256, d_model=64, heads=4, seq=16, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.randn(seq, d_model) * 0.02)
        self.blocks = nn.ModuleList(DecoderBlock(d_model, heads, seq) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, tokens):
        x = self.tok(tokens) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


# ---------------------------------------------------------------------------
# mlp_dynamic: the batch dimension stays symbolic in the exported model.
# ---------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self, din=64, hidden=128, dout=10):
        super().__init__()
        self.fc1 = nn.Linear(din, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, dout)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


# ---------------------------------------------------------------------------
# Export.
# ---------------------------------------------------------------------------


def init_convs(module):
    """torchvision's ResNet/MobileNetV2 initialisation (He, fan-out). PyTorch's default keeps
    shrinking activations through the depth, leaving logits near 0.1 that would mask errors."""
    for m in module.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")


def randomize_norms(module, gen):
    """Moves every normalization layer away from the identity it is initialised to.

    Trained checkpoints never have unit scales and zero shifts; with them, a kernel that drops
    the affine part would still pass. Distinct values also stop the exporter from deduplicating
    equal LayerNorm parameters into one initializer behind Identity nodes.
    """
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):
                c = m.num_features
                m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)


def float_input(shape):
    def make(rng):
        return rng.standard_normal(shape).astype(np.float32)
    return make


def token_input(shape, vocab):
    def make(rng):
        return rng.integers(0, vocab, size=shape, dtype=np.int64)
    return make


# name -> (constructor, input name, output name, dynamic axes, [input makers, one per data set])
MODELS = {
    "resnet_small": (ResNetSmall, "x", "y", None, [float_input((1, 3, 32, 32))]),
    "mobilenet_small": (MobileNetSmall, "x", "y", None, [float_input((1, 3, 64, 64))]),
    "transformer_encoder": (TransformerEncoder, "x", "y", None, [float_input((1, 16, 64))]),
    "gpt_decoder": (GPTDecoder, "tokens", "logits", None, [token_input((1, 16), 256)]),
    "mlp_dynamic": (MLP, "x", "y", {"x": {0: "batch"}, "y": {0: "batch"}},
                    [float_input((b, 64)) for b in (1, 4, 7)]),
}


def seed_for(name):
    # A stable per-model seed (Python's hash() is salted per process).
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def reference(module64, x):
    """Runs the float64 copy; float inputs are widened, integer inputs (token ids) are kept."""
    t = torch.from_numpy(x)
    if t.is_floating_point():
        t = t.double()
    with torch.no_grad():
        return module64(t).numpy()


def export(name, out_dir):
    ctor, in_name, out_name, dynamic_axes, makers = MODELS[name]
    seed = seed_for(name)
    torch.manual_seed(seed)
    model = ctor()
    init_convs(model)
    randomize_norms(model, torch.Generator().manual_seed(seed + 1))
    model.eval()
    model64 = copy.deepcopy(model).double().eval()

    rng = np.random.default_rng(seed)
    inputs = [make(rng) for make in makers]

    model_dir = os.path.join(out_dir, name)
    os.makedirs(model_dir, exist_ok=True)
    path = os.path.join(model_dir, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(model, (torch.from_numpy(inputs[0]),), path,
                          export_params=True, opset_version=OPSET, do_constant_folding=True,
                          input_names=[in_name], output_names=[out_name],
                          dynamic_axes=dynamic_axes,
                          training=torch.onnx.TrainingMode.EVAL)

    proto = onnx.load(path)
    onnx.checker.check_model(proto, full_check=True)
    graph_in = [i.name for i in proto.graph.input]
    graph_out = [o.name for o in proto.graph.output]
    if graph_in != [in_name] or graph_out != [out_name]:
        sys.exit(f"{name}: exported graph has inputs {graph_in}, outputs {graph_out}; "
                 f"expected [{in_name!r}], [{out_name!r}]")
    # onnx 1.12 predates helper.tensor_dtype_to_np_dtype.
    out_type = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[proto.graph.output[0].type.tensor_type.elem_type]

    for n, x in enumerate(inputs):
        ds = os.path.join(model_dir, f"test_data_set_{n}")
        os.makedirs(ds, exist_ok=True)
        y = reference(model64, x).astype(out_type)
        # Sanity: the float32 module must agree with its float64 copy, or the reference is
        # meaningless (e.g. an overflow in float32).
        with torch.no_grad():
            y32 = model(torch.from_numpy(x)).numpy()
        if not np.allclose(y32, y, rtol=1e-3, atol=1e-5):
            sys.exit(f"{name}: float32 torch output differs from the float64 reference "
                     f"(max abs err {np.max(np.abs(y32 - y)):.3g})")
        for fname, arr, tname in (("input_0.pb", x, in_name), ("output_0.pb", y, out_name)):
            with open(os.path.join(ds, fname), "wb") as f:
                f.write(numpy_helper.from_array(arr, tname).SerializeToString())

    ops = sorted({node.op_type for node in proto.graph.node})
    size = os.path.getsize(path)
    print(f"{name}: {size / 1024:.0f} KiB, {len(proto.graph.node)} nodes, "
          f"{len(inputs)} data set(s); ops: {' '.join(ops)}")
    return size


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)),
                        help="directory that receives <name>/model.onnx (default: models/)")
    parser.add_argument("--only", nargs="+", choices=sorted(MODELS), help="export only these")
    args = parser.parse_args()

    torch.set_num_threads(1)  # deterministic reductions in the reference run
    total = 0
    for name in args.only or MODELS:
        total += export(name, args.out)
    print(f"total model.onnx size: {total / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
