"""The GPU benchmark's real-model suite (issue 32): whole architectures as users export them.

The kernel workloads of workloads.py pass every weight as a graph input, so that the models stay
a few kilobytes. A real model is exported as users export it: its weights are initializers, its
BatchNorms folded into the convolutions by the exporter (`do_constant_folding`), and strata sees
constant weights, as it does on a user's model. Such a module holds the weights (25-90 M
parameters), more than the device tool carries, so the weights are not drawn at random: every
parameter is filled from one table of 4,099 values (`fill`), indexed by the element's position,
so the module's bytes repeat and compress to almost nothing (xz), and the GPU machine fills the
same architecture with the same values for the peers and the reference. 4,099 is prime, so the
pattern aligns with no dimension of any weight; the values are uniform with unit variance,
scaled by 1/sqrt(fan-in), so activations keep their scale through the depth. Norm scales are
1 and BatchNorm's running statistics its defaults (a per-channel scale folded into a
convolution would break the repetition); biases are 0.02 x the table.

torchvision's architectures are the same in Debian's 0.14 (the export here) and 0.26 (the GPU
machine): the parameters are matched by name.

Each model is exported once per batch size (1, and a throughput batch), in float32 by torch 1.13,
then turned into float16 (`to_f16`): initializers, float constants, casts to float, inputs and
outputs. Float16, not bfloat16: ONNX admits bfloat16 convolutions only from opset 22 (Conv-22),
and a bfloat16 Conv at the opsets exporters write fails ONNX's own type check (strata's, and ONNX
Runtime's, import). Both are 16-bit tensor-core types of the same speed. The peers run the same
torchvision module in float16, channels-last for convolutional networks (their fastest layout);
the reference is that module in float32 (TF32 off).
"""

import math

import torch

# The table's length: prime, so that no weight's dimensions line up with it.
PERIOD = 4099


def _table():
    """PERIOD values, uniform on [-sqrt(3), sqrt(3)] (unit variance), from a 32-bit LCG:
    the same numbers from any torch or Python version."""
    state = 12345
    vals = []
    for _ in range(PERIOD):
        state = (1664525 * state + 1013904223) % (1 << 32)
        vals.append((state / float(1 << 32) * 2.0 - 1.0) * math.sqrt(3.0))
    return torch.tensor(vals, dtype=torch.float32)


def fill(model):
    """Sets every parameter of `model` deterministically (module docstring); BatchNorm's running
    statistics keep their defaults (mean 0, variance 1)."""
    table = _table()
    offset = 0
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            n = p.numel()
            idx = (torch.arange(n, dtype=torch.int64) + offset) % PERIOD
            vals = table[idx].reshape(p.shape)
            if p.dim() >= 2:
                fan_in = n // p.shape[0]
                p.copy_(vals * (1.0 / math.sqrt(max(fan_in, 1))))
            elif name.endswith("bias"):
                p.copy_(vals * 0.02)
            else:  # norm scales, layer scales
                p.fill_(1.0)
            offset = (offset + n) % PERIOD
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.zero_()
            elif name.endswith("running_var"):
                b.fill_(1.0)
    return model.eval()


# name -> (torchvision constructor, convolutional: runs channels-last in the peers)
ARCHS = {
    "resnet50": ("resnet50", True),
    "convnext_tiny": ("convnext_tiny", True),
    "efficientnet_b0": ("efficientnet_b0", True),
    "mobilenet_v3_large": ("mobilenet_v3_large", True),
    # Grouped convolutions: 32 groups of 4 to 32 channels; groups of 8 with
    # squeeze-and-excitation.
    "resnext50_32x4d": ("resnext50_32x4d", True),
    "regnet_y_400mf": ("regnet_y_400mf", True),
    "vit_b_16": ("vit_b_16", False),
    "swin_t": ("swin_t", False),
}

# Text and audio models: built from transformers (and, for the decode step, the plain-torch
# decoder of models/zoo/export_zoo.py: hand-written serving code's form, the KV cache passed in
# and returned through Concat). transformers is on the GPU machine only, so these are exported
# there (`export_onnx.py --suite real --only ...`, torch 2.11's dynamo exporter: export_text),
# in float16 on the GPU: a float32 export turned into float16 afterwards would carry float32's
# finfo.min from the masks into float16 as -inf, and 0 * -inf is NaN. Their inputs are token
# ids, masks and caches, so the function the peers run takes the compute type as a keyword.
LLAMA = dict(d=2048, heads=32, kv_heads=4, ff=5632, layers=4, vocab=32000)


def _zoo():
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "models", "zoo"))
    import export_zoo
    return export_zoo


