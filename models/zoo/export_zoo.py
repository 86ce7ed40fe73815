#!/usr/bin/env python3
"""Exports real architectures the way users export them, as test cases for strata.

The architectures come from the packages users take them from (torchvision, transformers) and
from plain PyTorch where a model's export form is the point (a decoder step with its KV cache
passed in and returned through Concat). Each is built in a small configuration with random
weights (fixed seeds) so that the files stay small enough to check in: what is under test is the
graph the exporter writes (shape arithmetic, masks, head splits, GQA, RoPE, squeeze-excite,
depthwise convolutions, windowed attention), not the size of the weights.

Each model is exported by both of torch.onnx's exporters, as users meet them:
  <name>.ts     torch.onnx.export(..., dynamo=False): the TorchScript exporter (opset 17),
                with dynamic_axes where the model has them;
  <name>.dynamo torch.onnx.export(..., dynamo=True): the exporter that is torch's default
                since 2.9, with dynamic_shapes where the model has them.
and lands in the layout of ONNX's backend tests, which `strata conformance` reads:

    <out>/<name>.<exporter>/model.onnx
    <out>/<name>.<exporter>/test_data_set_<N>/input_<K>.pb, output_<K>.pb

A model with dynamic axes gets one test data set per shape in its `shapes` list. The reference
outputs come from a float64 copy of the module where it runs in float64 (else float32), and
ONNX Runtime's outputs on the export are compared with them into manifest.json, so that an
export that is itself wrong is seen as such.

Needs torch >= 2.5, torchvision, transformers, onnx, onnxscript and onnxruntime (the GPU
machine's image has them all; Debian's torch 1.13 is too old):

    python3 models/zoo/export_zoo.py --out /tmp/zoo [--only NAME ...] [--exporters ts,dynamo]
        [--compressible] [--jobs N] [--deadline-s S]

`--compressible` rounds each weight tensor to 16 values (make_compressible) so that the files
of the held-out sets, full-size timm models among them, compress enough to come back from the
GPU machine; `--jobs N` exports in N processes side by side, and `--deadline-s` stops waiting
for the ones not done by then (each is listed as not finished).
"""

import argparse
import copy
import inspect
import json
import math
import os
import time
import traceback

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

OPSET_TS = 17


# ---------------------------------------------------------------------------
# Plain-torch Llama-style decoder with an explicit KV cache (the form of
# hand-written serving code and of Optimum's decoder-with-past exports).
# ---------------------------------------------------------------------------


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(d))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class DecoderLayer(nn.Module):
    def __init__(self, d, heads, kv_heads, ff):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.gate = nn.Linear(d, ff, bias=False)
        self.up = nn.Linear(d, ff, bias=False)
        self.down = nn.Linear(ff, d, bias=False)
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)

    def forward(self, x, cos, sin, past_k, past_v, mask):
        b, s, _ = x.shape
        h = self.n1(x)
        q = self.q(h).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.k(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        rep = self.heads // self.kv_heads
        kk = k[:, :, None].expand(b, self.kv_heads, rep, k.shape[2], self.hd)
        kk = kk.reshape(b, self.heads, k.shape[2], self.hd)
        vv = v[:, :, None].expand(b, self.kv_heads, rep, v.shape[2], self.hd)
        vv = vv.reshape(b, self.heads, v.shape[2], self.hd)
        scores = torch.matmul(q, kk.transpose(-1, -2)) / math.sqrt(self.hd)
        scores = scores + mask
        p = torch.softmax(scores.float(), dim=-1).to(q.dtype)
        a = torch.matmul(p, vv).transpose(1, 2).reshape(b, s, -1)
        x = x + self.o(a)
        h = self.n2(x)
        x = x + self.down(F.silu(self.gate(h)) * self.up(h))
        return x, k, v


class LlamaWithCache(nn.Module):
    """One decoder step: ids [b, s] and the cache [b, kv_heads, past, hd] per layer in; the
    hidden state and the grown cache out. The causal mask over past + s positions and the rotary
    angles at positions past..past+s-1 are built inside the graph from the shapes."""

    def __init__(self, vocab=512, d=64, heads=4, kv_heads=2, ff=160, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(DecoderLayer(d, heads, kv_heads, ff) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.hd = d // heads

    def forward(self, ids, *cache):
        b, s = ids.shape
        past = cache[0].shape[2]
        # The angles in float32 whatever the module's type (as transformers computes them): in
        # float16, position 1024 times a frequency is off by up to half a radian.
        pos = torch.arange(past, past + s, device=ids.device).float()
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2, device=ids.device).float() / self.hd))
        freqs = pos[:, None] * inv[None, :]
        emb = torch.cat([freqs, freqs], dim=-1)
        cos, sin = emb.cos().to(self.emb.weight.dtype), emb.sin().to(self.emb.weight.dtype)
        total = past + s
        i = torch.arange(s, device=ids.device)[:, None] + past
        j = torch.arange(total, device=ids.device)[None, :]
        mask = torch.where(j > i, torch.tensor(float("-inf"), device=ids.device),
                           torch.tensor(0.0, device=ids.device))
        mask = mask.to(self.emb.weight.dtype)
        x = self.emb(ids)
        out = []
        for n, layer in enumerate(self.layers):
            x, k, v = layer(x, cos, sin, cache[2 * n], cache[2 * n + 1], mask)
            out += [k, v]
        return (self.norm(x), *out)


# ---------------------------------------------------------------------------
# The zoo. Each entry: a builder returning (module, example inputs at each test shape,
# input names, output names, dynamic axes or None).
# ---------------------------------------------------------------------------


def ids(shape, vocab, gen):
    return torch.randint(0, vocab, shape, generator=gen)


def padding_mask(b, s):
    m = torch.ones(b, s, dtype=torch.int64)
    for r in range(1, b):  # rows after the first are padded at the end
        m[r, max(1, s - 3 * r):] = 0
    return m


class HFWrap(nn.Module):
    """Returns the first output of a transformers model as a plain tensor (a language-model
    head's logits, a base model's hidden state); the inputs are passed by keyword when `names`
    are given."""

    def __init__(self, m, names=None):
        super().__init__()
        self.m = m
        self.names = names

    def forward(self, *args):
        out = self.m(**dict(zip(self.names, args))) if self.names else self.m(*args)
        if isinstance(out, (tuple, list)):
            return out[0]
        for key in ("logits", "last_hidden_state", "predicted_depth", "reconstruction"):
            if getattr(out, key, None) is not None:
                return getattr(out, key)
        return out.to_tuple()[0]


