#!/usr/bin/env python3
"""Writes row-reduction cases in the ONNX backend-test layout for
test/Gpu/packed-rows.test: norms and softmaxes over rows short enough that
the cuda target computes one row block per warp, several to a CUDA block
(docs/gpu.md, "Short rows"), and one whose row blocks do not pack.

Usage: make_row_cases.py OUT_DIR

ln_residual_bf16  s = a + b, y = LayerNormalization(s, g, beta) over rows of
                  768 bf16 ([4, 16, 768]: 64 row blocks, 4 per CUDA block),
                  both outputs: GPT-2's residual stream and its norm.
ln_stats_f32      LayerNormalization of f32 [24, 512] with its Mean and
                  InvStdDev outputs (one value per row, written after the
                  warp's shuffles).
softmax_f32       Softmax of f32 [18, 512] (3 row blocks per CUDA block).
rmsnorm_bf16      x / sqrt(mean(x^2) + eps) * w over bf16 [14, 768], as
                  Llama's code writes it (2 row blocks per CUDA block).
ln_odd_bf16       LayerNormalization of bf16 [13, 768]: 13 row blocks do not
                  pack, one CUDA block each.
embed_ln_bf16     GPT-2's embeddings: s = wte[tokens] + wpe[positions] (two
                  Gathers, tokens [4, 64] with negative ones among them,
                  positions a constant) and y = LayerNormalization(s) over
                  768 bf16, both outputs: on the GPU the gathers and their
                  sum are one all-parallel kernel, the norm a row kernel.

Rows long enough for a CUDA block each, whose reductions combine the warps'
values through shared memory (docs/gpu.md, "Rows in registers"):

ln_stats_wide_f32 LayerNormalization of f32 [6, 4096] with its Mean and
                  InvStdDev outputs (512 threads; the statistics are values
                  every thread knows, written by thread 0 at the end).
softmax_wide_f32  Softmax of f32 [3, 32768] (1024 threads: 32 warps, a value
                  per lane in the second round of shuffles).
rmsnorm_wide_bf16 The RMSNorm above over bf16 [5, 4096] (256 threads).

The references are float64 computations on the inputs (bf16 inputs rounded
first; a bf16 intermediate the model rounds, rounded too), stored in the
outputs' types.
"""

import sys

import numpy as np
from onnx import helper

from onnx_cases import BF16, F32, I64, bf16, save_case, tensor


def layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    inv = 1 / np.sqrt(var + eps)
    return (x - mean) * inv * g + b, mean, inv


def rms_nodes():
    """x / sqrt(mean(x^2) + eps) * w, x bf16 computed in f32, as Llama's code
    writes it."""
    two, eps = np.float32(2), np.float32(1e-6)
    return [helper.make_node("Cast", ["x"], ["xf"], name="to_f32", to=F32),
            helper.make_node("Constant", [], ["two"], name="two",
                             value=tensor(two, "two", F32)),
            helper.make_node("Constant", [], ["eps"], name="eps",
                             value=tensor(eps, "eps", F32)),
            helper.make_node("Pow", ["xf", "two"], ["sq"], name="square"),
            helper.make_node("ReduceMean", ["sq"], ["ms"], name="mean",
                             axes=[-1], keepdims=1),
            helper.make_node("Add", ["ms", "eps"], ["mse"], name="plus_eps"),
            helper.make_node("Sqrt", ["mse"], ["rms"], name="root"),
            helper.make_node("Div", ["xf", "rms"], ["n"], name="normalize"),
            helper.make_node("Cast", ["n"], ["nb"], name="to_bf16", to=BF16),
            helper.make_node("Mul", ["nb", "w"], ["y"], name="scale")]


def ln_stats_case(out, name, rng, rows, cols, weights_as_inputs):
    """LayerNormalization of f32 [rows, cols] with its Mean and InvStdDev
    outputs; its scale and bias model inputs or initializers."""
    x = np.float32(3 * rng.standard_normal((rows, cols)) + 1).astype(np.float64)
    g = np.float32(1 + 0.1 * rng.standard_normal(cols)).astype(np.float64)
    beta = np.float32(0.1 * rng.standard_normal(cols)).astype(np.float64)
    y, mean, inv = layer_norm(x, g, beta)
    weights = [("g", g, F32), ("beta", beta, F32)]
    save_case(out, name,
              [helper.make_node("LayerNormalization", ["x", "g", "beta"],
                                ["y", "mean", "inv"], name="ln", axis=-1,
                                epsilon=1e-5)],
              [("x", x, F32)] + (weights if weights_as_inputs else []),
              [("y", y, F32), ("mean", mean, F32), ("inv", inv, F32)],
              [] if weights_as_inputs else weights)


