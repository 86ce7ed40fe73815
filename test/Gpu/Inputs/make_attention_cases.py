#!/usr/bin/env python3
"""Writes attention cases for the cuda target's fused flash-attention kernel.

Usage: make_attention_cases.py OUT_DIR [--small]

Each case is OUT_DIR/<case>/model.onnx plus test_data_set_0/input_{0,1,2}.pb
(q, k, v) and output_0.pb, the ONNX backend-test layout that `strata
conformance` and strata-run-cases read. Every model computes

    O = MatMul(Softmax(mask(scale(MatMul(q, Transpose(k))))), v)

in the forms exporters write it (opset 17), with q, k, v as graph inputs and
the scale and mask built from Constant and ConstantOfShape nodes. Shapes are
[B, H, S|T, D] unless stated; B, H = 2, 3 (1, 2 with --small, for quick CPU
runs: S, T and D, which decide whether the kernel applies, stay the same).
About 30 MB in all (11 MB with --small).

Fused (Q, K, V of one type f16 or bf16, same batch dims, D in {64, 128}, S
and T multiples of 64):
bf16_d64           the torch export: MatMul(q, Transpose(k)) -> Cast f32 ->
                   Mul 0.125 -> Softmax -> Cast bf16 -> MatMul(v); S=T=256
bf16_d64_causal    the same with the causal mask torch writes:
                   Where(Trilu(ConstantOfShape(true [S, T]), k=1, upper),
                   -inf, x): key j is masked when j - i >= 1
bf16_d64_long      S=T=1152: past 1024 rows the kernel's blocks take 192
                   query rows at D=64 with wgmma, 128 without (64
                   otherwise), 6 or 9 of them per head
bf16_d64_long_causal the same, causal
bf16_d64_s1280     S=T=1280: with wgmma (sm_90a) a block takes 192 query rows
                   at D=64 (three consumer warpgroups), 7 per head, the last
                   ending 64 rows past the sequence (a consumer idle)
bf16_d64_s1216_causal S=T=1216, causal: the last block's 192 rows end 128 past
                   the sequence (two consumers idle); 64-key steps (1216 is
                   no multiple of 128)
bf16_d128          D=128, S=T=192 (three 64-row tiles), scale 1/sqrt(128)
bf16_d128_causal   the same, causal
f16_d64_causal     bf16_d64_causal in f16 (Cast to f32 and back to f16)
bf16_nocast_div    no Casts: scale as Div by a bf16 8.0, Softmax in bf16
bf16_causal_lower  the keep-lower mask Where(Trilu(ones, upper=0), x, -inf)
                   with Trilu's k left out (0: keeps j <= i)
bf16_s128_t320     S != T: 128 queries over 320 keys (five key tiles)
bf16_causal_k2     Trilu k=2 upper: masks j - i >= 2, so keeps j <= i + 1
bf16_causal_negscale causal with a negative scale, Mul -0.125 (the kernel
                   scales before it masks: masked scores stay -inf)
bf16_3d_causal     heads folded into the batch: [B*H, 256, 64], Transpose
                   perm [0, 2, 1], causal
bf16_packed_causal one input qkv [B, S, 3*H*D] split into heads as BERT and
                   GPT-2 export it (Reshape [B, S, 3, H, D], Transpose
                   [2, 0, 3, 1, 4], Gather 0, 1, 2) and the heads merged
                   back (Transpose [0, 2, 1, 3], Reshape [B, S, H*D]):
                   the kernel reads and writes through those layout ops;
                   causal, D=64, S=256
bf16_packed_d128   the same, D=128, S=192, not causal

At D=128 with S a multiple of 128 the kernel is warp-specialized (two
consumer warpgroups of 64 rows, a producer warp loading K and V by TMA into
rings of 4 stages on sm_90a). They take 1 to 10 key steps, most of them
more steps than the rings have stages, so that the rings wrap:
bf16_d128_s384           S=T=384 (6 key steps), scale 1/sqrt(128)
bf16_d128_s384_causal    the same, causal
f16_d128_causal_k2       f16, S=T=256, Trilu k=2 upper (keeps j <= i + 1)
bf16_d128_s128_t640      S != T: 128 queries over 640 keys (10 key steps)
bf16_d128_t64            128 queries over 64 keys: a single key step
bf16_packed_d128_causal  the packed QKV split of bf16_packed_causal at
                         D=128, S=384, causal

Padded to the kernel's shapes (strata-pad-attention: Q, K, V padded with
zeros, keys past the sequence masked, the result sliced back):
pad_d32                  D=32 (scale 1/sqrt(32)), padded to 64
pad_s100_causal          S=T=100, padded to 128 (causal: no key mask needed)
pad_s197                 S=T=197 (ViT's tokens), padded to 256
pad_f16_d32_s49          f16, S=T=49 at D=32 (Swin's windows) to 64 x 64
pad_f16_d80_s200_causal  f16, D=80 to 128, S=T=200 to 256, causal
pad_s100_t150_learned    100 queries over 150 keys and a learned [1, H, S, T]
                         bias, padded with 0 along rows, -inf along keys
pad_s100_keymask         transformers' padding mask at S=T=100
pad_sdpa_s100_boolmask   torch's SDPA export with a boolean mask, S=T=100

torch's dynamo exporter writes Kᵀ through the batched product's reshapes
(graph canonicalization makes it one transpose of K, TensorOps.cpp):
f16_dynamo_boolmask       its SDPA with a boolean mask, S=T=128
f16_dynamo_gqa4_boolmask  the same with 8 query heads over 2 K/V heads,
                          the repeat merged straight into the product's
                          batch
f16_dynamo_causal         its causal mask built from constant positions
                          (LessOrEqual, And, Where(c, 0, lowest)) and added,
                          which strata-causal-masks makes the causal Where
f16_dynamo_causal_k1      the same keeping one key past the diagonal
pad_f16_dynamo_causal_s100 the same at S=T=100, then padded

fallback_decode_gqa4      one query row of 8 heads over 2 K/V heads, as
                          transformers repeats them: the kernel does not take
                          it; strata-fold-head-repeats folds the repeat into
                          the query rows of the two products
pad_gqa2_s100_causal     grouped-query attention at S=T=100, causal
pad_packed_s100          the packed QKV split at S=T=100

Not fused, run through the separate kernels, and must still be right:
fallback_decode    one query row over 256 keys: padding would be 64x the work
fallback_f32       f32 q, k, v [1, H, 128, 64] (no Casts)
fallback_bcast     k and v [1, H, T, D] broadcast over q's batch [B, H, S, D]

Inputs are seeded N(0, 1) draws, q's scaled by 0.75 (scores of standard
deviation 0.75 after the scale: a softmax neither flat nor one-hot, with
room for rounding the scores to bf16), rounded to the model's type. The
reference is computed in float64 from the rounded inputs as the graph says
(Trilu's upper form keeps j - i >= k, its lower form j - i <= k), without
rounding in between, and stored in the output type.

The script checks each case at the runners' tolerance (rtol = atol = 2e-2):
it must tell the reference apart from the usual kernel bugs (no scale, no
mask, the mask's diagonal off by one, the last key tile or the last query
tile dropped, each 64-key tile's softmax taken against its own maximum as an
online softmax that never rescales would, batch entries mixed up), and the
graph computed with every intermediate rounded to its type, as a chain of
separate kernels computes it, must stay within half the tolerance. It prints
how much of the tolerance that rounding uses and the weakest bug's margin.
"""