def bert(gen):
    from transformers import BertConfig, BertModel
    cfg = BertConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=128)
    m = HFWrap(BertModel(cfg, add_pooling_layer=False))
    shapes = [(2, 16), (3, 9)]
    ins = [(ids(s, 512, gen), padding_mask(*s)) for s in shapes]
    dyn = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
           "last_hidden_state": {0: "batch", 1: "sequence"}}
    return m, ins, ["input_ids", "attention_mask"], ["last_hidden_state"], dyn


def gpt2(gen):
    from transformers import GPT2Config, GPT2Model
    cfg = GPT2Config(vocab_size=512, n_positions=128, n_embd=64, n_layer=2, n_head=4,
                     use_cache=False)
    m = HFWrap(GPT2Model(cfg))
    shapes = [(2, 16), (1, 7)]
    ins = [(ids(s, 512, gen),) for s in shapes]
    dyn = {"input_ids": {0: "batch", 1: "sequence"},
           "last_hidden_state": {0: "batch", 1: "sequence"}}
    return m, ins, ["input_ids"], ["last_hidden_state"], dyn


def gpt2_mask(gen):
    """GPT-2 as generation code calls it: with the padding mask."""
    m, _, _, outs, dyn = gpt2(gen)
    m.names = ["input_ids", "attention_mask"]
    shapes = [(2, 16), (3, 7)]
    ins = [(ids(s, 512, gen), padding_mask(*s)) for s in shapes]
    dyn = dict(dyn, attention_mask={0: "batch", 1: "sequence"})
    return m, ins, ["input_ids", "attention_mask"], outs, dyn


def llama(gen):
    from transformers import LlamaConfig, LlamaModel
    cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                      use_cache=False)
    m = HFWrap(LlamaModel(cfg))
    shapes = [(2, 16), (1, 5)]
    ins = [(ids(s, 512, gen), padding_mask(*s)) for s in shapes]
    dyn = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
           "last_hidden_state": {0: "batch", 1: "sequence"}}
    return m, ins, ["input_ids", "attention_mask"], ["last_hidden_state"], dyn


def llama_decode(gen):
    m = LlamaWithCache()
    names = ["ids"] + [f"past_{kv}_{n}" for n in range(2) for kv in "kv"]
    outs = ["hidden"] + [f"present_{kv}_{n}" for n in range(2) for kv in "kv"]
    ins = []
    # torch.export specializes a dimension whose example is 1: the first case has none.
    for b, past, s in [(2, 6, 3), (2, 12, 1), (1, 5, 1)]:
        cache = [torch.randn(b, 2, past, 16, generator=gen) for _ in range(4)]
        ins.append((ids((b, s), 512, gen), *cache))
    dyn = {"ids": {0: "batch", 1: "sequence"}, "hidden": {0: "batch", 1: "sequence"}}
    for n in names[1:] + outs[1:]:
        dyn[n] = {0: "batch", 2: "past" if n.startswith("past") else "total"}
    return m, ins, names, outs, dyn


def vit(gen):
    from torchvision.models.vision_transformer import VisionTransformer
    m = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
                          mlp_dim=128, num_classes=10)
    ins = [(torch.randn(2, 3, 32, 32, generator=gen),)]
    return m, ins, ["images"], ["logits"], None


def vit_dynamic_batch(gen):
    m, _, i, o, _ = vit(gen)
    ins = [(torch.randn(b, 3, 32, 32, generator=gen),) for b in (2, 3)]
    return m, ins, i, o, {"images": {0: "batch"}, "logits": {0: "batch"}}


def swin(gen):
    from torchvision.models.swin_transformer import SwinTransformer
    m = SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4],
                        window_size=[4, 4], num_classes=10)
    return m, [(torch.randn(1, 3, 64, 64, generator=gen),)], ["images"], ["logits"], None


def convnext(gen):
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    m = ConvNeXt([CNBlockConfig(16, 32, 2), CNBlockConfig(32, 64, 2), CNBlockConfig(64, None, 1)],
                 num_classes=10)
    return m, [(torch.randn(2, 3, 64, 64, generator=gen),)], ["images"], ["logits"], None


def mobilenet_v3(gen):
    from torchvision.models import mobilenet_v3_small
    m = mobilenet_v3_small(width_mult=0.5, num_classes=10)
    return m, [(torch.randn(2, 3, 64, 64, generator=gen),)], ["images"], ["logits"], None


def efficientnet(gen):
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
    setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.34)
    m = EfficientNet(setting, 0.2, num_classes=10, last_channel=last)
    return m, [(torch.randn(2, 3, 64, 64, generator=gen),)], ["images"], ["logits"], None


def densenet(gen):
    from torchvision.models.densenet import DenseNet
    m = DenseNet(growth_rate=8, block_config=(2, 2, 2), num_init_features=16, num_classes=10)
    return m, [(torch.randn(2, 3, 64, 64, generator=gen),)], ["images"], ["logits"], None


def whisper_encoder(gen):
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    cfg = WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=4,
                        encoder_ffn_dim=128, num_mel_bins=16, max_source_positions=32)
    m = HFWrap(WhisperEncoder(cfg))
    return m, [(torch.randn(1, 16, 64, generator=gen),)], ["input_features"], \
        ["last_hidden_state"], None


def hf_text(model, config, ids_only=False, **cfg):
    """A transformers text model in a small configuration: ids (and a padding mask) with
    dynamic batch and sequence."""
    def build(gen):
        import transformers
        c = getattr(transformers, config)(vocab_size=512, **cfg)
        names = ["input_ids"] if ids_only else ["input_ids", "attention_mask"]
        m = HFWrap(getattr(transformers, model)(c), names)
        shapes = [(2, 16), (3, 9)]
        ins = [(ids(s, 512, gen),) if ids_only else (ids(s, 512, gen), padding_mask(*s))
               for s in shapes]
        dyn = {n: {0: "batch", 1: "sequence"} for n in names + ["last_hidden_state"]}
        return m, ins, names, ["last_hidden_state"], dyn
    return build


def timm_model(name, size):
    def build(gen):
        import timm
        m = timm.create_model(name, pretrained=False, num_classes=10)
        return m, [(torch.randn(2, 3, size, size, generator=gen),)], ["images"], ["logits"], None
    return build