class _DecodeStep(torch.nn.Module):
    """One Llama-style decode step with its LM head: ids [b, 1] and the cache in, the logits
    and the grown cache out."""

    def __init__(self):
        super().__init__()
        c = LLAMA
        self.body = _zoo().LlamaWithCache(vocab=c["vocab"], d=c["d"], heads=c["heads"],
                                          kv_heads=c["kv_heads"], ff=c["ff"],
                                          layers=c["layers"])
        self.lm_head = torch.nn.Linear(c["d"], c["vocab"], bias=False)

    def forward(self, ids, *cache):
        h, *kv = self.body(ids, *cache)
        return (self.lm_head(h), *kv)


def _text(arch):
    if arch == "llama_decode":
        return _DecodeStep()
    import transformers as T
    c = LLAMA
    # The model called with its inputs by keyword, its first output returned (parameter
    # names "m.*", which fill orders by).
    wrap = _zoo().HFWrap
    if arch == "bert_base":
        return wrap(T.BertModel(T.BertConfig(), add_pooling_layer=False),
                        ["input_ids", "attention_mask"])
    if arch == "gpt2":
        return wrap(T.GPT2LMHeadModel(T.GPT2Config(use_cache=False)), ["input_ids"])
    if arch == "llama_prefill":
        cfg = T.LlamaConfig(hidden_size=c["d"], intermediate_size=c["ff"],
                            num_hidden_layers=c["layers"], num_attention_heads=c["heads"],
                            num_key_value_heads=c["kv_heads"], vocab_size=c["vocab"],
                            max_position_embeddings=4096, use_cache=False)
        return wrap(T.LlamaModel(cfg), ["input_ids", "attention_mask"])
    if arch == "whisper_encoder":
        from transformers.models.whisper.modeling_whisper import WhisperEncoder
        cfg = T.WhisperConfig(d_model=512, encoder_layers=6, encoder_attention_heads=8,
                              encoder_ffn_dim=2048, num_mel_bins=80, max_source_positions=1500)
        return wrap(WhisperEncoder(cfg), ["input_features"])
    raise ValueError(arch)


# name -> the builder's family; every entry of TEXT is exported on the GPU machine.
TEXT = ("bert_base", "gpt2", "llama_prefill", "llama_decode", "whisper_encoder")

_BUILT = {}


def build(arch):
    """The float32 module, filled (CPU)."""
    torch.manual_seed(0)  # construction draws weights we overwrite; keep it quiet and fixed
    if arch in TEXT:
        return fill(_text(arch))
    import torchvision
    ctor, _ = ARCHS[arch]
    return fill(getattr(torchvision.models, ctor)(weights=None))


def module_for(arch, dtype, device):
    """The filled module in `dtype` on `device` (channels-last for convolutional networks),
    built once per (arch, dtype, device)."""
    key = (arch, dtype, str(device))
    if key not in _BUILT:
        m = typed(build(arch), device, dtype)
        if arch in ARCHS and ARCHS[arch][1]:
            m = m.to(memory_format=torch.channels_last)
        _BUILT[key] = m
    return _BUILT[key]


def typed(m, device, dtype):
    """`m` on `device` in `dtype`, but for RoPE's frequencies (buffers named inv_freq), which stay
    float32: transformers computes the angles in float32 from them, and a frequency rounded to
    float16 puts the angle at position 1,000 off by up to half a radian, far from what the float32
    reference computes (and from what the model means)."""
    keep = {n: b.detach().clone() for n, b in m.named_buffers() if n.endswith("inv_freq")}
    m = m.to(device=device, dtype=dtype)
    for name, b in keep.items():
        owner, _, attr = name.rpartition(".")
        setattr(m.get_submodule(owner) if owner else m, attr, b.to(device))
    return m


def _module_outside_compile(arch, dtype, device):
    return module_for(arch, dtype, device)


# torch.compile would trace the module's construction, the first time a peer calls for a type
# (transformers' GPT-2 fails in dynamo there, BERT's took 110 s): the module is built eagerly.
if hasattr(torch, "compiler") and hasattr(torch.compiler, "disable"):
    _module_outside_compile = torch.compiler.disable(_module_outside_compile)


def forward_fn(arch):
    """The benchmark's torch_fn: the module on the inputs' device, in `dtype` (the reference
    passes its own), else in the first floating input's type (float16 when there is none)."""
    conv = arch in ARCHS and ARCHS[arch][1]

    def fn(*args, dtype=None):
        floats = [a for a in args if a.is_floating_point()]
        dtype = dtype or (floats[0].dtype if floats else torch.float16)
        m = _module_outside_compile(arch, dtype, args[0].device)
        args = [a.to(dtype) if a.is_floating_point() else a for a in args]
        if conv:
            args = [a.contiguous(memory_format=torch.channels_last) for a in args]
        return m(*args)
    fn.__name__ = f"{arch}_forward"
    return fn


# ---------------------------------------------------------------------------
# Export (torch 1.13, here)
# ---------------------------------------------------------------------------


