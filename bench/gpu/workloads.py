"""The GPU benchmark's workloads (docs/benchmarks.md, "GPU benchmark"), defined once.

Every workload of the GPU table in TARGETS.md is here as

- a PyTorch function of plain tensors (`torch_fn`): every weight is an argument, so the same
  function is what torch eager and torch.compile run, and what `export_onnx.py` exports (the
  ONNX model then has every tensor as a graph input and no initializers: the models stay a few
  kilobytes, nothing large is ever committed, and the compiled modules stay small enough to
  carry to the GPU machine; the benchmark draws the weights on the GPU from a seed);
- a JAX function with the same arguments and result (`jax_fn`, built lazily so that this file
  imports without JAX);
- its inputs (names, shapes, dtypes and how to draw them), the fewest bytes it must move (one
  read of each input, one write of each output) or its nominal FLOPs, and the tolerance its
  result must meet against a reference computed in higher precision.

The functions run on torch 1.13 (Debian's, for the ONNX export) and on torch 2.x (the GPU
machine's). Attention uses `F.scaled_dot_product_attention` where it exists, except while
exporting, where the same function is written out as MatMul, Softmax and MatMul, so the model
says what attention computes and leaves the kernel to the compiler.

Dimensions are named: `dims` holds the sizes the benchmark runs, `trace` smaller sizes for the
dynamic dimensions that the exporter traces with (tracing a GPT-2 forward at full size would
take minutes on the CPU); the exported model's inputs and outputs are then set to `dims`, so
each model has static shapes.
"""

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

BF16 = torch.bfloat16
F32 = torch.float32
I64 = torch.int64
F16 = torch.float16


# ---------------------------------------------------------------------------
# Input and workload descriptions
# ---------------------------------------------------------------------------


@dataclass
class Input:
    name: str
    shape: tuple  # dimension names (keys of Workload.dims) or ints
    dtype: torch.dtype
    # How to draw it: ("normal", std), ("gamma",) = 1 + 0.1 N(0, 1), ("tokens", vocab),
    # ("padding", least) = a [B, S] attention mask of ones then zeros, each row's length
    # drawn uniformly from [least * S, S].
    init: tuple = ("normal", 1.0)


@dataclass
class Output:
    name: str
    shape: tuple
    dtype: torch.dtype


@dataclass
class Workload:
    name: str
    group: str  # "memory", "gemm", "attention", "model"
    title: str  # what TARGETS.md calls it
    inputs: list
    outputs: list
    dims: dict
    torch_fn: object
    jax_builder: object  # () -> JAX function with the torch function's arguments
    tol: float  # ||out - ref|| / ||ref|| must stay at or below this
    trace: dict = field(default_factory=dict)  # dynamic dims and their tracing sizes
    flops: int = 0  # nominal FLOPs (matrix work); 0 for memory-bound workloads
    peers: tuple = ("eager", "compile", "jax")
    optional_peers: tuple = ()  # run only when the time budget allows
    goal: str = ""
    note: str = ""
    # "bshd": JAX gets [B, H, S, D] inputs as [B, S, H, D] (its attention layout) and its
    # [B, S, H, D] result is transposed back before the check.
    jax_layout: str = ""
    uses_attention: bool = False  # JAX: try cuDNN attention first (JAX_ATTENTION_IMPL)

    # -- shapes ------------------------------------------------------------
    def shape(self, spec, dims=None):
        dims = self.dims if dims is None else dims
        return tuple(dims[d] if isinstance(d, str) else d for d in spec)

    def input_shapes(self, dims=None):
        return [self.shape(i.shape, dims) for i in self.inputs]

    def output_shapes(self, dims=None):
        return [self.shape(o.shape, dims) for o in self.outputs]

    def trace_dims(self):
        d = dict(self.dims)
        d.update(self.trace)
        return d

    # -- sizes -------------------------------------------------------------
    def bytes_moved(self, dims=None):
        """The fewest bytes: every input read once, every output written once."""
        total = 0
        for spec, shp in zip(self.inputs + self.outputs,
                             self.input_shapes(dims) + self.output_shapes(dims)):
            total += math.prod(shp) * torch.tensor([], dtype=spec.dtype).element_size()
        return total

    @property
    def memory_bound(self):
        return self.flops == 0

    # -- inputs ------------------------------------------------------------
    def make_inputs(self, device, seed=0, dims=None):
        """Seeded inputs (the same on every run of the same torch version and device)."""
        gen = torch.Generator(device=device)
        out = []
        for k, (spec, shp) in enumerate(zip(self.inputs, self.input_shapes(dims))):
            gen.manual_seed(seed * 1000 + k + 1)
            kind = spec.init[0]
            if kind == "tokens":
                t = torch.randint(0, spec.init[1], shp, generator=gen, device=device, dtype=I64)
            elif kind == "padding":
                rows, seq = shp
                least = max(1, int(spec.init[1] * seq))
                lengths = torch.randint(least, seq + 1, (rows, 1), generator=gen,
                                        device=device)
                t = (torch.arange(seq, device=device)[None, :] < lengths).to(I64)
            else:
                t = torch.randn(shp, generator=gen, device=device, dtype=F32)
                if kind == "normal":
                    t = t * spec.init[1]
                elif kind == "gamma":
                    t = 1.0 + 0.1 * t
                else:
                    raise ValueError(f"{self.name}: unknown init {spec.init}")
                t = t.to(spec.dtype)
            out.append(t.contiguous())
        return out