import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnx_cases import BF16, F16, F32, I64, round_to, tensor, write_pb

TOL = 2e-2


# ---------------------------------------------------------------------------
# Cases.

class Case:
    """One attention graph. `cast`: Cast the scores to f32 and the
    probabilities back (the torch export), else the chain runs in `dtype`.
    `scale`: (op, value) with op "Mul" or "Div", or None. `mask`: None,
    ("upper", k) for Where(Trilu(ones, k, upper=1), -inf, x), or ("lower", k)
    for Where(Trilu(ones, k, upper=0), x, -inf) (k None: the input left
    out)."""

    def __init__(self, name, dtype, q_shape, kv_shape, cast=True,
                 scale=("Mul", 0.125), mask=None, packed=False, bias=None,
                 sdpa=False, gqa=1):
        self.packed = packed  # one qkv input, heads split and merged
        # None, or an additive bias on the scores after the scale:
        # ("keys", lengths) transformers' padding mask, an int64 [B, T]
        # input of ones then zeros (keys j >= lengths[b] dropped) made
        # (1 - mask) * lowest in the graph, [B, 1, 1, T]; ("left", pads)
        # the same with the first pads[b] keys dropped; ("bool", p) a bool
        # [B, 1, S, T] input (True keeps, each kept with probability p,
        # query row 1 of batch 0 dropped whole) made Where(mask, 0, -inf),
        # with torch's Where(IsNaN(P), 0, P) after the softmax; ("learned",
        # None) a float [1, H, S, T] input added as it is.
        self.bias = bias
        # torch's export of scaled_dot_product_attention: Q and Kᵀ each
        # multiplied by the scale's square root before the product, and K
        # given as [B, T, H, D], transposed to [B, H, D, T] at once (True);
        # or, as the dynamo exporter writes it ("batched"), K [B, H, T, D]
        # reshaped to [B*H, T, D], transposed and reshaped to [B, H, D, T]
        # (with gqa, the repeat's [B, Hkv, gqa, T, D] merged straight
        # into B*H).
        self.sdpa = sdpa
        # Grouped-query attention: k and v [B, Hkv, T, D] with Hkv = H / gqa,
        # each head repeated gqa times as transformers' repeat_kv writes it,
        # Reshape(Expand(Unsqueeze(x, 2), [B, Hkv, gqa, T, D]), [B, H, T, D]).
        self.gqa = gqa
        self.name = name
        self.dtype = dtype
        self.q_shape = list(q_shape)
        self.kv_shape = list(kv_shape)
        self.cast = cast
        self.scale = scale
        self.mask = mask

    @property
    def s(self):
        return self.q_shape[-2]

    @property
    def t(self):
        return self.kv_shape[-2]

    @property
    def out_shape(self):
        if self.gqa > 1:
            return self.q_shape[:-1] + [self.kv_shape[-1]]
        batch = np.broadcast_shapes(tuple(self.q_shape[:-2]),
                                    tuple(self.kv_shape[:-2]))
        return list(batch) + [self.s, self.kv_shape[-1]]

    @property
    def score_type(self):
        """The type Softmax, the scale and the mask work in."""
        return F32 if self.cast else self.dtype

    def scale_value(self):
        """The scale constant as stored in the model."""
        return round_to(self.scale[1], self.score_type)