def shufflenet(gen):
    from torchvision.models import ShuffleNetV2
    m = ShuffleNetV2([2, 2, 2], [8, 16, 32, 64, 128], num_classes=10)
    return m, [(torch.randn(2, 3, 64, 64, generator=gen),)], ["images"], ["logits"], None


def regnet(gen):
    from torchvision.models.regnet import BlockParams, RegNet
    params = BlockParams.from_init_params(depth=6, w_0=16, w_a=8.0, w_m=2.0, group_width=8)
    m = RegNet(params, num_classes=10)
    return m, [(torch.randn(2, 3, 64, 64, generator=gen),)], ["images"], ["logits"], None


def lraspp(gen):
    from torchvision.models.segmentation import lraspp_mobilenet_v3_large

    class Seg(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = lraspp_mobilenet_v3_large(weights=None, weights_backbone=None,
                                               num_classes=3)

        def forward(self, x):
            return self.m(x)["out"]
    return Seg(), [(torch.randn(1, 3, 64, 64, generator=gen),)], ["images"], ["masks"], None


def t5_encoder(gen):
    return hf_text("T5EncoderModel", "T5Config", d_model=64, d_kv=16, d_ff=128,
                   num_layers=2, num_heads=4)(gen)


def bart(gen):
    """An encoder-decoder: ids for both sides, the decoder causal over its own."""
    from transformers import BartConfig, BartModel
    cfg = BartConfig(vocab_size=512, d_model=64, encoder_layers=2, decoder_layers=2,
                     encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
                     decoder_ffn_dim=128, max_position_embeddings=128)
    names = ["input_ids", "attention_mask", "decoder_input_ids"]
    m = HFWrap(BartModel(cfg), names)
    ins = [(ids((b, s), 512, gen), padding_mask(b, s), ids((b, t), 512, gen))
           for b, s, t in [(2, 12, 5), (1, 7, 3)]]
    dyn = {"input_ids": {0: "batch", 1: "source"}, "attention_mask": {0: "batch", 1: "source"},
           "decoder_input_ids": {0: "batch", 1: "target"},
           "last_hidden_state": {0: "batch", 1: "target"}}
    return m, ins, names, ["last_hidden_state"], dyn


def clip_vision(gen):
    from transformers import CLIPVisionConfig, CLIPVisionModel
    cfg = CLIPVisionConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4, image_size=32, patch_size=8)
    m = HFWrap(CLIPVisionModel(cfg))
    return m, [(torch.randn(2, 3, 32, 32, generator=gen),)], ["pixel_values"], \
        ["last_hidden_state"], None


def wav2vec2(gen):
    from transformers import Wav2Vec2Config, Wav2Vec2Model
    cfg = Wav2Vec2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=128, conv_dim=(32, 32), conv_stride=(5, 2),
                         conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                         num_conv_pos_embedding_groups=4, do_stable_layer_norm=False)
    m = HFWrap(Wav2Vec2Model(cfg))
    return m, [(torch.randn(1, 800, generator=gen),)], ["input_values"], \
        ["last_hidden_state"], None


class UNetBlock(nn.Module):
    """A diffusion UNet's level: ResNet blocks with GroupNorm + SiLU and a time embedding, a
    self-attention block over the pixels, a strided-conv down-sample and a nearest up-sample
    with its skip concatenated, as diffusers' UNet2DModel writes them."""

    class Res(nn.Module):
        def __init__(self, cin, cout, temb):
            super().__init__()
            self.n1, self.c1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, padding=1)
            self.t = nn.Linear(temb, cout)
            self.n2, self.c2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, padding=1)
            self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

        def forward(self, x, t):
            h = self.c1(F.silu(self.n1(x))) + self.t(F.silu(t))[:, :, None, None]
            return self.skip(x) + self.c2(F.silu(self.n2(h)))

    def __init__(self, c=32, temb=64):
        super().__init__()
        self.temb = nn.Sequential(nn.Linear(c, temb), nn.SiLU(), nn.Linear(temb, temb))
        self.c = c
        self.inp = nn.Conv2d(4, c, 3, padding=1)
        self.r1 = self.Res(c, c, temb)
        self.down = nn.Conv2d(c, c, 3, stride=2, padding=1)
        self.r2 = self.Res(c, 2 * c, temb)
        self.norm = nn.GroupNorm(8, 2 * c)
        self.attn = nn.MultiheadAttention(2 * c, 4, batch_first=True)
        self.r3 = self.Res(3 * c, c, temb)
        self.out = nn.Conv2d(c, 4, 3, padding=1)

    def forward(self, x, timestep):
        half = self.c // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
        args = timestep[:, None].float() * freqs[None]
        t = self.temb(torch.cat([args.cos(), args.sin()], dim=-1).to(x.dtype))
        h1 = self.r1(self.inp(x), t)
        h = self.r2(self.down(h1), t)
        b, ch, hh, ww = h.shape
        a = self.norm(h).flatten(2).transpose(1, 2)
        a = self.attn(a, a, a, need_weights=False)[0]
        h = h + a.transpose(1, 2).reshape(b, ch, hh, ww)
        h = F.interpolate(h, scale_factor=2.0, mode="nearest")
        h = self.r3(torch.cat([h, h1], dim=1), t)
        return self.out(h)


def unet_block(gen):
    m = UNetBlock()
    ins = [(torch.randn(2, 4, 16, 16, generator=gen), torch.tensor([10, 500]))]
    return m, ins, ["sample", "timestep"], ["noise"], None


def ssdlite(gen):
    from torchvision.models.detection import ssdlite320_mobilenet_v3_large

    class Det(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                   num_classes=3, width_mult=0.25)

        def forward(self, x):
            d = self.m(x)[0]
            return d["boxes"], d["scores"], d["labels"]
    return Det(), [(torch.rand(1, 3, 320, 320, generator=gen),)], ["images"], \
        ["boxes", "scores", "labels"], None


def hf_seq2seq(model, config, **cfg):
    """A transformers encoder-decoder in a small configuration: source ids, their padding
    mask and target ids, at dynamic batch and lengths (as `bart`)."""
    def build(gen):
        import transformers
        c = getattr(transformers, config)(vocab_size=512, pad_token_id=0,
                                          decoder_start_token_id=0, **cfg)
        names = ["input_ids", "attention_mask", "decoder_input_ids"]
        m = HFWrap(getattr(transformers, model)(c), names)
        ins = [(ids((b, s), 512, gen), padding_mask(b, s), ids((b, t), 512, gen))
               for b, s, t in [(2, 12, 5), (1, 7, 3)]]
        dyn = {"input_ids": {0: "batch", 1: "source"},
               "attention_mask": {0: "batch", 1: "source"},
               "decoder_input_ids": {0: "batch", 1: "target"},
               "last_hidden_state": {0: "batch", 1: "target"}}
        return m, ins, names, ["last_hidden_state"], dyn
    return build