# ---------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------


def _exporting():
    return torch.onnx.is_in_onnx_export()


def attention(q, k, v, causal, bias=None):
    """softmax(q k^T / sqrt(d) [+ bias] [+ causal mask]) v over [B, H, S, D] tensors; `bias`
    broadcasts to the scores (a padding mask's [B, 1, 1, S])."""
    if hasattr(F, "scaled_dot_product_attention") and not _exporting():
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, is_causal=causal)
    d = int(q.shape[-1])
    s = torch.matmul(q, k.transpose(-2, -1)).float() * (1.0 / math.sqrt(d))
    if bias is not None:
        s = s + bias.float()
    if causal:
        n = q.shape[-2]
        mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(mask, float("-inf"))
    p = torch.softmax(s, dim=-1).to(q.dtype)
    return torch.matmul(p, v)


def _jax():
    import jax
    import jax.numpy as jnp
    return jax, jnp


def _jax_layer_norm(x, g, b, eps):
    """In float32, like torch's layer_norm on bf16 tensors; the result in x's type."""
    _, jnp = _jax()
    import jax.lax as lax
    xf = x.astype(jnp.float32)
    m = xf.mean(-1, keepdims=True)
    v = ((xf - m) ** 2).mean(-1, keepdims=True)
    y = (xf - m) * lax.rsqrt(v + eps) * g.astype(jnp.float32) + b.astype(jnp.float32)
    return y.astype(x.dtype)


# The implementation JAX's attention asks for: "cudnn" (fused flash attention) first; run.py
# falls back to None (JAX's choice, which picked XLA's unfused attention on the H200 with
# JAX 0.11) when cuDNN refuses a shape.
JAX_ATTENTION_IMPL = "cudnn"


def _jax_attention(q, k, v, causal):
    """q, k, v as [B, S, H, D] (JAX's layout)."""
    jax, _ = _jax()
    return jax.nn.dot_product_attention(q, k, v, is_causal=causal,
                                        implementation=JAX_ATTENTION_IMPL)


# ---------------------------------------------------------------------------
# Memory-bound blocks
# ---------------------------------------------------------------------------


def ln_gelu(x, gamma, beta):
    h = F.gelu(x) * 2.0 + 1.0
    return F.layer_norm(h, (int(gamma.shape[0]),), gamma, beta, 1e-5)


def _jax_ln_gelu():
    jax, _ = _jax()

    def fn(x, gamma, beta):
        return _jax_layer_norm(jax.nn.gelu(x, approximate=False) * 2.0 + 1.0, gamma, beta, 1e-5)
    return fn


def softmax(x):
    return torch.softmax(x, dim=-1)


def _jax_softmax():
    jax, _ = _jax()
    return lambda x: jax.nn.softmax(x, axis=-1)


def rms_norm(x, w):
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    return (y * w.float()).to(x.dtype)


def _jax_rms_norm():
    _, jnp = _jax()
    import jax.lax as lax

    def fn(x, w):
        xf = x.astype(jnp.float32)
        y = xf * lax.rsqrt((xf * xf).mean(-1, keepdims=True) + 1e-6)
        return (y * w.astype(jnp.float32)).astype(x.dtype)
    return fn


