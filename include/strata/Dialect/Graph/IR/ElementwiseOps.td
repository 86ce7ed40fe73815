//===- ElementwiseOps.td - elementwise graph ops -----------*- tablegen -*-===//
//
// Unary and binary elementwise ops. Binary ops, comparisons (i1 results),
// logic ops and where broadcast like numpy. ONNX's variadic Sum/Mean/Max/Min
// are imported as chains of the binary forms; activations with parameters
// are decomposed into core ops by strata-graph-decompose.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_GRAPH_ELEMENTWISE_OPS_TD
#define STRATA_GRAPH_ELEMENTWISE_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"

//===----------------------------------------------------------------------===//
// Unary, no attributes.
//===----------------------------------------------------------------------===//

foreach p = [["abs", "Abs"],
    ["neg", "Neg"],
    ["exp", "Exp"],
    ["log", "Log"],
    ["sqrt", "Sqrt"],
    ["reciprocal", "Reciprocal"],
    ["relu", "Relu"],
    ["sigmoid", "Sigmoid"],
    ["tanh", "Tanh"],
    ["erf", "Erf"],
    ["floor", "Floor"],
    ["ceil", "Ceil"],
    ["round", "Round"],
    ["sign", "Sign"],
    ["sin", "Sin"],
    ["cos", "Cos"],
    ["tan", "Tan"],
    ["asin", "Asin"],
    ["acos", "Acos"],
    ["atan", "Atan"],
    ["sinh", "Sinh"],
    ["cosh", "Cosh"],
    ["asinh", "Asinh"],
    ["acosh", "Acosh"],
    ["atanh", "Atanh"],
    ["softplus", "Softplus"],
    ["softsign", "Softsign"],
    ["hard_swish", "HardSwish"],
    ["bitwise_not", "BitwiseNot"],
    ["not", "Not"]] in {
  def "Graph_" # p[1] # "Op" : Graph_UnarySameTypeOp<p[0]> {
    let summary = "elementwise " # p[0];
    let hasFolder = 1;
  }
}

def Graph_IdentityOp : Graph_UnarySameTypeOp<"identity"> {
  let summary = "returns its operand";
  let hasFolder = 1;
}

def Graph_IsNaNOp : Graph_UnaryOp<"is_nan"> {
  let summary = "elementwise isnan";
  let results = (outs TensorOf<[I1]>:$output);
}

def Graph_IsInfOp : Graph_UnaryOp<"is_inf"> {
  let summary = "elementwise isinf";
  let arguments = (ins AnyTensor:$input,
                       DefaultValuedAttr<I64Attr, "1">:$detect_negative,
                       DefaultValuedAttr<I64Attr, "1">:$detect_positive);
  let results = (outs TensorOf<[I1]>:$output);
}

def Graph_CastOp : Graph_UnaryOp<"cast"> {
  let summary = "elementwise conversion to the result's element type";
  let description = [{
    Converts each element to the result element type with ONNX Cast
    semantics (float to int truncates toward zero; to bool: nonzero is true).
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Unary with attributes (ONNX names and defaults).
//===----------------------------------------------------------------------===//

class Graph_UnaryAttrOp<string mnemonic, dag attrs>
    : Graph_UnarySameTypeOp<mnemonic> {
  let arguments = !con((ins AnyTensor:$input), attrs);
}

def Graph_LeakyReluOp : Graph_UnaryAttrOp<"leaky_relu",
    (ins DefaultValuedAttr<F32Attr, "0.01">:$alpha)> {
  let summary = "x if x >= 0 else alpha * x";
}
def Graph_EluOp : Graph_UnaryAttrOp<"elu",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha)> {
  let summary = "x if x >= 0 else alpha * (exp(x) - 1)";
}
def Graph_SeluOp : Graph_UnaryAttrOp<"selu",
    (ins DefaultValuedAttr<F32Attr, "1.67326319217681884765625">:$alpha,
         DefaultValuedAttr<F32Attr, "1.05070102214813232421875">:$gamma)> {
  let summary = "gamma * (x if x > 0 else alpha * (exp(x) - 1))";
}
def Graph_CeluOp : Graph_UnaryAttrOp<"celu",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha)> {
  let summary = "max(0, x) + min(0, alpha * (exp(x / alpha) - 1))";
}
def Graph_HardSigmoidOp : Graph_UnaryAttrOp<"hard_sigmoid",
    (ins DefaultValuedAttr<F32Attr, "0.2">:$alpha,
         DefaultValuedAttr<F32Attr, "0.5">:$beta)> {
  let summary = "max(0, min(1, alpha * x + beta))";
}
def Graph_ThresholdedReluOp : Graph_UnaryAttrOp<"thresholded_relu",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha)> {
  let summary = "x if x > alpha else 0";
}
def Graph_ShrinkOp : Graph_UnaryAttrOp<"shrink",
    (ins DefaultValuedAttr<F32Attr, "0.0">:$bias,
         DefaultValuedAttr<F32Attr, "0.5">:$lambd)> {
  let summary = "x - bias if x > lambd, x + bias if x < -lambd, else 0";
}
def Graph_GeluOp : Graph_UnaryAttrOp<"gelu",
    (ins DefaultValuedAttr<StrAttr, "\"none\"">:$approximate)> {
  let summary = "Gaussian error linear unit (exact or tanh approximation)";
  let description = [{
    Not an ONNX 17 operator; the graph layer recognises the exported
    erf-based pattern and forms this op so fusion and libraries see it.
    `approximate` is "none" (x * 0.5 * (1 + erf(x / sqrt(2)))) or "tanh".
  }];
  // The verifier also checks `approximate`; ElementwiseOps.cpp defines it.
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferResultTypes(
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return inferUnaryElementwise(getOperation(), types);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Binary with broadcasting.
//===----------------------------------------------------------------------===//

foreach p = [["add", "Add"],
    ["sub", "Sub"],
    ["mul", "Mul"],
    ["div", "Div"],
    ["max", "Max"],
    ["min", "Min"],
    ["bitwise_and", "BitwiseAnd"],
    ["bitwise_or", "BitwiseOr"],
    ["bitwise_xor", "BitwiseXor"]] in {
  def "Graph_" # p[1] # "Op" : Graph_ArithBinaryOp<p[0]> {
    let summary = "elementwise " # p[0] # " with numpy broadcasting";
    let hasFolder = 1;
  }
}

def Graph_PowOp : Graph_BinaryOp<"pow"> {
  let summary = "lhs ** rhs with numpy broadcasting; the exponent's element "
                "type may differ from the base's (ONNX Pow)";
  let hasFolder = 1;
}

// Binary ops whose verifier adds op-specific checks to the broadcasting ones;
// ElementwiseOps.cpp defines verify() and calls verifyBroadcastElementwise.
class Graph_CheckedArithBinaryOp<string mnemonic>
    : Graph_ArithBinaryOp<mnemonic> {
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferResultTypes(
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return inferBroadcastElementwise(getOperation(), types);
    }
  }];
}