def hf_vision(model, config, size=32, channels=3, **cfg):
    """A transformers vision model in a small configuration, static [2, C, size, size]."""
    def build(gen):
        import transformers
        c = getattr(transformers, config)(**cfg)
        m = HFWrap(getattr(transformers, model)(c))
        return m, [(torch.randn(2, channels, size, size, generator=gen),)], ["pixel_values"], \
            ["last_hidden_state"], None
    return build


def hf_input(model, config, shape, name="pixel_values", **cfg):
    """A transformers model of one float input of a fixed shape (video frames, audio samples,
    spectrograms, a time series), in a small configuration."""
    def build(gen):
        import transformers
        c = getattr(transformers, config)(**cfg)
        m = HFWrap(getattr(transformers, model)(c), [name])
        return m, [(torch.randn(*shape, generator=gen),)], [name], ["output"], None
    return build


def timm_small(name, size, **kw):
    """A timm architecture at a small resolution (static batch 2)."""
    def build(gen):
        import timm
        m = timm.create_model(name, pretrained=False, num_classes=10, **kw)
        return m, [(torch.randn(2, 3, size, size, generator=gen),)], ["images"], ["logits"], None
    return build


def tv(builder, size=64, batch=2, **kw):
    """A torchvision classification builder with 10 classes at a small resolution."""
    def build(gen):
        import torchvision.models as tvm
        m = getattr(tvm, builder)(weights=None, num_classes=10, **kw)
        return m, [(torch.randn(batch, 3, size, size, generator=gen),)], ["images"], \
            ["logits"], None
    return build


def maxvit(gen):
    from torchvision.models.maxvit import MaxVit
    m = MaxVit(input_size=(64, 64), stem_channels=16, partition_size=4, block_channels=[16, 32],
               block_layers=[1, 1], head_dim=8, stochastic_depth_prob=0.0, num_classes=10)
    return m, [(torch.randn(2, 3, 64, 64, generator=gen),)], ["images"], ["logits"], None


def swin_v2(gen):
    from torchvision.models.swin_transformer import (PatchMergingV2, SwinTransformer,
                                                     SwinTransformerBlockV2)
    m = SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4],
                        window_size=[4, 4], num_classes=10, block=SwinTransformerBlockV2,
                        downsample_layer=PatchMergingV2)
    return m, [(torch.randn(1, 3, 64, 64, generator=gen),)], ["images"], ["logits"], None