def gelu_add(a, b, r):
    return F.gelu(a + b) + r


def _jax_gelu_add():
    jax, _ = _jax()
    return lambda a, b, r: jax.nn.gelu(a + b, approximate=False) + r


# ---------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------


def gemm_gelu(x, w, b):
    return F.gelu(x @ w + b)


def _jax_gemm_gelu():
    jax, _ = _jax()
    return lambda x, w, b: jax.nn.gelu(x @ w + b, approximate=False)


def bottleneck_1x1(x, w1, w2):
    """The 1x1 convolutions of a ResNet bottleneck around its 3x3 one:
    relu(conv(relu(conv(x, w1)), w2) + x), NCHW."""
    return F.relu(F.conv2d(F.relu(F.conv2d(x, w1)), w2) + x)


def gemm(x, w):
    return x @ w


def _jax_gemm():
    return lambda x, w: x @ w


# ---------------------------------------------------------------------------
# Attention ([B, H, S, D] in, [B, H, S, D] out)
# ---------------------------------------------------------------------------


def attention_causal(q, k, v):
    return attention(q, k, v, True)


def attention_full(q, k, v):
    return attention(q, k, v, False)


def _jax_attention_bshd(causal):
    """JAX's own layout, [B, S, H, D]: run.py hands JAX its inputs transposed (outside the
    timed calls, see Workload.jax_layout) and transposes the result back for the check."""
    def build():
        return lambda q, k, v: _jax_attention(q, k, v, causal)
    return build


# ---------------------------------------------------------------------------
# BERT-base encoder layer (post-norm, GELU(erf), no mask) and GPT-2 small forward
# ---------------------------------------------------------------------------

BERT_HEADS = 12


