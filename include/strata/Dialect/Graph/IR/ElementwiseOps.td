//===- ElementwiseOps.td - elementwise graph ops -----------*- tablegen -*-===//
//
// Unary and binary elementwise ops. Binary ops broadcast like numpy. ONNX's
// variadic Sum/Mean/Max/Min are imported as chains of the binary forms.
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

def Graph_ModOp : Graph_ArithBinaryOp<"mod"> {
  let summary = "elementwise remainder (fmod = 1: C fmod; 0: sign of divisor)";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                       DefaultValuedAttr<I64Attr, "0">:$fmod);
}

def Graph_BitShiftOp : Graph_ArithBinaryOp<"bit_shift"> {
  let summary = "elementwise bit shift; direction is \"LEFT\" or \"RIGHT\"";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs, StrAttr:$direction);
}

def Graph_PReluOp : Graph_ArithBinaryOp<"prelu"> {
  let summary = "x if x >= 0 else slope * x (slope broadcasts to x)";
}

foreach p = [["equal", "Equal"],
    ["less", "Less"],
    ["greater", "Greater"],
    ["less_equal", "LessEqual"],
    ["greater_equal", "GreaterEqual"]] in {
  def "Graph_" # p[1] # "Op" : Graph_CompareOp<p[0]> {
    let summary = "elementwise " # p[0] # " with numpy broadcasting";
    let hasFolder = 1;
  }
}

foreach p = [["and", "And"], ["or", "Or"], ["xor", "Xor"]] in {
  def "Graph_" # p[1] # "Op" : Graph_BinaryOp<p[0], [SameOperandsAndResultElementType]> {
    let summary = "elementwise logical " # p[0];
    let arguments = (ins TensorOf<[I1]>:$lhs, TensorOf<[I1]>:$rhs);
    let results = (outs TensorOf<[I1]>:$output);
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
  let assemblyFormat = [{
    $input (`min` $min^)? (`max` $max^)? attr-dict `:`
    type($input) (`,` type($min)^)? (`,` type($max)^)? `->` type($output)
  }];
  let hasVerifier = 1;
}

#endif // STRATA_GRAPH_ELEMENTWISE_OPS_TD