def cases(small):
    b = [1, 2] if small else [2, 3]
    r = 1.0 / math.sqrt(128)
    causal = ("upper", 1)
    return [
        Case("bf16_d64", BF16, b + [256, 64], b + [256, 64]),
        Case("bf16_d64_causal", BF16, b + [256, 64], b + [256, 64],
             mask=causal),
        Case("bf16_d64_long", BF16, b + [1152, 64], b + [1152, 64]),
        Case("bf16_d64_long_causal", BF16, b + [1152, 64], b + [1152, 64],
             mask=causal),
        Case("bf16_d64_s1280", BF16, b + [1280, 64], b + [1280, 64]),
        Case("bf16_d64_s1216_causal", BF16, b + [1216, 64], b + [1216, 64],
             mask=causal),
        Case("bf16_d128", BF16, b + [192, 128], b + [192, 128],
             scale=("Mul", r)),
        Case("bf16_d128_causal", BF16, b + [192, 128], b + [192, 128],
             scale=("Mul", r), mask=causal),
        Case("f16_d64_causal", F16, b + [256, 64], b + [256, 64],
             mask=causal),
        Case("bf16_nocast_div", BF16, b + [256, 64], b + [256, 64],
             cast=False, scale=("Div", 8.0)),
        Case("bf16_causal_lower", BF16, b + [256, 64], b + [256, 64],
             mask=("lower", None)),
        Case("bf16_s128_t320", BF16, b + [128, 64], b + [320, 64]),
        Case("bf16_causal_k2", BF16, b + [256, 64], b + [256, 64],
             mask=("upper", 2)),
        Case("bf16_causal_negscale", BF16, b + [256, 64], b + [256, 64],
             scale=("Mul", -0.125), mask=causal),
        Case("bf16_3d_causal", BF16, [b[0] * b[1], 256, 64],
             [b[0] * b[1], 256, 64], mask=causal),
        Case("bf16_packed_causal", BF16, b + [256, 64], b + [256, 64],
             mask=causal, packed=True),
        Case("bf16_packed_d128", BF16, b + [192, 128], b + [192, 128],
             scale=("Mul", r), packed=True),
        Case("bf16_d128_s384", BF16, b + [384, 128], b + [384, 128],
             scale=("Mul", r)),
        Case("bf16_d128_s384_causal", BF16, b + [384, 128], b + [384, 128],
             scale=("Mul", r), mask=causal),
        Case("f16_d128_causal_k2", F16, b + [256, 128], b + [256, 128],
             scale=("Mul", r), mask=("upper", 2)),
        Case("bf16_d128_s128_t640", BF16, b + [128, 128], b + [640, 128],
             scale=("Mul", r)),
        Case("bf16_d128_t64", BF16, b + [128, 128], b + [64, 128],
             scale=("Mul", r)),
        Case("bf16_packed_d128_causal", BF16, b + [384, 128], b + [384, 128],
             scale=("Mul", r), mask=causal, packed=True),
        Case("bf16_keymask", BF16, [2, 2, 256, 64], [2, 2, 256, 64],
             bias=("keys", [256, 150])),
        Case("bf16_keymask_causal", BF16, [2, 2, 256, 64], [2, 2, 256, 64],
             mask=causal, bias=("keys", [200, 256])),
        Case("bf16_leftpad", BF16, [2, 2, 256, 64], [2, 2, 256, 64],
             bias=("left", [0, 130])),
        Case("bf16_sdpa_boolmask", BF16, [2, 2, 128, 64], [2, 2, 128, 64],
             scale=None, sdpa=True, bias=("bool", 0.8)),
        Case("f16_d128_keymask_nocast", F16, [2, 2, 192, 128],
             [2, 2, 192, 128], cast=False, scale=("Mul", r),
             bias=("keys", [100, 192])),
        Case("bf16_d128_s384_learned", BF16, [2, 2, 384, 128],
             [2, 2, 384, 128], scale=("Mul", r), bias=("learned", None)),
        Case("bf16_d64_long_leftpad", BF16, [2, 2, 1152, 64],
             [2, 2, 1152, 64], bias=("left", [300, 0])),
        Case("bf16_gqa2_causal", BF16, [1, 4, 256, 64], [1, 2, 256, 64],
             mask=causal, gqa=2),
        Case("f16_dynamo_boolmask", F16, [2, 2, 128, 64], [2, 2, 128, 64],
             scale=None, sdpa="batched", bias=("bool", 0.8)),
        Case("f16_dynamo_gqa4_boolmask", F16, [1, 8, 128, 64],
             [1, 2, 128, 64], scale=None, sdpa="batched",
             bias=("bool", 0.8), gqa=4),
        Case("f16_dynamo_causal", F16, [2, 2, 256, 64], [2, 2, 256, 64],
             scale=None, sdpa="batched", bias=("positions", 0)),
        Case("f16_dynamo_causal_k1", F16, [1, 2, 192, 64], [1, 2, 192, 64],
             scale=None, sdpa="batched", bias=("positions", 1)),
        Case("pad_f16_dynamo_causal_s100", F16, [1, 2, 100, 64],
             [1, 2, 100, 64], scale=None, sdpa="batched",
             bias=("positions", 0)),
        Case("bf16_d128_gqa4_keymask", BF16, [2, 4, 384, 128],
             [2, 1, 384, 128], scale=("Mul", r), bias=("keys", [384, 200]),
             gqa=4),
        # Shapes the kernel takes once strata-pad-attention pads them
        # (AttentionPadding.cpp): ViT's 197 tokens, Swin's windows of 49
        # at head dimension 32, head dimension 80, sequences of any length
        # with and without masks, biases, GQA, packed QKV.
        Case("pad_d32", BF16, b + [256, 32], b + [256, 32],
             scale=("Mul", 1.0 / math.sqrt(32))),
        Case("pad_s100_causal", BF16, b + [100, 64], b + [100, 64],
             mask=causal),
        Case("pad_s197", BF16, b + [197, 64], b + [197, 64]),
        Case("pad_f16_d32_s49", F16, b + [49, 32], b + [49, 32],
             scale=("Mul", 1.0 / math.sqrt(32))),
        Case("pad_f16_d80_s200_causal", F16, b + [200, 80], b + [200, 80],
             scale=("Mul", 1.0 / math.sqrt(80)), mask=causal),
        Case("pad_s100_t150_learned", BF16, [2, 2, 100, 64], [2, 2, 150, 64],
             bias=("learned", None)),
        Case("pad_s100_keymask", BF16, [2, 2, 100, 64], [2, 2, 100, 64],
             bias=("keys", [100, 60])),
        Case("pad_sdpa_s100_boolmask", BF16, [2, 2, 100, 64],
             [2, 2, 100, 64], scale=None, sdpa=True, bias=("bool", 0.8)),
        Case("pad_gqa2_s100_causal", BF16, [1, 4, 100, 64], [1, 2, 100, 64],
             mask=causal, gqa=2),
        Case("pad_packed_s100", BF16, b + [100, 64], b + [100, 64],
             packed=True),
        # One query row against 256 keys (a decode step): padding would
        # multiply the work by 64, so the block stays separate kernels.
        Case("fallback_decode", BF16, b + [1, 64], b + [256, 64]),
        # The same with grouped-query attention (8 query heads over 2 K/V
        # heads): the products read K and V once, the repeat folded into the
        # query rows (strata-fold-head-repeats).
        Case("fallback_decode_gqa4", F16, [2, 8, 1, 64], [2, 2, 256, 64],
             gqa=4),
        Case("fallback_f32", F32, [1, b[1], 128, 64], [1, b[1], 128, 64],
             cast=False),
        Case("fallback_bcast", BF16, b + [128, 64], [1, b[1], 128, 64]),
    ]


