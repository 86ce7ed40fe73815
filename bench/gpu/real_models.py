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
    "vit_b_16": ("vit_b_16", False),
    "swin_t": ("swin_t", False),
}

_BUILT = {}


def build(arch):
    """The float32 torchvision module, filled (CPU)."""
    import torchvision
    ctor, _ = ARCHS[arch]
    torch.manual_seed(0)  # construction draws weights we overwrite; keep it quiet and fixed
    return fill(getattr(torchvision.models, ctor)(weights=None))


def module_for(arch, dtype, device):
    """The filled module in `dtype` on `device` (channels-last for convolutional networks),
    built once per (arch, dtype, device)."""
    key = (arch, dtype, str(device))
    if key not in _BUILT:
        m = build(arch).to(device=device, dtype=dtype)
        if ARCHS[arch][1]:
            m = m.to(memory_format=torch.channels_last)
        _BUILT[key] = m
    return _BUILT[key]


def forward_fn(arch):
    """A function of the image alone, as the benchmark's torch_fn: the module in the input's
    type and device."""
    conv = ARCHS[arch][1]

    def fn(x):
        m = module_for(arch, x.dtype, x.device)
        if conv:
            x = x.contiguous(memory_format=torch.channels_last)
        return m(x)
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


def export(arch, batch, path):
    """Exports `arch` at `batch` (static shapes) to `path` in float16; returns the node count."""
    import io
    import warnings

    import onnx
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