def softmax_case(out, name, rng, rows, cols):
    """Softmax over the last axis of f32 [rows, cols]."""
    x = np.float32(4 * rng.standard_normal((rows, cols))).astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    save_case(out, name,
              [helper.make_node("Softmax", ["x"], ["y"], name="softmax",
                                axis=-1)],
              [("x", x, F32)], [("y", e / e.sum(axis=-1, keepdims=True), F32)])


def rmsnorm_case(out, name, rng, rows, cols):
    """rms_nodes over bf16 [rows, cols], its weight an initializer."""
    x = bf16(rng.standard_normal((rows, cols)))
    w = bf16(1 + 0.1 * rng.standard_normal(cols))
    ms = (x * x).mean(axis=-1, keepdims=True)
    save_case(out, name, rms_nodes(), [("x", x, BF16)],
              [("y", bf16(x / np.sqrt(ms + 1e-6)) * w, BF16)],
              [("w", w, BF16)])


def main(out):
    rng = np.random.default_rng(11)

    a = bf16(rng.standard_normal((4, 16, 768)))
    b = bf16(0.5 * rng.standard_normal((4, 16, 768)) + 0.25)
    g = bf16(1 + 0.1 * rng.standard_normal(768))
    beta = bf16(0.1 * rng.standard_normal(768))
    s = bf16(a + b)
    y, _, _ = layer_norm(s, g, beta)
    save_case(out, "ln_residual_bf16",
              [helper.make_node("Add", ["a", "b"], ["s"], name="residual"),
               helper.make_node("LayerNormalization", ["s", "g", "beta"],
                                ["y"], name="ln", axis=-1, epsilon=1e-5)],
              [("a", a, BF16), ("b", b, BF16)],
              [("s", s, BF16), ("y", y, BF16)],
              [("g", g, BF16), ("beta", beta, BF16)])

    ln_stats_case(out, "ln_stats_f32", rng, 24, 512, weights_as_inputs=True)

    softmax_case(out, "softmax_f32", rng, 18, 512)
    rmsnorm_case(out, "rmsnorm_bf16", rng, 14, 768)

    x = bf16(rng.standard_normal((13, 768)))
    g = bf16(1 + 0.1 * rng.standard_normal(768))
    beta = bf16(0.1 * rng.standard_normal(768))
    y, _, _ = layer_norm(x, g, beta)
    save_case(out, "ln_odd_bf16",
              [helper.make_node("LayerNormalization", ["x", "g", "beta"],
                                ["y"], name="ln", axis=-1, epsilon=1e-5)],
              [("x", x, BF16)], [("y", y, BF16)],
              [("g", g, BF16), ("beta", beta, BF16)])

    vocab, seq = 500, 64
    wte = bf16(rng.standard_normal((vocab, 768)))
    wpe = bf16(0.1 * rng.standard_normal((seq, 768)))
    tokens = rng.integers(-vocab, vocab, (4, seq))
    positions = np.arange(seq)
    g = bf16(1 + 0.1 * rng.standard_normal(768))
    beta = bf16(0.1 * rng.standard_normal(768))
    s = bf16(wte[tokens] + wpe[positions])
    y, _, _ = layer_norm(s, g, beta)
    save_case(out, "embed_ln_bf16",
              [helper.make_node("Gather", ["wte", "tokens"], ["te"],
                                name="token_embedding", axis=0),
               helper.make_node("Gather", ["wpe", "positions"], ["pe"],
                                name="position_embedding", axis=0),
               helper.make_node("Add", ["te", "pe"], ["s"], name="sum"),
               helper.make_node("LayerNormalization", ["s", "g", "beta"],
                                ["y"], name="ln", axis=-1, epsilon=1e-5)],
              [("tokens", tokens, I64), ("wte", wte, BF16),
               ("wpe", wpe, BF16)],
              [("s", s, BF16), ("y", y, BF16)],
              [("positions", positions, I64), ("g", g, BF16),
               ("beta", beta, BF16)])

    ln_stats_case(out, "ln_stats_wide_f32", rng, 6, 4096,
                  weights_as_inputs=False)

    softmax_case(out, "softmax_wide_f32", rng, 3, 32768)
    rmsnorm_case(out, "rmsnorm_wide_bf16", rng, 5, 4096)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_row_cases.py OUT_DIR")
    main(sys.argv[1])