# ---------------------------------------------------------------------------
# The model.

def lowest(dtype):
    """The type's lowest finite value, which transformers' masks add."""
    return {F32: float(np.finfo(np.float32).min), F16: -65504.0,
            BF16: -3.3895313892515355e38}[dtype]


def sdpa_factor(c):
    """What the SDPA export multiplies Q and Kᵀ by: the square root of
    1 / sqrt(D), stored in the model's type."""
    return round_to(c.q_shape[-1] ** -0.25, c.dtype)


def bias_nodes(c, x):
    """The nodes that add the case's bias to the scores `x`, their inputs
    and the name of the sum."""
    st = c.score_type
    form, _ = c.bias
    nodes, inputs = [], []
    if form in ("keys", "left"):
        bsz, t = c.q_shape[0], c.t
        inputs.append(helper.make_tensor_value_info("mask", I64, [bsz, t]))
        nodes += [
            helper.make_node("Constant", [], ["mask_axes"], name="mask_axes",
                             value=numpy_helper.from_array(
                                 np.array([1, 2], np.int64), "mask_axes")),
            helper.make_node("Unsqueeze", ["mask", "mask_axes"], ["mask4"],
                             name="mask_unsqueeze"),
            helper.make_node("Cast", ["mask4"], ["mask_f"], name="mask_cast",
                             to=st),
            helper.make_node("Constant", [], ["one"], name="one",
                             value=tensor(np.array(1.0), "one", st)),
            helper.make_node("Sub", ["one", "mask_f"], ["dropped"],
                             name="mask_invert"),
            helper.make_node("Constant", [], ["lowest"], name="lowest",
                             value=tensor(np.array(lowest(st)), "lowest", st)),
            helper.make_node("Mul", ["dropped", "lowest"], ["bias"],
                             name="mask_bias"),
        ]
    elif form == "bool":
        shape = [c.q_shape[0], 1, c.s, c.t]
        inputs.append(helper.make_tensor_value_info("mask", TensorProto.BOOL,
                                                    shape))
        nodes += [
            helper.make_node("Constant", [], ["zero"], name="zero",
                             value=tensor(np.array(0.0), "zero", st)),
            helper.make_node("Constant", [], ["bias_inf"], name="bias_inf",
                             value=tensor(np.array(-np.inf), "bias_inf", st)),
            helper.make_node("Where", ["mask", "zero", "bias_inf"], ["bias"],
                             name="mask_where"),
        ]
    elif form == "positions":
        # The dynamo exporter's causal mask: positions from constants
        # compared, And-ed with a constant condition, Where(c, 0, lowest).
        def const(name, array):
            return helper.make_node("Constant", [], [name], name=name,
                                    value=numpy_helper.from_array(array, name))
        nodes += [
            const("pos_k", np.arange(c.t, dtype=np.int64).reshape(1, 1, 1, -1)),
            const("pos_q", np.arange(c.s, dtype=np.int64).reshape(1, 1, -1, 1)),
            const("pos_off", np.array(c.bias[1], np.int64)),
            helper.make_node("Add", ["pos_q", "pos_off"], ["pos_last"],
                             name="pos_last"),
            helper.make_node("LessOrEqual", ["pos_k", "pos_last"], ["seen"],
                             name="pos_seen"),
            const("pos_true", np.array(True)),
            helper.make_node("And", ["pos_true", "seen"], ["keep"],
                             name="pos_keep"),
            helper.make_node("Constant", [], ["zero"], name="zero",
                             value=tensor(np.array(0.0), "zero", st)),
            helper.make_node("Constant", [], ["lowest"], name="lowest",
                             value=tensor(np.array(lowest(st)), "lowest", st)),
            helper.make_node("Where", ["keep", "zero", "lowest"], ["bias"],
                             name="mask_where"),
        ]
    else:
        inputs.append(helper.make_tensor_value_info(
            "bias", st, [1, c.q_shape[1], c.s, c.t]))
    nodes.append(helper.make_node("Add", [x, "bias"], ["biased"],
                                  name="add_bias"))
    return nodes, inputs, "biased"


