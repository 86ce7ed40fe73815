//===- Passes.td - strata conversion passes ----------------*- tablegen -*-===//
//
// Passes that lower strata's graph dialect into upstream MLIR dialects: the
// first steps of the kernel layer.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_CONVERSION_PASSES_TD
#define STRATA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertGraphToLinalgPass
    : Pass<"strata-convert-graph-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower graph ops to linalg on tensors";
  let description = [{
    Rewrites the graph ops that some op family lowers (elementwise,
    reduction, tensor, NN; strata::isLowerableToLinalg says which) into
    `linalg` ops on tensors, with `arith` and `math` ops in their bodies and
    `tensor.empty`/`linalg.fill` for the outputs. Elementwise ops:

    - unary float ops: abs, neg, exp, log, sqrt, reciprocal, relu, sigmoid,
      tanh, erf, floor, ceil, sin, cos, gelu (exact or tanh), round (half to
      even), tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh (the
      last ten in f32 for f16/bf16); abs, neg, relu and sign also on
      integers; is_nan and is_inf (detect_positive/negative);
    - add, sub, mul, div, max, min, pow (integer or other float exponents,
      integer bases with float exponents), mod (fmod 0/1 with ONNX's sign
      rules), bit_shift (0 for shifts of the bit width or more), the bitwise
      and logical ops, the comparisons (i1 results), where, clip (optional
      bounds) and cast between all float and integer types (ONNX Cast
      semantics, i1 included).

    Unsigned element types: `tensor<..xuiN>` is converted to
    `tensor<..xiN>` with unrealized_conversion_cast materializations; the
    bodies pick unsigned arith ops (divui, remui, maxui/minui, cmpi ult/ugt,
    uitofp/fptoui, extui) from the graph op's own types.

    Reductions (static shapes): reduce_sum/mean/max/min/prod (and l1, l2,
    log_sum, sum_square), with axes from the attribute, a constant operand,
    or, for axes computed at run time, the static input and result shapes
    when they determine them; keepdims and noop_with_empty_axes; an empty
    extent gives the identity. arg_max/arg_min (select_last_index),
    softmax/log_softmax (max-subtracted) and hardmax along `axis`, cum_sum
    (exclusive, reverse; constant axis). f16/bf16 sums accumulate in f32.

    Operands of elementwise ops broadcast like numpy: ranks are aligned on
    the right, and a dimension of static size 1 is read at index 0 through
    the operand's indexing map. An output dimension is static when the
    declared result type or any operand has a static size other than 1
    there; otherwise it takes its size from `tensor.dim` of the first
    operand that is dynamic there. Assumption: a dynamic operand dimension
    equals the output's size at run time (never a 1 that broadcasts).

    Ops no family handles (other element types, unranked or dynamic shapes
    where a family needs static ones, other graph ops) are left untouched,
    so the pass can run on any module.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // STRATA_CONVERSION_PASSES_TD