def _tensor_to_f16(t):
    from onnx import TensorProto, numpy_helper
    if t.data_type != TensorProto.FLOAT:
        return False
    arr = numpy_helper.to_array(t).astype("float16")
    t.CopyFrom(numpy_helper.from_array(arr, t.name))
    return True


def to_f16(model):
    """Turns a float32 ONNX model into float16 in place: every float initializer and constant,
    casts to float, and the graph's float inputs and outputs. Ops whose float operands ONNX
    requires as float32 (Resize's scales) do not occur in these architectures."""
    from onnx import TensorProto
    g = model.graph
    for init in g.initializer:
        _tensor_to_f16(init)
    for node in g.node:
        for a in node.attribute:
            if a.type == a.TENSOR:
                _tensor_to_f16(a.t)
            if node.op_type in ("Cast", "CastLike") and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    for v in list(g.input) + list(g.output):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    del g.value_info[:]
    return model


def export_dynamo(w, arch, path):
    """Exports the model of workload `w` (static shapes) to `path`, in float16 on the GPU, by
    torch's default exporter since 2.9 (dynamo): the text and audio models always, the
    torchvision ones with `export(..., exporter="dynamo")`, as a user of torch 2.9 or later
    exports them (a ViT's attention is then what torch.export makes of nn.MultiheadAttention,
    not TorchScript's slices). Returns the node count."""
    if arch in TEXT:
        return export_text(w, arch, path)
    import warnings

    import onnx
    dev = torch.device("cuda")
    model = typed(build(arch), dev, torch.float16)
    x = torch.zeros(w.dims["B"], 3, 224, 224, device=dev, dtype=torch.float16)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), path, dynamo=True, external_data=False,
                          input_names=["x"], output_names=["y"])
    proto = onnx.load(path)
    proto.producer_name = "strata bench/gpu/real_models.py"
    proto.doc_string = (f"torchvision {arch}, batch {w.dims['B']}, float16, torch "
                        f"{torch.__version__}'s dynamo exporter, weights filled by "
                        "bench/gpu/real_models.py:fill")
    onnx.save(proto, path)
    return len(proto.graph.node)


def export_text(w, arch, path):
    """Exports the text or audio model of workload `w` (static shapes) to `path`, in float16 on
    the GPU, by torch's default exporter since 2.9 (dynamo). Returns the node count.

    Not by the TorchScript exporter, as the torchvision models are (torch 1.13 here has no
    other): on torch 2.11 and transformers 5 it has no symbolic for GPT-2's mask (aten::diff),
    its constant folding leaves folded weights of a float16 module in float32 (a MatMul of
    float16 by float32, which ONNX's type check rejects), its attention (SDPA) symbolic computes
    in float32 for float16 inputs, and its folding fails on the decode step's mask, made on the
    GPU, as it folds on the CPU."""
    import warnings

    import onnx
    dev = torch.device("cuda")
    model = typed(build(arch), dev, torch.float16)
    inputs = w.make_inputs(dev)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(inputs), path, dynamo=True, external_data=False,
                          input_names=[i.name for i in w.inputs],
                          output_names=[o.name for o in w.outputs])
    proto = onnx.load(path)
    proto.producer_name = "strata bench/gpu/real_models.py"
    proto.doc_string = (f"{arch} ({w.title}), float16, torch {torch.__version__}'s dynamo "
                        "exporter, weights filled by bench/gpu/real_models.py:fill")
    onnx.save(proto, path)
    return len(proto.graph.node)


def export(w, path, exporter="torchscript"):
    """Exports workload `w`'s architecture at its batch (static shapes) to `path` in float16;
    returns the node count. The torchvision models go through torch 1.13's TorchScript
    exporter unless `exporter` is "dynamo" (export_dynamo); the text models always through
    dynamo."""
    import io
    import warnings

    import onnx
    arch, batch = w.name.rsplit("_b", 1)[0], w.dims["B"]
    if arch in TEXT:
        return export_text(w, arch, path)
    if exporter == "dynamo":
        return export_dynamo(w, arch, path)
    model = build(arch)
    x = torch.zeros(batch, 3, 224, 224)
    buf = io.BytesIO()
    # With gradients enabled: under no_grad, torch 1.13's MultiheadAttention takes its fused
    # fast path (aten::_native_multi_head_attention), which has no ONNX export.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), buf, opset_version=17, do_constant_folding=True,
                          input_names=["x"], output_names=["y"],
                          training=torch.onnx.TrainingMode.EVAL)
    proto = to_f16(onnx.load_from_string(buf.getvalue()))
    proto.producer_name = "strata bench/gpu/real_models.py"
    proto.doc_string = (f"torchvision {arch}, batch {batch}, float16, weights filled by "
                        "bench/gpu/real_models.py:fill")
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())
    return len(proto.graph.node)