def bias_input(c, rng):
    """The case's bias input, and the bias it adds to the scores (float64,
    broadcast to [B, H, S, T] by numpy's rules)."""
    form, arg = c.bias
    st = c.score_type
    t = np.arange(c.t)[None, :]
    if form in ("keys", "left"):
        edge = np.array(arg)[:, None]
        mask = (t < edge) if form == "keys" else (t >= edge)
        added = (1.0 - mask[:, None, None, :]) * round_to(lowest(st), st)
        return numpy_helper.from_array(mask.astype(np.int64), "mask"), added
    if form == "positions":
        i = np.arange(c.s)[:, None]
        added = np.where(t <= i + arg, 0.0, round_to(lowest(st), st))
        return None, added[None, None]
    if form == "bool":
        mask = rng.random([c.q_shape[0], 1, c.s, c.t]) < arg
        mask[0, 0, 1, :] = False
        added = np.where(mask, 0.0, -np.inf)
        return numpy_helper.from_array(mask, "mask"), added
    added = round_to(rng.standard_normal([1, c.q_shape[1], c.s, c.t]), st)
    return tensor(added, "bias", st), added


def build_model(c):
    rank = len(c.q_shape)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    extra_inputs = []
    if c.sdpa:
        nodes = [
            helper.make_node("Constant", [], ["root_scale"], name="root_scale",
                             value=tensor(sdpa_factor(c), "root_scale",
                                          c.dtype)),
            helper.make_node("Mul", ["q", "root_scale"], ["q_scaled"],
                             name="scale_q"),
            helper.make_node("Transpose", ["k"], ["kt_raw"],
                             name="transpose_k", perm=[0, 2, 3, 1]),
            helper.make_node("Mul", ["kt_raw", "root_scale"], ["kt"],
                             name="scale_k"),
            helper.make_node("MatMul", ["q_scaled", "kt"], ["scores"],
                             name="qk"),
        ]
        if c.sdpa == "batched":
            bsz, heads, _, dim = c.q_shape
            nodes[2:3] = [
                helper.make_node(
                    "Constant", [], ["bt_shape"], name="bt_shape",
                    value=numpy_helper.from_array(
                        np.array([bsz * heads, c.t, dim], np.int64),
                        "bt_shape")),
                helper.make_node(
                    "Constant", [], ["kt_shape"], name="kt_shape",
                    value=numpy_helper.from_array(
                        np.array([bsz, heads, dim, c.t], np.int64),
                        "kt_shape")),
                helper.make_node("Reshape", ["k", "bt_shape"], ["k3"],
                                 name="batch_k"),
                helper.make_node("Transpose", ["k3"], ["kt3"],
                                 name="transpose_k", perm=[0, 2, 1]),
                helper.make_node("Reshape", ["kt3", "kt_shape"], ["kt_raw"],
                                 name="unbatch_k")]
    else:
        nodes = [
            helper.make_node("Transpose", ["k"], ["kt"], name="transpose_k",
                             perm=perm),
            helper.make_node("MatMul", ["q", "kt"], ["scores"], name="qk"),
        ]
    x = "scores"
    if c.cast:
        nodes.append(helper.make_node("Cast", [x], ["scores_f"],
                                      name="cast_scores", to=F32))
        x = "scores_f"
    if c.scale:
        op, _ = c.scale
        nodes.append(helper.make_node(
            "Constant", [], ["scale"], name="scale_const",
            value=tensor(c.scale_value(), "scale", c.score_type)))
        nodes.append(helper.make_node(op, [x, "scale"], ["scaled"],
                                      name="scale_" + op.lower()))
        x = "scaled"
    if c.bias:
        added, extra_inputs, x = bias_nodes(c, x)
        nodes += added
    if c.mask:
        form, k = c.mask
        nodes.append(helper.make_node(
            "Constant", [], ["mask_shape"], name="mask_shape",
            value=numpy_helper.from_array(np.array([c.s, c.t], np.int64),
                                          "mask_shape")))
        nodes.append(helper.make_node(
            "ConstantOfShape", ["mask_shape"], ["ones"], name="ones",
            value=helper.make_tensor("one", TensorProto.BOOL, [1], [True])))
        trilu_inputs = ["ones"]
        if k is not None:
            nodes.append(helper.make_node(
                "Constant", [], ["diag"], name="diagonal",
                value=numpy_helper.from_array(np.array(k, np.int64), "diag")))
            trilu_inputs.append("diag")
        nodes.append(helper.make_node("Trilu", trilu_inputs, ["tri"],
                                      name="trilu",
                                      upper=1 if form == "upper" else 0))
        nodes.append(helper.make_node(
            "Constant", [], ["neg_inf"], name="neg_inf",
            value=tensor(np.array(-np.inf), "neg_inf", c.score_type)))
        where_inputs = (["tri", "neg_inf", x] if form == "upper"
                        else ["tri", x, "neg_inf"])
        nodes.append(helper.make_node("Where", where_inputs, ["masked"],
                                      name="mask"))
        x = "masked"
    nodes.append(helper.make_node("Softmax", [x], ["probs"], name="softmax",
                                  axis=-1))
    x = "probs"
    if c.bias and c.bias[0] == "bool":
        nodes += [
            helper.make_node("IsNaN", [x], ["probs_nan"], name="probs_nan"),
            helper.make_node("Constant", [], ["probs_zero"], name="probs_zero",
                             value=tensor(np.array(0.0), "probs_zero",
                                          c.score_type)),
            helper.make_node("Where", ["probs_nan", "probs_zero", x],
                             ["probs_g"], name="probs_guard"),
        ]
        x = "probs_g"
    if c.cast:
        nodes.append(helper.make_node("Cast", [x], ["probs_c"],
                                      name="cast_probs", to=c.dtype))
        x = "probs_c"
    nodes.append(helper.make_node("MatMul", [x, "v"], ["o"], name="pv"))
    if c.gqa > 1:
        bsz, kv_heads, t, d = c.kv_shape
        repeat = [
            helper.make_node("Constant", [], ["rep_axes"], name="rep_axes",
                             value=numpy_helper.from_array(
                                 np.array([2], np.int64), "rep_axes")),
            helper.make_node("Constant", [], ["rep_shape"], name="rep_shape",
                             value=numpy_helper.from_array(
                                 np.array([bsz, kv_heads, c.gqa, t, d],
                                          np.int64), "rep_shape")),
            helper.make_node("Constant", [], ["heads_shape"],
                             name="heads_shape",
                             value=numpy_helper.from_array(
                                 np.array([bsz, kv_heads * c.gqa, t, d],
                                          np.int64), "heads_shape"))]
        for x in "kv":
            repeat += [
                helper.make_node("Unsqueeze", [x, "rep_axes"], [x + "_5"],
                                 name=f"unsqueeze_{x}"),
                helper.make_node("Expand", [x + "_5", "rep_shape"],
                                 [x + "_x"], name=f"expand_{x}"),
                helper.make_node("Reshape", [x + "_x", "heads_shape"],
                                 [x + "_rep"], name=f"repeat_{x}")]
        for n in nodes:
            for i, name in enumerate(n.input):
                if name in ("k", "v"):
                    # The batched Kᵀ merges the repeat itself.
                    n.input[i] = name + ("_x" if n.name == "batch_k"
                                         else "_rep")
        if c.sdpa == "batched":
            repeat = [n for n in repeat if n.name != "repeat_k"]
        nodes = repeat + nodes
    k_shape = c.kv_shape
    if c.sdpa is True:
        k_shape = [k_shape[0], k_shape[2], k_shape[1], k_shape[3]]
    inputs = [helper.make_tensor_value_info("q", c.dtype, c.q_shape),
              helper.make_tensor_value_info("k", c.dtype, k_shape),
              helper.make_tensor_value_info("v", c.dtype, c.kv_shape)]
    inputs += extra_inputs
    outputs = [helper.make_tensor_value_info("o", c.dtype, c.out_shape)]
    if c.packed:
        bsz, heads, seq, dim = c.q_shape

        def shape_const(name, dims):
            return helper.make_node(
                "Constant", [], [name], name=name,
                value=numpy_helper.from_array(np.array(dims, np.int64), name))

        split = [shape_const("split_shape", [bsz, seq, 3, heads, dim]),
                 helper.make_node("Reshape", ["qkv", "split_shape"],
                                  ["qkv5"], name="split_heads"),
                 helper.make_node("Transpose", ["qkv5"], ["qkv_t"],
                                  name="heads_first", perm=[2, 0, 3, 1, 4])]
        for i, name in enumerate("qkv"):
            split.append(helper.make_node(
                "Constant", [], [f"index_{name}"], name=f"index_{name}",
                value=numpy_helper.from_array(np.array(i, np.int64),
                                              f"index_{name}")))
            split.append(helper.make_node("Gather", ["qkv_t", f"index_{name}"],
                                          [name], name=f"pick_{name}", axis=0))
        nodes = split + nodes
        nodes.append(helper.make_node("Transpose", ["o"], ["o_t"],
                                      name="heads_back", perm=[0, 2, 1, 3]))
        nodes.append(shape_const("merge_shape", [bsz, seq, heads * dim]))
        nodes.append(helper.make_node("Reshape", ["o_t", "merge_shape"],
                                      ["y"], name="merge_heads"))
        inputs = [helper.make_tensor_value_info(
            "qkv", c.dtype, [bsz, seq, 3 * heads * dim])]
        outputs = [helper.make_tensor_value_info(
            "y", c.dtype, [bsz, seq, heads * dim])]
    graph = helper.make_graph(nodes, c.name, inputs, outputs)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