def bert_layer(x, wqkv, bqkv, wo, bo, ln1_g, ln1_b, w1, b1, w2, b2, ln2_g, ln2_b):
    B, S, _ = x.shape
    D = int(wo.shape[0])
    H = BERT_HEADS
    qkv = (x @ wqkv + bqkv).reshape(B, S, 3, H, D // H).permute(2, 0, 3, 1, 4)
    a = attention(qkv[0], qkv[1], qkv[2], False).transpose(1, 2).reshape(B, S, D)
    h = F.layer_norm(x + (a @ wo + bo), (D,), ln1_g, ln1_b, 1e-12)
    f = F.gelu(h @ w1 + b1) @ w2 + b2
    return F.layer_norm(h + f, (D,), ln2_g, ln2_b, 1e-12)


def bert_layer_mask(x, mask, wqkv, bqkv, wo, bo, ln1_g, ln1_b, w1, b1, w2, b2, ln2_g, ln2_b):
    """bert_layer with a padding mask as transformers applies it: (1 - mask) times the
    type's lowest value, added to the scores of every head."""
    B, S, _ = x.shape
    D = int(wo.shape[0])
    H = BERT_HEADS
    bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
    qkv = (x @ wqkv + bqkv).reshape(B, S, 3, H, D // H).permute(2, 0, 3, 1, 4)
    a = attention(qkv[0], qkv[1], qkv[2], False, bias).transpose(1, 2).reshape(B, S, D)
    h = F.layer_norm(x + (a @ wo + bo), (D,), ln1_g, ln1_b, 1e-12)
    f = F.gelu(h @ w1 + b1) @ w2 + b2
    return F.layer_norm(h + f, (D,), ln2_g, ln2_b, 1e-12)


def _jax_bert_layer():
    jax, _ = _jax()

    def fn(x, wqkv, bqkv, wo, bo, ln1_g, ln1_b, w1, b1, w2, b2, ln2_g, ln2_b):
        B, S, D = x.shape
        H = BERT_HEADS
        qkv = (x @ wqkv + bqkv).reshape(B, S, 3, H, D // H)
        a = _jax_attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], False).reshape(B, S, D)
        h = _jax_layer_norm(x + (a @ wo + bo), ln1_g, ln1_b, 1e-12)
        f = jax.nn.gelu(h @ w1 + b1, approximate=False) @ w2 + b2
        return _jax_layer_norm(h + f, ln2_g, ln2_b, 1e-12)
    return fn


GPT2_LAYERS, GPT2_HEADS, GPT2_D, GPT2_VOCAB, GPT2_CTX = 12, 12, 768, 50257, 1024
GPT2_PER_LAYER = ("ln1_g", "ln1_b", "w_attn", "b_attn", "w_proj", "b_proj",
                  "ln2_g", "ln2_b", "w_fc", "b_fc", "w_out", "b_out")


def gpt2_forward(tokens, wte, wpe, *params):
    """tokens [B, S] -> logits [B, S, vocab]; params: 12 per layer, then ln_f's g and b."""
    B, S = tokens.shape
    D, H = GPT2_D, GPT2_HEADS
    pos = torch.arange(S, device=tokens.device)
    h = F.embedding(tokens, wte) + F.embedding(pos, wpe)
    n = len(GPT2_PER_LAYER)
    for i in range((len(params) - 2) // n):
        ln1_g, ln1_b, w_attn, b_attn, w_proj, b_proj, ln2_g, ln2_b, w_fc, b_fc, w_out, b_out = \
            params[i * n:(i + 1) * n]
        a = F.layer_norm(h, (D,), ln1_g, ln1_b, 1e-5)
        qkv = (a @ w_attn + b_attn).reshape(B, S, 3, H, D // H).permute(2, 0, 3, 1, 4)
        a = attention(qkv[0], qkv[1], qkv[2], True).transpose(1, 2).reshape(B, S, D)
        h = h + (a @ w_proj + b_proj)
        m = F.layer_norm(h, (D,), ln2_g, ln2_b, 1e-5)
        h = h + (F.gelu(m @ w_fc + b_fc, approximate="tanh") @ w_out + b_out)
    h = F.layer_norm(h, (D,), params[-2], params[-1], 1e-5)
    return h @ wte.t()


def _jax_gpt2_forward():
    jax, jnp = _jax()

    def fn(tokens, wte, wpe, *params):
        B, S = tokens.shape
        D, H = GPT2_D, GPT2_HEADS
        h = jnp.take(wte, tokens, axis=0) + wpe[:S][None]
        n = len(GPT2_PER_LAYER)
        for i in range((len(params) - 2) // n):
            ln1_g, ln1_b, w_attn, b_attn, w_proj, b_proj, ln2_g, ln2_b, w_fc, b_fc, w_out, b_out = \
                params[i * n:(i + 1) * n]
            a = _jax_layer_norm(h, ln1_g, ln1_b, 1e-5)
            qkv = (a @ w_attn + b_attn).reshape(B, S, 3, H, D // H)
            a = _jax_attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], True).reshape(B, S, D)
            h = h + (a @ w_proj + b_proj)
            m = _jax_layer_norm(h, ln2_g, ln2_b, 1e-5)
            h = h + (jax.nn.gelu(m @ w_fc + b_fc, approximate=True) @ w_out + b_out)
        h = _jax_layer_norm(h, params[-2], params[-1], 1e-5)
        return h @ wte.T
    return fn


def _gpt2_inputs():
    D, V = GPT2_D, GPT2_VOCAB
    ins = [Input("tokens", ("B", "S"), I64, ("tokens", V)),
           Input("wte", (V, D), BF16, ("normal", 0.02)),
           Input("wpe", (GPT2_CTX, D), BF16, ("normal", 0.01))]
    for i in range(GPT2_LAYERS):
        shapes = {"ln1_g": (D,), "ln1_b": (D,), "w_attn": (D, 3 * D), "b_attn": (3 * D,),
                  "w_proj": (D, D), "b_proj": (D,), "ln2_g": (D,), "ln2_b": (D,),
                  "w_fc": (D, 4 * D), "b_fc": (4 * D,), "w_out": (4 * D, D), "b_out": (D,)}
        for p in GPT2_PER_LAYER:
            if p.endswith("_g"):
                init = ("gamma",)
            elif p.startswith("b") or p.endswith("_b"):
                init = ("normal", 0.02)
            else:
                fan_in = shapes[p][0]
                # GPT-2 scales the residual projections by 1/sqrt(2 * layers).
                scale = 1.0 / math.sqrt(2 * GPT2_LAYERS) if p in ("w_proj", "w_out") else 1.0
                init = ("normal", scale / math.sqrt(fan_in))
            ins.append(Input(f"h{i}_{p}", shapes[p], BF16, init))
    ins += [Input("lnf_g", (D,), BF16, ("gamma",)), Input("lnf_b", (D,), BF16, ("normal", 0.02))]
    return ins


def _linear_flops(tokens, *shapes):
    return sum(2 * tokens * k * n for k, n in shapes)


def _attention_flops(b, h, s, d, causal):
    """Nominal: QK^T and PV, 4 b h s^2 d; half of it when causal."""
    f = 4 * b * h * s * s * d
    return f // 2 if causal else f


# ---------------------------------------------------------------------------
# The list
# ---------------------------------------------------------------------------


def _attention_workloads():
    out = []
    for d, s, b, h in ((128, 4096, 16, 16), (64, 4096, 16, 16), (128, 16384, 2, 16)):
        for causal in (False, True):
            name = f"attn_d{d}_s{s // 1024}k" + ("_causal" if causal else "")
            spec = ("B", "H", "S", d)
            out.append(Workload(
                name=name, group="attention",
                title=f"attention bf16 b{b} h{h} s{s} d{d}" + (" causal" if causal else ""),
                inputs=[Input(n, spec, BF16) for n in "qkv"],
                outputs=[Output("y", spec, BF16)],
                dims={"B": b, "H": h, "S": s}, trace={"B": 1, "S": 16},
                torch_fn=attention_causal if causal else attention_full,
                jax_builder=_jax_attention_bshd(causal), jax_layout="bshd",
                tol=1e-2, flops=_attention_flops(b, h, s, d, causal), uses_attention=True,
                peers=("sdpa", "sdpa_flash", "sdpa_cudnn", "jax"),
                goal=">= 1.0x torch SDPA (flash/cuDNN)",
                note="causal FLOPs counted as half"))
    return out


def all_workloads():
    bert_b, bert_s, bert_d = 32, 512, 768
    gpt_b, gpt_s = 8, 1024
    ws = [
        Workload(
            name="ln_gelu_f32", group="memory",
            title="layer_norm(gelu(x)*2+1) fp32 16384x4096",
            inputs=[Input("x", ("M", 4096), F32), Input("gamma", (4096,), F32, ("gamma",)),
                    Input("beta", (4096,), F32, ("normal", 0.1))],
            outputs=[Output("y", ("M", 4096), F32)],
            dims={"M": 16384}, trace={"M": 8},
            torch_fn=ln_gelu, jax_builder=_jax_ln_gelu, tol=1e-5,
            goal=">= 92% of copy bandwidth"),
        Workload(
            name="softmax_f32_4k", group="memory", title="softmax fp32 8192x4096",
            inputs=[Input("x", ("M", 4096), F32)], outputs=[Output("y", ("M", 4096), F32)],
            dims={"M": 8192}, trace={"M": 8},
            torch_fn=softmax, jax_builder=_jax_softmax, tol=1e-5,
            goal=">= 92% of copy bandwidth"),
        Workload(
            name="softmax_f32_32k", group="memory", title="softmax fp32 8192x32768",
            inputs=[Input("x", ("M", 32768), F32)], outputs=[Output("y", ("M", 32768), F32)],
            dims={"M": 8192}, trace={"M": 8},
            torch_fn=softmax, jax_builder=_jax_softmax, tol=1e-5,
            goal=">= 92% of copy bandwidth"),
        Workload(
            name="rmsnorm_bf16", group="memory", title="RMSNorm bf16 16384x4096",
            inputs=[Input("x", ("M", 4096), BF16), Input("w", (4096,), BF16, ("gamma",))],
            outputs=[Output("y", ("M", 4096), BF16)],
            dims={"M": 16384}, trace={"M": 8},
            torch_fn=rms_norm, jax_builder=_jax_rms_norm, tol=1e-2,
            goal=">= 92% of copy bandwidth"),
        Workload(
            name="gelu_add_bf16", group="memory", title="gelu(a+b)+r bf16 16384x4096",
            inputs=[Input(n, ("M", 4096), BF16) for n in ("a", "b", "r")],
            outputs=[Output("y", ("M", 4096), BF16)],
            dims={"M": 16384}, trace={"M": 8},
            torch_fn=gelu_add, jax_builder=_jax_gelu_add, tol=1e-2,
            goal=">= 92% of copy bandwidth"),
        Workload(
            name="gemm_gelu_bf16", group="gemm", title="gelu(x@w+b) bf16 8192x4096x4096",
            inputs=[Input("x", ("M", 4096), BF16), Input("w", (4096, 4096), BF16, ("normal", 1 / 64)),
                    Input("b", (4096,), BF16, ("normal", 0.1))],
            outputs=[Output("y", ("M", 4096), BF16)],
            dims={"M": 8192}, trace={"M": 8},
            torch_fn=gemm_gelu, jax_builder=_jax_gemm_gelu, tol=1e-2,
            flops=2 * 8192 * 4096 * 4096,
            peers=("eager", "compile", "autotune", "jax"), optional_peers=("autotune_graphs",),
            goal=">= 1.2x Inductor (default and max-autotune)"),
        Workload(
            name="gemm_bf16", group="gemm", title="matmul bf16 8192x8192x8192",
            inputs=[Input("x", ("M", 8192), BF16), Input("w", (8192, 8192), BF16, ("normal", 1 / 90.5))],
            outputs=[Output("y", ("M", 8192), BF16)],
            dims={"M": 8192}, trace={"M": 8},
            torch_fn=gemm, jax_builder=_jax_gemm, tol=1e-2, flops=2 * 8192 ** 3,
            optional_peers=("autotune",),
            goal=">= 1.0x torch.matmul (cuBLAS)"),
    ]
    ws += _attention_workloads()
    for size, channels, inner in ((56, 256, 64), (28, 512, 128), (14, 1024, 256),
                                  (7, 2048, 512)):
        ws.append(Workload(
            name=f"conv1x1_s{size}_f16", group="model",
            title=f"ResNet-50 bottleneck 1x1 convolutions f16 b32 {channels}x{size}x{size}",
            inputs=[Input("x", ("B", channels, size, size), F16),
                    Input("w1", (inner, channels, 1, 1), F16, ("normal", channels ** -0.5)),
                    Input("w2", (channels, inner, 1, 1), F16, ("normal", inner ** -0.5))],
            outputs=[Output("y", ("B", channels, size, size), F16)],
            dims={"B": 32}, trace={"B": 2},
            torch_fn=bottleneck_1x1, jax_builder=None, tol=2e-2,
            peers=("eager", "compile"),
            flops=2 * 2 * 32 * size * size * channels * inner,
            goal=">= 1.0x torch (cuDNN)"))
    D = bert_d
    bert_tokens = bert_b * bert_s
    ws.append(Workload(
        name="bert_layer_bf16", group="model",
        title="BERT-base encoder layer bf16 b32 s512",
        inputs=[Input("x", ("B", "S", D), BF16),
                Input("wqkv", (D, 3 * D), BF16, ("normal", D ** -0.5)),
                Input("bqkv", (3 * D,), BF16, ("normal", 0.02)),
                Input("wo", (D, D), BF16, ("normal", D ** -0.5)),
                Input("bo", (D,), BF16, ("normal", 0.02)),
                Input("ln1_g", (D,), BF16, ("gamma",)), Input("ln1_b", (D,), BF16, ("normal", 0.02)),
                Input("w1", (D, 4 * D), BF16, ("normal", D ** -0.5)),
                Input("b1", (4 * D,), BF16, ("normal", 0.02)),
                Input("w2", (4 * D, D), BF16, ("normal", (4 * D) ** -0.5)),
                Input("b2", (D,), BF16, ("normal", 0.02)),
                Input("ln2_g", (D,), BF16, ("gamma",)), Input("ln2_b", (D,), BF16, ("normal", 0.02))],
        outputs=[Output("y", ("B", "S", D), BF16)],
        dims={"B": bert_b, "S": bert_s}, trace={"B": 1, "S": 16},
        torch_fn=bert_layer, jax_builder=_jax_bert_layer, tol=2e-2, uses_attention=True,
        flops=_linear_flops(bert_tokens, (D, 3 * D), (D, D), (D, 4 * D), (4 * D, D))
        + _attention_flops(bert_b, BERT_HEADS, bert_s, D // BERT_HEADS, False),
        goal=">= 1.2x the fastest peer"))
    mask_b, mask_s = 32, 128
    mask_tokens = mask_b * mask_s
    ws.append(Workload(
        name="bert_layer_mask_bf16", group="model",
        title="BERT-base encoder layer with a padding mask bf16 b32 s128",
        inputs=[Input("x", ("B", "S", D), BF16), Input("mask", ("B", "S"), I64, ("padding", 0.5)),
                *[i for i in ws[-1].inputs[1:]]],
        outputs=[Output("y", ("B", "S", D), BF16)],
        dims={"B": mask_b, "S": mask_s}, trace={"B": 2, "S": 64},
        torch_fn=bert_layer_mask, jax_builder=None, tol=2e-2, uses_attention=True,
        peers=("eager", "compile"), optional_peers=("autotune_graphs",),
        flops=_linear_flops(mask_tokens, (D, 3 * D), (D, D), (D, 4 * D), (4 * D, D))
        + _attention_flops(mask_b, BERT_HEADS, mask_s, D // BERT_HEADS, False),
        goal=">= 1.2x the fastest peer",
        note="the mask's padded keys still counted in the FLOPs"))
    D = GPT2_D
    gpt_tokens = gpt_b * gpt_s
    ws.append(Workload(
        name="gpt2_small_bf16", group="model",
        title="GPT-2 small forward bf16 b8 s1024 (logits)",
        inputs=_gpt2_inputs(),
        outputs=[Output("logits", ("B", "S", GPT2_VOCAB), BF16)],
        dims={"B": gpt_b, "S": gpt_s}, trace={"B": 1, "S": 16},
        torch_fn=gpt2_forward, jax_builder=_jax_gpt2_forward, tol=3e-2, uses_attention=True,
        flops=GPT2_LAYERS * (_linear_flops(gpt_tokens, (D, 3 * D), (D, D), (D, 4 * D), (4 * D, D))
                             + _attention_flops(gpt_b, GPT2_HEADS, gpt_s, D // GPT2_HEADS, True))
        + _linear_flops(gpt_tokens, (D, GPT2_VOCAB)),
        goal=">= 1.2x the fastest peer"))
    return ws


# Real models (real_models.py): torchvision architectures exported with their weights, at batch 1
# and a throughput batch. Not in WORKLOADS: `run.py --suite real` runs them, and their ONNX files
# (20-170 MB) are made by `export_onnx.py --suite real`, never committed.
# Nominal multiply-accumulates per image (torchvision's model cards).
REAL_GMACS = {"resnet50": 4.09, "convnext_tiny": 4.46, "efficientnet_b0": 0.39,
              "mobilenet_v3_large": 0.22, "vit_b_16": 17.56, "swin_t": 4.49,
              "resnext50_32x4d": 4.23, "regnet_y_400mf": 0.40}
REAL_BATCHES = (1, 32)


def real(arch, batch, **fields):
    """The real-model workload `arch`_b`batch` (real_models.py): the module's forward as the
    peers' function, checked within the bf16 tolerance, against eager torch and
    torch.compile."""
    import real_models as R
    return Workload(name=f"{arch}_b{batch}", group="real", torch_fn=R.forward_fn(arch),
                    jax_builder=None, tol=3e-2, peers=("eager", "compile", "graphs"),
                    goal=">= 1.0x the fastest torch.compile mode", **fields)


def real_workloads():
    import real_models as R
    ws = []
    for arch in R.ARCHS:
        for b in REAL_BATCHES:
            ws.append(real(
                arch, b,
                title=f"torchvision {arch} f16 b{b} (224x224, weights as initializers)",
                inputs=[Input("x", ("B", 3, 224, 224), F16)],
                outputs=[Output("y", ("B", 1000), F16)],
                dims={"B": b}, flops=int(2 * REAL_GMACS[arch] * 1e9 * b),
                note="real_models.py: BatchNorm folded by the exporter; peers channels-last"
                if R.ARCHS[arch][1] else "real_models.py"))
    ws += _real_text_workloads(R)
    return ws


def _layer_flops(tokens, d, ff, kv=None, gated=False):
    """A transformer layer's products: the q/k/v and output projections and the MLP."""
    kv = d if kv is None else kv
    mlp = ((d, ff), (d, ff), (ff, d)) if gated else ((d, ff), (ff, d))
    return _linear_flops(tokens, (d, d), (d, kv), (d, kv), (d, d), *mlp)


def _real_text_workloads(R):
    """The text and audio models of real_models.py (transformers architectures; the decode step
    in the zoo's plain-torch form), each at batch 1 and a throughput batch. Exported on the GPU
    machine, where transformers is: `export_onnx.py --suite real --only NAME ...`."""
    ws = []
    L = R.LLAMA
    hd = L["d"] // L["heads"]
    kvd = L["kv_heads"] * hd
    for b in (1, 32):
        s, d = 128, 768
        ws.append(real(
            "bert_base", b,
            title=f"transformers BERT-base f16 b{b} s{s} with a padding mask",
            inputs=[Input("input_ids", ("B", "S"), I64, ("tokens", 30522)),
                    Input("attention_mask", ("B", "S"), I64, ("padding", 0.5))],
            outputs=[Output("last_hidden_state", ("B", "S", d), F16)],
            dims={"B": b, "S": s},
            flops=12 * (_layer_flops(b * s, d, 4 * d) + _attention_flops(b, 12, s, 64, False)),
            note="real_models.py: transformers BertModel, exported on the GPU machine"))
    for b in (1, 8):
        s, d, vocab = 1024, 768, 50257
        ws.append(real(
            "gpt2", b,
            title=f"transformers GPT-2 small f16 b{b} s{s} prefill (logits)",
            inputs=[Input("input_ids", ("B", "S"), I64, ("tokens", vocab))],
            outputs=[Output("logits", ("B", "S", vocab), F16)],
            dims={"B": b, "S": s},
            flops=12 * (_layer_flops(b * s, d, 4 * d) + _attention_flops(b, 12, s, 64, True))
            + _linear_flops(b * s, (d, vocab)),
            note="real_models.py: transformers GPT2LMHeadModel, exported on the GPU machine"))
    for b in (1, 4):
        s = 1024
        ws.append(real(
            "llama_prefill", b,
            title=f"transformers Llama-style f16 b{b} s{s} prefill with a padding mask "
                  f"({L['layers']} layers, d {L['d']}, GQA {L['heads']}/{L['kv_heads']})",
            inputs=[Input("input_ids", ("B", "S"), I64, ("tokens", L["vocab"])),
                    Input("attention_mask", ("B", "S"), I64, ("padding", 0.5))],
            outputs=[Output("last_hidden_state", ("B", "S", L["d"]), F16)],
            dims={"B": b, "S": s},
            flops=L["layers"] * (_layer_flops(b * s, L["d"], L["ff"], kvd, True)
                                 + _attention_flops(b, L["heads"], s, hd, True)),
            note="real_models.py: transformers LlamaModel, exported on the GPU machine"))
    for b in (1, 8):
        past = 1024
        cache = [f"{kv}_{n}" for n in range(L["layers"]) for kv in "kv"]
        ws.append(real(
            "llama_decode", b,
            title=f"Llama-style f16 decode step b{b}, KV cache of {past} positions in and out "
                  f"({L['layers']} layers, d {L['d']}, GQA {L['heads']}/{L['kv_heads']})",
            inputs=[Input("ids", ("B", 1), I64, ("tokens", L["vocab"]))]
            + [Input(f"past_{c}", ("B", L["kv_heads"], "P", hd), F16) for c in cache],
            outputs=[Output("logits", ("B", 1, L["vocab"]), F16)]
            + [Output(f"present_{c}", ("B", L["kv_heads"], "T", hd), F16) for c in cache],
            dims={"B": b, "P": past, "T": past + 1},
            flops=L["layers"] * (_layer_flops(b, L["d"], L["ff"], kvd, True)
                                 + 4 * b * L["heads"] * (past + 1) * hd)
            + _linear_flops(b, (L["d"], L["vocab"])),
            note="real_models.py: models/zoo's plain-torch decoder with an LM head"))
    for b in (1, 16):
        frames, d = 3000, 512
        ws.append(real(
            "whisper_encoder", b,
            title=f"transformers Whisper-base encoder f16 b{b} (80 x {frames} features)",
            inputs=[Input("input_features", ("B", 80, frames), F16)],
            outputs=[Output("last_hidden_state", ("B", frames // 2, d), F16)],
            dims={"B": b},
            flops=6 * (_layer_flops(b * frames // 2, d, 4 * d)
                       + _attention_flops(b, 8, frames // 2, 64, False)),
            note="real_models.py: transformers WhisperEncoder, exported on the GPU machine"))
    return ws


WORKLOADS = all_workloads()
REAL = real_workloads()
BY_NAME = {w.name: w for w in WORKLOADS + REAL}