def Graph_ModOp : Graph_CheckedArithBinaryOp<"mod"> {
  let summary = "elementwise remainder (fmod = 1: C fmod; 0: sign of divisor)";
  let description = [{
    With `fmod = 0` (integers only) the remainder takes the divisor's sign,
    like Python's `%`; with `fmod = 1` it takes the dividend's, like C's
    `fmod`. Floating-point operands require `fmod = 1` (ONNX).
  }];
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                       DefaultValuedAttr<I64Attr, "0">:$fmod);
  let hasFolder = 1;
}

def Graph_BitShiftOp : Graph_CheckedArithBinaryOp<"bit_shift"> {
  let summary = "elementwise bit shift; direction is \"LEFT\" or \"RIGHT\"";
  let description = [{
    Shifts each element of `lhs` by the amount in `rhs`; both are unsigned
    integers (ONNX BitShift). Shifting by the bit width or more gives 0.
  }];
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs, StrAttr:$direction);
  let hasFolder = 1;
}

def Graph_PReluOp : Graph_CheckedArithBinaryOp<"prelu"> {
  let summary = "x if x >= 0 else slope * x (slope broadcasts to x)";
  let description = [{
    `slope` broadcasts to `lhs` in one direction only (ONNX PRelu), so the
    result always has the shape of `lhs`.
  }];
}

// Comparisons broadcast like the arithmetic ops, so their operands share the
// element type but not necessarily the shape (Graph_CompareOp's
// SameTypeOperands would reject `tensor<3x4xf32>` against `tensor<4xf32>`).
class Graph_BroadcastCompareOp<string mnemonic>
    : Graph_BinaryOp<mnemonic, [SameOperandsElementType]> {
  let results = (outs TensorOf<[I1]>:$output);
}

foreach p = [["equal", "Equal"],
    ["less", "Less"],
    ["greater", "Greater"],
    ["less_equal", "LessEqual"],
    ["greater_equal", "GreaterEqual"]] in {
  def "Graph_" # p[1] # "Op" : Graph_BroadcastCompareOp<p[0]> {
    let summary = "elementwise " # p[0] # " with numpy broadcasting";
    let hasFolder = 1;
  }
}

foreach p = [["and", "And"], ["or", "Or"], ["xor", "Xor"]] in {
  def "Graph_" # p[1] # "Op" : Graph_BinaryOp<p[0], [SameOperandsAndResultElementType]> {
    let summary = "elementwise logical " # p[0];
    let arguments = (ins TensorOf<[I1]>:$lhs, TensorOf<[I1]>:$rhs);
    let results = (outs TensorOf<[I1]>:$output);
    let hasFolder = 1;
  }
}

def Graph_WhereOp : Graph_SimpleOp<"where"> {
  let summary = "elementwise select with three-way numpy broadcasting";
  let arguments = (ins TensorOf<[I1]>:$condition, AnyTensor:$x, AnyTensor:$y);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ClipOp : Graph_Op<"clip", [Pure, AttrSizedOperandSegments]> {
  let summary = "elementwise clamp to optional [min, max] scalars";
  let arguments = (ins AnyTensor:$input, Optional<AnyTensor>:$min,
                       Optional<AnyTensor>:$max);
  let results = (outs AnyTensor:$output);
  // The keywords say which bounds are present, so a lone `max` parses too.
  let assemblyFormat = [{
    $input (`min` $min^)? (`max` $max^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // STRATA_GRAPH_ELEMENTWISE_OPS_TD