# ---------------------------------------------------------------------------
# The reference.

def keep_mask(c, shift=0):
    """True where the graph keeps score (i, j); `shift` moves the diagonal
    (for the off-by-one check)."""
    i = np.arange(c.s)[:, None]
    j = np.arange(c.t)[None, :]
    form, k = c.mask
    k = (k or 0) + shift
    if form == "upper":
        return ~((j - i) >= k)  # Trilu keeps the upper part: that is masked
    return (j - i) <= k  # Trilu keeps the lower part: that is kept


def attention(c, q, k, v, bias=None, rounding=False, scale=True, mask=True,
              shift=0, keys=None, tile_max=False):
    """The graph in float64. `rounding`: round each intermediate to the type
    the graph gives it. The other arguments make the wrong variants the
    cases must be told apart from. `keys`: only the first `keys` keys.
    `tile_max`: each 64-key tile's exponentials taken against the tile's
    own maximum, never rescaled to the row's."""
    def rnd(x, dtype):
        return round_to(x, dtype) if rounding else x

    if c.gqa > 1:
        k, v = np.repeat(k, c.gqa, axis=1), np.repeat(v, c.gqa, axis=1)
    if keys is not None:
        k, v = k[..., :keys, :], v[..., :keys, :]
        if bias is not None:
            bias = bias[..., :keys]
    if c.sdpa and scale:
        q = rnd(q * sdpa_factor(c), c.dtype)
        k = rnd(k * sdpa_factor(c), c.dtype)
    x = rnd(np.matmul(q, np.swapaxes(k, -1, -2)), c.dtype)
    st = c.score_type
    if c.scale and scale:
        op, _ = c.scale
        x = rnd(x * c.scale_value() if op == "Mul" else x / c.scale_value(),
                st)
    if bias is not None:
        x = rnd(x + bias, st)
    if c.mask and mask:
        keep = keep_mask(c, shift)
        if keys is not None:
            keep = keep[:, :keys]
        x = np.where(keep, x, -np.inf)
    if tile_max:
        tiles = x.reshape(x.shape[:-1] + (-1, 64))
        top = tiles.max(axis=-1, keepdims=True)
        top[np.isinf(top)] = 0  # a tile masked whole stays 0
        e = np.exp(tiles - top).reshape(x.shape)
    else:
        e = np.exp(x - x.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    if c.bias and c.bias[0] == "bool":
        p = np.where(np.isnan(p), 0.0, p)
    p = rnd(rnd(p, st), c.dtype)
    return rnd(np.matmul(p, v), c.dtype)


def tolerance_used(actual, expected):
    """Each element's error as a fraction of what numpy's allclose (and the
    runners) allow: above 1 fails."""
    return np.abs(actual - expected) / (TOL + TOL * np.abs(expected))


@np.errstate(invalid="ignore")
def check_case(c, q, k, v, bias, expected):
    """The stored output must tell the case apart from the usual bugs, and
    the graph computed kernel by kernel must match it with room to spare."""
    def att(**kw):
        return attention(c, q, k, v, bias=bias, **kw)

    stored = round_to(expected, c.dtype)
    wrong = {}
    if c.bias:
        wrong["no bias"] = attention(c, q, k, v)
    if c.sdpa:
        wrong["no scale"] = att(scale=False)
    if c.t % 64 == 0 and c.t > 64:
        wrong["softmax per key tile"] = att(tile_max=True)
    if c.scale:
        wrong["no scale"] = att(scale=False)
    if c.mask:
        wrong["no mask"] = att(mask=False)
        wrong["diagonal + 1"] = att(shift=1)
        wrong["diagonal - 1"] = att(shift=-1)
    if c.t > 64:
        # The mask of a causal case hides the last keys from most rows;
        # only the rows that see them must differ.
        last = (c.t - 1) // 64 * 64
        rows = slice(last, None) if c.mask else slice(None)
        dropped = att(keys=last)
        wrong["last key tile dropped"] = (dropped[..., rows, :],
                                          expected[..., rows, :])
    if c.s > 64:
        dropped = expected.copy()
        dropped[..., (c.s - 1) // 64 * 64:, :] = 0
        wrong["last query tile zero"] = dropped
    batch = expected.reshape(-1, c.s, expected.shape[-1])
    if batch.shape[0] > 1:
        wrong["batch entries swapped"] = np.roll(batch, 1, axis=0).reshape(
            expected.shape)
    weakest = None
    for what, result in wrong.items():
        got, want = (result if isinstance(result, tuple)
                     else (result, stored))
        got, want = round_to(got, c.dtype), round_to(want, c.dtype)
        # A row masked whole (diagonal off by one) is NaN: a difference too.
        margin = np.nan_to_num(tolerance_used(got, want), nan=np.inf).max()
        if margin <= 1:
            raise SystemExit(f"{c.name}: '{what}' passes at rtol = atol = "
                             f"{TOL}; the case could not catch it")
        if weakest is None or margin < weakest[1]:
            weakest = (what, margin)
    rounded = att(rounding=True)
    used = tolerance_used(rounded, stored).max()
    if used > 0.5:
        raise SystemExit(f"{c.name}: rounding each intermediate uses "
                         f"{used:.2f} of the tolerance")
    return used, weakest


def write_case(out, c, seed):
    rng = np.random.default_rng(seed)
    q = round_to(0.75 * rng.standard_normal(c.q_shape), c.dtype)
    k = round_to(rng.standard_normal(c.kv_shape), c.dtype)
    v = round_to(rng.standard_normal(c.kv_shape), c.dtype)
    extra, bias = bias_input(c, rng) if c.bias else (None, None)
    with np.errstate(invalid="ignore"):
        expected = attention(c, q, k, v, bias=bias)
    checked = check_case(c, q, k, v, bias, expected)

    case_dir = os.path.join(out, c.name)
    data = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(build_model(c), os.path.join(case_dir, "model.onnx"))
    if c.packed:
        # qkv[b, s, c, h, d] is (q, k, v)[c][b, h, s, d]; y[b, s, h*D + d]
        # is o[b, h, s, d].
        bsz, heads, seq, dim = c.q_shape
        qkv = np.stack([q, k, v]).transpose(1, 3, 0, 2, 4).reshape(
            bsz, seq, 3 * heads * dim)
        write_pb(os.path.join(data, "input_0.pb"),
                 tensor(qkv, "qkv", c.dtype))
        y = expected.transpose(0, 2, 1, 3).reshape(bsz, seq, heads * dim)
        write_pb(os.path.join(data, "output_0.pb"),
                 tensor(round_to(y, c.dtype), "y", c.dtype))
        return checked
    k_stored = k.transpose(0, 2, 1, 3) if c.sdpa is True else k
    for i, (name, x) in enumerate((("q", q), ("k", k_stored), ("v", v))):
        write_pb(os.path.join(data, f"input_{i}.pb"),
                 tensor(x, name, c.dtype))
    if extra is not None:
        write_pb(os.path.join(data, "input_3.pb"), extra)
    write_pb(os.path.join(data, "output_0.pb"),
             tensor(round_to(expected, c.dtype), "o", c.dtype))
    return checked


def main(argv):
    args = [a for a in argv if a != "--small"]
    if len(args) != 1 or args[0].startswith("-"):
        sys.exit("usage: make_attention_cases.py OUT_DIR [--small]")
    out = args[0]
    os.makedirs(out, exist_ok=True)
    for seed, c in enumerate(cases("--small" in argv)):
        used, (bug, margin) = write_case(out, c, seed)
        print(f"{c.name}: q {c.q_shape}, k/v {c.kv_shape}; rounding uses "
              f"{used:.2f} of the tolerance, '{bug}' {margin:.1f} times it")


if __name__ == "__main__":
    main(sys.argv[1:])