def raft(gen):
    from torchvision.models.optical_flow import raft_small

    class Flow(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = raft_small(weights=None)

        def forward(self, a, b):
            return self.m(a, b, num_flow_updates=3)[-1]
    return Flow(), [(torch.rand(1, 3, 128, 128, generator=gen), torch.rand(1, 3, 128, 128,
                                                                      generator=gen))], \
        ["image1", "image2"], ["flow"], None


def deeplab_dynamic(gen):
    """A segmentation network at dynamic image size: the upsample's size comes from Shape."""
    from torchvision.models.segmentation import lraspp_mobilenet_v3_large

    class Seg(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = lraspp_mobilenet_v3_large(weights=None, weights_backbone=None,
                                               num_classes=3)

        def forward(self, x):
            return self.m(x)["out"]
    ins = [(torch.randn(1, 3, 64, 64, generator=gen),), (torch.randn(1, 3, 48, 80,
                                                                     generator=gen),)]
    return Seg(), ins, ["images"], ["masks"], {"images": {2: "height", 3: "width"},
                                              "masks": {2: "height", 3: "width"}}


def whisper(gen):
    from transformers import WhisperConfig, WhisperModel
    cfg = WhisperConfig(vocab_size=512, d_model=64, encoder_layers=2, decoder_layers=2,
                        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
                        decoder_ffn_dim=128, num_mel_bins=16, max_source_positions=32,
                        max_target_positions=64, pad_token_id=0, decoder_start_token_id=0)
    m = HFWrap(WhisperModel(cfg), ["input_features", "decoder_input_ids"])
    ins = [(torch.randn(2, 16, 64, generator=gen), ids((2, 5), 512, gen)),
           (torch.randn(1, 16, 64, generator=gen), ids((1, 3), 512, gen))]
    dyn = {"input_features": {0: "batch"}, "decoder_input_ids": {0: "batch", 1: "target"},
           "last_hidden_state": {0: "batch", 1: "target"}}
    return m, ins, ["input_features", "decoder_input_ids"], ["last_hidden_state"], dyn


LLM = dict(hidden_size=64, intermediate_size=160, num_hidden_layers=2, num_attention_heads=4,
           num_key_value_heads=2, max_position_embeddings=256, use_cache=False)

ZOO = {
    "bert": bert, "gpt2": gpt2, "gpt2_mask": gpt2_mask, "llama": llama,
    "llama_decode": llama_decode, "vit": vit,
    "vit_dynamic_batch": vit_dynamic_batch, "swin": swin, "convnext": convnext,
    "mobilenet_v3": mobilenet_v3, "efficientnet": efficientnet, "densenet": densenet,
    "whisper_encoder": whisper_encoder,
    "distilbert": hf_text("DistilBertModel", "DistilBertConfig", dim=64, n_layers=2, n_heads=4,
                          hidden_dim=128, max_position_embeddings=128),
    "roberta": hf_text("RobertaModel", "RobertaConfig", hidden_size=64, num_hidden_layers=2,
                       num_attention_heads=4, intermediate_size=128,
                       max_position_embeddings=130),
    "albert": hf_text("AlbertModel", "AlbertConfig", embedding_size=32, hidden_size=64,
                      num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                      max_position_embeddings=128),
    "t5_encoder": t5_encoder,
    "bart": bart,
    "mistral": hf_text("MistralModel", "MistralConfig", sliding_window=8, **LLM),
    "qwen2": hf_text("Qwen2Model", "Qwen2Config", **LLM),
    "phi": hf_text("PhiModel", "PhiConfig", hidden_size=64, intermediate_size=128,
                   num_hidden_layers=2, num_attention_heads=4, partial_rotary_factor=0.5,
                   max_position_embeddings=256, use_cache=False),
    "gemma": hf_text("GemmaModel", "GemmaConfig", head_dim=16, **LLM),
    "clip_vision": clip_vision,
    "wav2vec2": wav2vec2,
    "shufflenet": shufflenet,
    "regnet": regnet,
    "lraspp": lraspp,
    "timm_vit": timm_model("test_vit.r160_in1k", 160),
    "timm_convnext": timm_model("test_convnext.r160_in1k", 160),
    "timm_efficientnet": timm_model("test_efficientnet.r160_in1k", 160),
    "timm_byobnet": timm_model("test_byobnet.r160_in1k", 160),
    "timm_mobilevit": timm_model("mobilevit_xxs", 64),
    "unet_block": unet_block,
    "ssdlite": ssdlite,
    # Held out from the kept cases: tried as a user would, to find what does not compile.
    "deberta_v2": hf_text("DebertaV2Model", "DebertaV2Config", hidden_size=64,
                          num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                          max_position_embeddings=128, relative_attention=True,
                          position_buckets=16, pos_att_type=["p2c", "c2p"]),
    "electra": hf_text("ElectraModel", "ElectraConfig", embedding_size=32, hidden_size=64,
                       num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                       max_position_embeddings=128),
    "mpnet": hf_text("MPNetModel", "MPNetConfig", hidden_size=64, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=128, max_position_embeddings=130),
    "convbert": hf_text("ConvBertModel", "ConvBertConfig", embedding_size=64, hidden_size=64,
                        num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                        max_position_embeddings=128),
    "squeezebert": hf_text("SqueezeBertModel", "SqueezeBertConfig", embedding_size=64,
                           hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=128, max_position_embeddings=128),
    "bloom": hf_text("BloomModel", "BloomConfig", hidden_size=64, n_layer=2, n_head=4,
                     pad_token_id=0),
    "opt": hf_text("OPTModel", "OPTConfig", hidden_size=64, num_hidden_layers=2, ffn_dim=128,
                   num_attention_heads=4, max_position_embeddings=128, word_embed_proj_dim=64,
                   pad_token_id=0),
    "gpt_neox": hf_text("GPTNeoXModel", "GPTNeoXConfig", hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=128, rotary_pct=0.25,
                        max_position_embeddings=256, use_cache=False, pad_token_id=0),
    "falcon": hf_text("FalconModel", "FalconConfig", hidden_size=64, num_hidden_layers=2,
                      num_attention_heads=4, use_cache=False, pad_token_id=0),
    "gptj": hf_text("GPTJModel", "GPTJConfig", n_embd=64, n_layer=2, n_head=4, rotary_dim=8,
                    n_positions=128, use_cache=False, pad_token_id=0),
    "mpt": hf_text("MptModel", "MptConfig", d_model=64, n_heads=4, n_layers=2, max_seq_len=128,
                   expansion_ratio=2, use_cache=False, pad_token_id=0),
    "qwen3": hf_text("Qwen3Model", "Qwen3Config", head_dim=16, pad_token_id=0, **LLM),
    "gemma2": hf_text("Gemma2Model", "Gemma2Config", head_dim=16, sliding_window=8,
                      pad_token_id=0, **LLM),
    "phi3": hf_text("Phi3Model", "Phi3Config", pad_token_id=0, **LLM),
    "starcoder2": hf_text("Starcoder2Model", "Starcoder2Config", sliding_window=8,
                          pad_token_id=0, **LLM),
    "olmo": hf_text("OlmoModel", "OlmoConfig", pad_token_id=0, **LLM),
    "cohere": hf_text("CohereModel", "CohereConfig", pad_token_id=0, **LLM),
    "granite": hf_text("GraniteModel", "GraniteConfig", pad_token_id=0, **LLM),
    "stablelm": hf_text("StableLmModel", "StableLmConfig", pad_token_id=0, **LLM),
    "marian": hf_seq2seq("MarianModel", "MarianConfig", d_model=64, encoder_layers=2,
                         decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
                         encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=128),
    "t5": hf_seq2seq("T5Model", "T5Config", d_model=64, d_kv=16, d_ff=128, num_layers=2,
                     num_heads=4),
    "whisper": whisper,
    "beit": hf_vision("BeitModel", "BeitConfig", image_size=32, patch_size=8, hidden_size=64,
                      num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                      use_relative_position_bias=True),
    "dinov2": hf_vision("Dinov2Model", "Dinov2Config", image_size=32, patch_size=8,
                        hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        mlp_ratio=2),
    "deit": hf_vision("DeiTModel", "DeiTConfig", image_size=32, patch_size=8, hidden_size=64,
                      num_hidden_layers=2, num_attention_heads=4, intermediate_size=128),
    "segformer": hf_vision("SegformerModel", "SegformerConfig", size=64, num_encoder_blocks=2,
                           depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                           num_attention_heads=[1, 2], patch_sizes=[7, 3], strides=[4, 2],
                           mlp_ratios=[2, 2]),
    "convnextv2": hf_vision("ConvNextV2Model", "ConvNextV2Config", size=64, num_stages=2,
                            hidden_sizes=[16, 32], depths=[1, 1]),
    "swinv2_hf": hf_vision("Swinv2Model", "Swinv2Config", image_size=32, patch_size=4,
                           embed_dim=16, depths=[1, 1], num_heads=[1, 2], window_size=4),
    "mobilevitv2": hf_vision("MobileViTV2Model", "MobileViTV2Config", size=64, image_size=64,
                             width_multiplier=0.5),
    "yolos": hf_vision("YolosModel", "YolosConfig", image_size=[32, 32], patch_size=8,
                       hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                       intermediate_size=128, num_detection_tokens=5),
    "squeezenet": tv("squeezenet1_1"),
    "mnasnet": tv("mnasnet0_5"),
    "mobilenet_v2": tv("mobilenet_v2", width_mult=0.35),
    "googlenet": tv("googlenet", size=64, aux_logits=False, init_weights=False),
    "maxvit": maxvit,
    "swin_v2": swin_v2,
    "raft": raft,
    "lraspp_dynamic": deeplab_dynamic,
    "timm_lcnet": timm_small("lcnet_050", 64),
    "timm_mixnet": timm_small("mixnet_s", 64),
    "timm_tinynet": timm_small("tinynet_e", 64),
    "timm_ghostnet": timm_small("ghostnet_050", 64),
    "timm_repvit": timm_small("repvit_m0_9", 64),
    "timm_efficientvit": timm_small("efficientvit_m0", 224),
    "timm_edgenext": timm_small("edgenext_xx_small", 64),
    "timm_fastvit": timm_small("fastvit_t8", 64),
    "timm_mobilevitv2": timm_small("mobilevitv2_050", 64),
    "timm_regnetx": timm_small("regnetx_002", 64),
    "timm_resnet10t": timm_small("resnet10t", 64),
    "timm_rexnet": timm_small("rexnet_100", 64),
    "timm_hgnetv2": timm_small("hgnetv2_b0", 64),
    "timm_tinyvit": timm_small("tiny_vit_5m_224", 224),
    "timm_coat": timm_small("coat_lite_tiny", 224),
    "timm_pit": timm_small("pit_ti_224", 224),
    "timm_nfnet": timm_small("test_nfnet.r160_in1k", 160),
    "timm_resnet": timm_small("test_resnet.r160_in1k", 160),
    "timm_vit2": timm_small("test_vit2.r160_in1k", 160),
    "timm_vit3": timm_small("test_vit3.r160_in1k", 160),
}

# A second held-out set (2026-12-05): architectures neither the zoo nor the first held-out set
# had, as users bring them: mixtures of experts, state-space and recurrent blocks, local and
# strided attention, relative positions, detection and depth heads, video, audio and time series.
MOE = dict(LLM, pad_token_id=0)
AUDIO = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
             conv_dim=[32, 32, 32], conv_stride=[5, 2, 2], conv_kernel=[10, 3, 3],
             num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
SEQ2SEQ = dict(d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
               decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
               max_position_embeddings=128)
ZOO2 = {
    "longformer": hf_text("LongformerModel", "LongformerConfig", hidden_size=64,
                          num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                          attention_window=[4, 4], max_position_embeddings=130, pad_token_id=1),
    "funnel": hf_text("FunnelModel", "FunnelConfig", d_model=64, n_head=4, d_head=16,
                      d_inner=128, block_sizes=[1, 1], num_decoder_layers=1),
    "mobilebert": hf_text("MobileBertModel", "MobileBertConfig", hidden_size=64,
                          num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                          embedding_size=32, intra_bottleneck_size=32, true_hidden_size=32,
                          num_feedforward_networks=2, max_position_embeddings=128),
    "roformer": hf_text("RoFormerModel", "RoFormerConfig", hidden_size=64, embedding_size=64,
                        num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                        max_position_embeddings=128),
    "xlnet": hf_text("XLNetModel", "XLNetConfig", d_model=64, n_layer=2, n_head=4, d_inner=128),
    "canine": hf_text("CanineModel", "CanineConfig", hidden_size=64, num_hidden_layers=2,
                      num_attention_heads=4, intermediate_size=128, downsampling_rate=4,
                      max_position_embeddings=256, num_hash_buckets=256,
                      local_transformer_stride=16),
    "gpt_bigcode": hf_text("GPTBigCodeModel", "GPTBigCodeConfig", n_embd=64, n_layer=2,
                           n_head=4, n_positions=128, multi_query=True, use_cache=False,
                           pad_token_id=0),
    "codegen": hf_text("CodeGenModel", "CodeGenConfig", n_embd=64, n_layer=2, n_head=4,
                       rotary_dim=8, n_positions=128, n_ctx=128, use_cache=False, pad_token_id=0),
    "xglm": hf_text("XGLMModel", "XGLMConfig", d_model=64, num_layers=2, attention_heads=4,
                    ffn_dim=128, max_position_embeddings=128, pad_token_id=1),
    "biogpt": hf_text("BioGptModel", "BioGptConfig", hidden_size=64, num_hidden_layers=2,
                      num_attention_heads=4, intermediate_size=128, max_position_embeddings=128,
                      pad_token_id=1),
    "mixtral": hf_text("MixtralModel", "MixtralConfig", num_local_experts=4,
                       num_experts_per_tok=2, **MOE),
    "qwen2_moe": hf_text("Qwen2MoeModel", "Qwen2MoeConfig", num_experts=4, num_experts_per_tok=2,
                         moe_intermediate_size=64, shared_expert_intermediate_size=64, **MOE),
    "olmoe": hf_text("OlmoeModel", "OlmoeConfig", num_experts=4, num_experts_per_tok=2, **MOE),
    "mamba": hf_text("MambaModel", "MambaConfig", ids_only=True, hidden_size=64, state_size=8,
                     num_hidden_layers=2, expand=2, conv_kernel=4, use_cache=False,
                     pad_token_id=0),
    "gemma3": hf_text("Gemma3TextModel", "Gemma3TextConfig", head_dim=16, sliding_window=8,
                      **MOE),
    "modernbert": hf_text("ModernBertModel", "ModernBertConfig", hidden_size=64,
                          intermediate_size=128, num_hidden_layers=3, num_attention_heads=4,
                          global_attn_every_n_layers=2, local_attention=8,
                          max_position_embeddings=128, pad_token_id=0),
    "recurrent_gemma": hf_text("RecurrentGemmaModel", "RecurrentGemmaConfig", hidden_size=64,
                               intermediate_size=128, num_hidden_layers=3, num_attention_heads=4,
                               num_key_value_heads=1, head_dim=16, lru_width=64,
                               attention_window_size=8, conv1d_width=4,
                               block_types=["recurrent", "attention"], pad_token_id=0),
    "pegasus": hf_seq2seq("PegasusModel", "PegasusConfig", **SEQ2SEQ),
    "mbart": hf_seq2seq("MBartModel", "MBartConfig", **SEQ2SEQ),
    "m2m100": hf_seq2seq("M2M100Model", "M2M100Config", **SEQ2SEQ),
    "blenderbot_small": hf_seq2seq("BlenderbotSmallModel", "BlenderbotSmallConfig", **SEQ2SEQ),
    "umt5": hf_seq2seq("UMT5Model", "UMT5Config", d_model=64, d_kv=16, d_ff=128, num_layers=2,
                       num_heads=4),
    "levit_hf": hf_vision("LevitModel", "LevitConfig", size=64, image_size=64,
                          hidden_sizes=[32, 48, 64], num_attention_heads=[1, 2, 2],
                          depths=[1, 1, 1], key_dim=[8, 8, 8], mlp_ratio=[2, 2, 2],
                          attention_ratio=[2, 2, 2]),
    "pvt_v2": hf_vision("PvtV2Model", "PvtV2Config", size=64, num_encoder_blocks=2,
                        depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                        num_attention_heads=[1, 2], patch_sizes=[7, 3], strides=[4, 2],
                        mlp_ratios=[2, 2]),
    "focalnet": hf_vision("FocalNetModel", "FocalNetConfig", size=64, image_size=64,
                          embed_dim=16, depths=[1, 1], focal_levels=[2, 2],
                          focal_windows=[3, 3]),
    "vitdet": hf_vision("VitDetModel", "VitDetConfig", size=64, image_size=64,
                        pretrain_image_size=64, patch_size=16, hidden_size=64,
                        num_hidden_layers=2, num_attention_heads=4, mlp_ratio=2, window_size=2,
                        window_block_indices=[0], use_relative_position_embeddings=True),
    "swin2sr": hf_vision("Swin2SRModel", "Swin2SRConfig", size=32, image_size=32, patch_size=1,
                         embed_dim=16, depths=[1], num_heads=[2], window_size=4, upscale=2),
    "sam_vision": hf_vision("SamVisionModel", "SamVisionConfig", size=64, hidden_size=64,
                            num_hidden_layers=2, num_attention_heads=4, image_size=64,
                            patch_size=16, output_channels=32, window_size=2,
                            global_attn_indexes=[1], mlp_dim=128),
    "siglip_vision": hf_vision("SiglipVisionModel", "SiglipVisionConfig", image_size=32,
                               patch_size=8, hidden_size=64, num_hidden_layers=2,
                               num_attention_heads=4, intermediate_size=128),
    "dpt": hf_vision("DPTForDepthEstimation", "DPTConfig", image_size=32, patch_size=8,
                     hidden_size=64, num_hidden_layers=4, num_attention_heads=4,
                     intermediate_size=128, backbone_out_indices=[0, 1, 2, 3],
                     neck_hidden_sizes=[16, 16, 32, 32], fusion_hidden_size=32,
                     head_in_index=-1),
    "detr": hf_vision("DetrModel", "DetrConfig", size=64, use_timm_backbone=False,
                      use_pretrained_backbone=False,
                      backbone_config={"model_type": "resnet", "embedding_size": 16,
                                       "hidden_sizes": [16, 32, 48, 64], "depths": [1, 1, 1, 1],
                                       "layer_type": "basic",
                                       "out_features": ["stage4"]},
                      d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                      decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                      num_queries=10),
    "timesformer": hf_input("TimesformerModel", "TimesformerConfig", (2, 4, 3, 32, 32),
                            image_size=32, patch_size=8, num_frames=4, hidden_size=64,
                            num_hidden_layers=2, num_attention_heads=4, intermediate_size=128),
    "videomae": hf_input("VideoMAEModel", "VideoMAEConfig", (2, 4, 3, 32, 32), image_size=32,
                         patch_size=8, num_frames=4, tubelet_size=2, hidden_size=64,
                         num_hidden_layers=2, num_attention_heads=4, intermediate_size=128),
    "hubert": hf_input("HubertModel", "HubertConfig", (2, 4000), "input_values", **AUDIO),
    "wavlm": hf_input("WavLMModel", "WavLMConfig", (2, 4000), "input_values", num_buckets=32,
                      max_bucket_distance=64, **AUDIO),
    "w2v2_conformer": hf_input("Wav2Vec2ConformerModel", "Wav2Vec2ConformerConfig", (2, 4000),
                               "input_values", position_embeddings_type="rotary",
                               conv_depthwise_kernel_size=7, **AUDIO),
    "data2vec_audio": hf_input("Data2VecAudioModel", "Data2VecAudioConfig", (2, 4000),
                               "input_values", **AUDIO),
    "sew": hf_input("SEWModel", "SEWConfig", (2, 4000), "input_values", squeeze_factor=2,
                    **AUDIO),
    "ast": hf_input("ASTModel", "ASTConfig", (2, 100, 64), "input_values", hidden_size=64,
                    num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                    patch_size=16, frequency_stride=10, time_stride=10, max_length=100,
                    num_mel_bins=64),
    "patchtst": hf_input("PatchTSTModel", "PatchTSTConfig", (2, 32, 3), "past_values",
                         num_input_channels=3, context_length=32, patch_length=8,
                         patch_stride=8, d_model=32, num_attention_heads=4, num_hidden_layers=2,
                         ffn_dim=64),
    "patchtsmixer": hf_input("PatchTSMixerModel", "PatchTSMixerConfig", (2, 32, 3),
                             "past_values", context_length=32, patch_length=8, patch_stride=8,
                             num_input_channels=3, d_model=16, num_layers=2),
    "timm_levit": timm_small("levit_128s", 224),
    "timm_pvt_v2": timm_small("pvt_v2_b0", 64),
    "timm_xcit": timm_small("xcit_nano_12_p16_224", 64),
    "timm_crossvit": timm_small("crossvit_tiny_240", 240),
    "timm_dla": timm_small("dla46_c", 64),
    "timm_mnv4": timm_small("mobilenetv4_conv_small", 64),
    "timm_gcvit": timm_small("gcvit_xxtiny", 224),
    "timm_eva02": timm_small("eva02_tiny_patch14_224", 224),
    "timm_efficientformerv2": timm_small("efficientformerv2_s0", 224),
    "timm_vovnet": timm_small("ese_vovnet19b_slim_dw", 64),
    "timm_starnet": timm_small("starnet_s1", 64),
    "timm_cs3darknet": timm_small("cs3darknet_focus_s", 64),
    "timm_ghostnetv2": timm_small("ghostnetv2_100", 64),
    "timm_efficientvit_b": timm_small("efficientvit_b0", 224),
    "timm_gmlp": timm_small("gmlp_ti16_224", 224),
    "timm_convit": timm_small("convit_tiny", 224),
    "timm_mambaout": timm_small("mambaout_femto", 64),
}
ZOO.update(ZOO2)


# ---------------------------------------------------------------------------


def perturb(m, gen):
    """Moves normalization parameters and statistics away from the identity."""
    for mod in m.modules():
        if isinstance(mod, (nn.BatchNorm2d, nn.LayerNorm, nn.GroupNorm)):
            if getattr(mod, "weight", None) is not None:
                mod.weight.data = 1.0 + 0.2 * torch.randn(mod.weight.shape, generator=gen)
                mod.bias.data = 0.1 * torch.randn(mod.bias.shape, generator=gen)
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.data = 0.1 * torch.randn(mod.running_mean.shape, generator=gen)
                mod.running_var.data = 0.5 + torch.rand(mod.running_var.shape, generator=gen)


def reference(m, args):
    """Outputs of a float64 copy where the module runs in float64, else of the module itself."""
    def run(mod, a):
        with torch.no_grad():
            out = mod(*a)
        return [o.detach() for o in (out if isinstance(out, (tuple, list)) else (out,))]
    try:
        m64 = copy.deepcopy(m).double()
        a64 = [a.double() if a.is_floating_point() else a for a in args]
        outs = run(m64, a64)
        dtypes = [o.dtype for o in run(m, args)]
        return [o.to(d).numpy() for o, d in zip(outs, dtypes)], "float64"
    except Exception:
        return [o.numpy() for o in run(m, args)], "float32"


def write_case(folder, n, in_names, args, out_names, outs):
    d = os.path.join(folder, f"test_data_set_{n}")
    os.makedirs(d, exist_ok=True)
    for k, (name, a) in enumerate(zip(in_names, args)):
        t = numpy_helper.from_array(a.numpy(), name)
        open(os.path.join(d, f"input_{k}.pb"), "wb").write(t.SerializeToString())
    for k, (name, o) in enumerate(zip(out_names, outs)):
        t = numpy_helper.from_array(o, name)
        open(os.path.join(d, f"output_{k}.pb"), "wb").write(t.SerializeToString())


def dynamic_shapes(args, in_names, dyn):
    from torch.export import Dim
    dims = {}
    spec = []
    for name, a in zip(in_names, args):
        axes = (dyn or {}).get(name)
        if not axes:
            spec.append(None)
            continue
        spec.append({ax: dims.setdefault(sym, Dim(sym, min=1, max=4096))
                     for ax, sym in axes.items()})
    return tuple(spec)


def make_compressible(m):
    """Rounds every floating parameter and buffer to one of 16 values per tensor, so that xz
    shrinks the exported file about eightfold (random float weights do not compress): the
    case is as strong, the reference computing with the same weights."""
    with torch.no_grad():
        for t in list(m.parameters()) + list(m.buffers()):
            if t.is_floating_point() and t.numel() > 1:
                scale = t.abs().max() / 7.5
                if scale > 0:
                    t.copy_(torch.round(t / scale).clamp(-8, 7) * scale)


def export(name, builder, exporter, out, compressible=False):
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    m, cases, in_names, out_names, dyn = builder(gen)
    perturb(m, gen)
    if compressible:
        make_compressible(m)
    m.eval()
    folder = os.path.join(out, f"{name}.{exporter}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    args = cases[0]
    if exporter == "ts":
        torch.onnx.export(m, args, path, dynamo=False, opset_version=OPSET_TS,
                          input_names=in_names, output_names=out_names,
                          dynamic_axes=dyn or None, do_constant_folding=True)
    else:
        kw = {}
        if dyn:
            spec = dynamic_shapes(args, in_names, dyn)
            # torch.export wants the specs in the structure of forward's parameters: a
            # *args parameter takes the rest as one tuple.
            params = list(inspect.signature(m.forward).parameters.values())
            nested = []
            for i, p in enumerate(params):
                if p.kind == inspect.Parameter.VAR_POSITIONAL:
                    nested.append(tuple(spec[i:]))
                    break
                nested.append(spec[i])
            kw["dynamic_shapes"] = tuple(nested)
        prog = torch.onnx.export(m, args, dynamo=True, input_names=in_names,
                                 output_names=out_names, **kw)
        prog.save(path, external_data=False)
    model = onnx.load(path)
    onnx.checker.check_model(model)
    import onnxruntime as ort
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    report = {"opset": model.opset_import[0].version, "nodes": len(model.graph.node),
              "bytes": os.path.getsize(path), "cases": []}
    for n, a in enumerate(cases):
        outs, kind = reference(m, a)
        write_case(folder, n, in_names, a, out_names, outs)
        feeds = {i.name: x.numpy() for i, x in zip(sess.get_inputs(), a)}
        got = sess.run(None, feeds)
        err = max(float(np.max(np.abs(g.astype(np.float64) - r.astype(np.float64))))
                  for g, r in zip(got, outs))
        report["cases"].append({"shapes": [list(x.shape) for x in a], "reference": kind,
                                "ort_max_abs_err": err})
    return report


def export_one(task):
    """One export in a worker process: (key, report)."""
    name, exporter, out, compressible, threads = task
    torch.set_num_threads(threads)
    key = f"{name}.{exporter}"
    t0 = time.time()
    try:
        rep = export(name, ZOO[name], exporter, out, compressible)
        rep["seconds"] = round(time.time() - t0, 1)
        print(f"{key}: ok {rep}", flush=True)
    except Exception as e:
        rep = {"error": f"{type(e).__name__}: {e}"[:2000]}
        print(f"{key}: FAILED {type(e).__name__}: {str(e)[:500]}", flush=True)
        traceback.print_exc(limit=3)
    return key, rep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--exporters", default="ts,dynamo")
    ap.add_argument("--compressible", action="store_true",
                    help="round each weight tensor to 16 values (make_compressible)")
    ap.add_argument("--jobs", type=int, default=1, help="exports run side by side")
    ap.add_argument("--deadline-s", type=float, default=0,
                    help="stop waiting for exports after this many seconds")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    manifest = {"torch": torch.__version__, "onnx": onnx.__version__, "models": {}}
    tasks = [(name, exporter, args.out, args.compressible,
              max(1, (os.cpu_count() or 1) // max(1, args.jobs)))
             for name in ZOO if not args.only or name in args.only
             for exporter in args.exporters.split(",")]
    t0 = time.time()

    def record(key, rep):
        manifest["models"][key] = rep
        json.dump(manifest, open(os.path.join(args.out, "manifest.json"), "w"), indent=1)

    if args.jobs <= 1:
        for task in tasks:
            record(*export_one(task))
        return
    import multiprocessing
    pool = multiprocessing.get_context("spawn").Pool(args.jobs, maxtasksperchild=1)
    results = pool.imap_unordered(export_one, tasks)
    for _ in tasks:
        left = args.deadline_s - (time.time() - t0) if args.deadline_s else None
        try:
            record(*results.next(timeout=left))
        except multiprocessing.TimeoutError:
            print(f"deadline: {len(tasks) - len(manifest['models'])} exports not finished",
                  flush=True)
            break
    pool.terminate()


if __name__ == "__main__":
    main()
