//===- ImportElementwise.cpp - elementwise ONNX ops -------------*- C++ -*-===//
//
// Converters for the elementwise ONNX ops: unary math and activations (with
// their ONNX attributes), broadcasting arithmetic, comparisons and logic
// (i1 results), Where, Clip, Cast and CastLike, and the variadic
// Sum/Mean/Max/Min, which become chains of the binary ops.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "mlir/IR/TypeUtilities.h"

#include <array>
#include <tuple>

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

namespace {

/// The result type of a unary elementwise op: output 0's declared type
/// joined with the operand's shape. Such ops require operand and result to
/// agree in rankedness (MLIR's Elementwise trait), and ONNX may declare an
/// output unranked whose input is ranked, or the other way round.
Type unaryResultType(NodeImporter &n, Value x, Type element = {}) {
  Type declared = n.outputType(0, element);
  auto xType = cast<TensorType>(x.getType());
  if (!xType.hasRank())
    return UnrankedTensorType::get(getElementTypeOrSelf(declared));
  Type joined =
      graph::joinTypes(declared, graph::withShape(declared, xType.getShape()));
  // A conflict is left for NodeImporter::refine to report.
  return joined ? joined : declared;
}

template <typename OpTy> LogicalResult convertUnary(NodeImporter &n) {
  Value x = n.input(0);
  if (!x)
    return n.fail("missing input");
  // Opset 1's memory-reuse hint does not change the result.
  n.ignoreAttr("consumed_inputs");
  return n.setOutput(n.create<OpTy>(unaryResultType(n, x), x));
}

/// Reshapes `value` with a constant target shape (ONNX Reshape semantics: 0
/// copies a dimension, -1 infers one).
Value reshapeTo(NodeImporter &n, Value value, ArrayRef<int64_t> shape) {
  OpBuilder &b = n.builder();
  auto shapeType =
      RankedTensorType::get({int64_t(shape.size())}, b.getI64Type());
  Value shapeValue = n.create<graph::ConstantOp>(
      cast<ElementsAttr>(DenseIntElementsAttr::get(shapeType, shape)));
  return n.create<graph::ReshapeOp>(
      UnrankedTensorType::get(getElementTypeOrSelf(value.getType())), value,
      shapeValue, b.getI64IntegerAttr(0));
}

/// Before opset 7, binary ops broadcast only with `broadcast = 1`, aligning
/// the second operand with the first at `axis` (default: trailing, which is
/// numpy's rule). Returns the second operand reshaped so that numpy
/// broadcasting gives the same result: trailing 1s for an explicit axis.
FailureOr<Value> legacyBroadcast(NodeImporter &n, Value a, Value b) {
  if (n.opset() >= 7)
    return b;
  // Opset 1's memory-reuse hint does not change the result.
  n.ignoreAttr("consumed_inputs");
  bool broadcast = n.intAttr("broadcast", 0) != 0;
  std::optional<int64_t> axis = n.optionalIntAttr("axis");
  if (!broadcast || !axis)
    return b;
  auto aType = cast<TensorType>(a.getType());
  auto bType = cast<TensorType>(b.getType());
  if (!aType.hasRank() || !bType.hasRank())
    return n.fail("legacy broadcasting with an axis needs operands of known "
                  "rank");
  int64_t rankA = aType.getRank(), rankB = bType.getRank();
  int64_t start = *axis < 0 ? *axis + rankA : *axis;
  if (start < 0 || start + rankB > rankA)
    return n.fail("broadcast axis " + Twine(*axis) + " does not fit a rank-" +
                  Twine(rankB) + " operand into rank " + Twine(rankA));
  int64_t trailing = rankA - start - rankB;
  if (trailing == 0)
    return b;
  SmallVector<int64_t> shape(rankB, 0);
  shape.append(trailing, 1);
  return reshapeTo(n, b, shape);
}

template <typename OpTy> LogicalResult convertBinary(NodeImporter &n) {
  Value a = n.input(0), b = n.input(1);
  if (!a || !b)
    return n.fail("expects two inputs");
  FailureOr<Value> rhs = legacyBroadcast(n, a, b);
  if (failed(rhs))
    return failure();
  return n.setOutput(n.create<OpTy>(n.outputType(0), a, *rhs));
}

template <typename OpTy> LogicalResult convertCompare(NodeImporter &n) {
  Value a = n.input(0), b = n.input(1);
  if (!a || !b)
    return n.fail("expects two inputs");
  FailureOr<Value> rhs = legacyBroadcast(n, a, b);
  if (failed(rhs))
    return failure();
  Type i1 = IntegerType::get(n.context(), 1);
  return n.setOutput(n.create<OpTy>(n.outputType(0, i1), a, *rhs));
}

/// PRelu: before opset 7 a 1-D slope held one value per channel (axis 1);
/// from opset 7 on it broadcasts to the input like numpy. ONNX's version
/// converter keeps such slopes unchanged, so a converted model can still
/// carry one: a 1-D slope of the channel count that does not broadcast
/// numpy-style is read the old way, by giving it trailing 1s.
LogicalResult convertPRelu(NodeImporter &n) {
  Value x = n.input(0), slope = n.input(1);
  if (!x || !slope)
    return n.fail("expects two inputs");
  n.ignoreAttr("consumed_inputs");
  auto xType = cast<TensorType>(x.getType());
  auto slopeType = cast<TensorType>(slope.getType());
  if (xType.hasRank() && xType.getRank() > 2 && slopeType.hasRank() &&
      slopeType.getRank() == 1 && slopeType.getDimSize(0) != 1) {
    int64_t channels = xType.getDimSize(1);
    int64_t size = slopeType.getDimSize(0);
    int64_t last = xType.getShape().back();
    bool legacy = n.opset() < 7
                      ? (ShapedType::isDynamic(channels) ||
                         ShapedType::isDynamic(size) || channels == size)
                      : (!ShapedType::isDynamic(size) && size == channels &&
                         !ShapedType::isDynamic(last) && size != last);
    if (legacy) {
      SmallVector<int64_t> shape = {-1};
      shape.append(xType.getRank() - 2, 1);
      slope = reshapeTo(n, slope, shape);
    }
  }
  return n.setOutput(n.create<graph::PReluOp>(n.outputType(0), x, slope));
}

/// Sum, Mean, Max, Min take any number of inputs: a left-to-right chain of
/// the binary op (Mean divides the sum by the count).
template <typename OpTy> LogicalResult convertVariadic(NodeImporter &n) {
  SmallVector<Value> inputs = n.inputs();
  if (inputs.empty())
    return n.fail("expects at least one input");
  Value acc = inputs.front();
  Type element = getElementTypeOrSelf(acc.getType());
  for (Value next : llvm::drop_begin(inputs))
    acc = n.create<OpTy>(UnrankedTensorType::get(element), acc, next);
  if (n.node().op_type() == "Mean" && inputs.size() > 1) {
    auto scalar = RankedTensorType::get({}, element);
    auto count = cast<ElementsAttr>(DenseElementsAttr::get(
        scalar, n.builder().getFloatAttr(element, double(inputs.size()))));
    Value divisor = n.create<graph::ConstantOp>(count);
    acc =
        n.create<graph::DivOp>(UnrankedTensorType::get(element), acc, divisor);
  }
  Type declared = n.outputType(0);
  if (acc.getType() != declared) {
    Type joined = graph::joinTypes(acc.getType(), declared);
    if (!joined)
      return n.fail("inputs broadcast to a shape other than the declared one");
    acc.setType(joined);
  }
  return n.setOutput(acc);
}

/// A rank-0 constant of `element` type holding `value`.
Value scalarConstant(NodeImporter &n, Type element, double value) {
  auto type = RankedTensorType::get({}, element);
  Attribute attr;
  if (isa<FloatType>(element))
    attr =
        DenseElementsAttr::get(type, n.builder().getFloatAttr(element, value));
  else
    attr = DenseElementsAttr::get(
        type, n.builder().getIntegerAttr(element, int64_t(value)));
  return n.create<graph::ConstantOp>(cast<ElementsAttr>(attr));
}

/// Unary ops with float attributes: `attrs` lists the ONNX attribute names
/// and defaults in the order the op's builder takes them.
template <typename OpTy, size_t N>
LogicalResult
convertUnaryWithFloats(NodeImporter &n,
                       const std::pair<const char *, float> (&attrs)[N]) {
  Value x = n.input(0);
  if (!x)
    return n.fail("missing input");
  n.ignoreAttr("consumed_inputs");
  std::array<FloatAttr, N> values;
  for (size_t i = 0; i < N; ++i)
    values[i] = n.builder().getF32FloatAttr(
        n.floatAttr(attrs[i].first, attrs[i].second));
  return std::apply(
      [&](auto... attr) {
        return n.setOutput(n.create<OpTy>(unaryResultType(n, x), x, attr...));
      },
      values);
}

/// Defaults of the activation attributes (ONNX opset 17 schemas).
constexpr std::pair<const char *, float> kLeakyReluAttrs[] = {{"alpha", 0.01f}};
constexpr std::pair<const char *, float> kEluAttrs[] = {{"alpha", 1.0f}};
constexpr std::pair<const char *, float> kSeluAttrs[] = {
    {"alpha", 1.67326319217681884765625f},
    {"gamma", 1.05070102214813232421875f}};
constexpr std::pair<const char *, float> kCeluAttrs[] = {{"alpha", 1.0f}};
constexpr std::pair<const char *, float> kHardSigmoidAttrs[] = {{"alpha", 0.2f},
                                                                {"beta", 0.5f}};
constexpr std::pair<const char *, float> kThresholdedReluAttrs[] = {
    {"alpha", 1.0f}};
constexpr std::pair<const char *, float> kShrinkAttrs[] = {{"bias", 0.0f},
                                                           {"lambd", 0.5f}};

/// Clip takes optional min/max inputs from opset 11 on; opset 6 had float
/// attributes, which become scalar constants of the input's element type.
LogicalResult convertClip(NodeImporter &n) {
  Value x = n.input(0);
  if (!x)
    return n.fail("missing input");
  Value min = n.input(1), max = n.input(2);
  // Opset 1 had `consumed_inputs`, a legacy memory-reuse hint.
  n.ignoreAttr("consumed_inputs");
  if (n.hasAttr("min") || n.hasAttr("max")) {
    if (min || max)
      return n.fail("takes min/max either as attributes (opset < 11) or as "
                    "inputs, not both");
    Type element = getElementTypeOrSelf(x.getType());
    if (n.hasAttr("min"))
      min = scalarConstant(n, element, n.floatAttr("min", 0.0f));
    if (n.hasAttr("max"))
      max = scalarConstant(n, element, n.floatAttr("max", 0.0f));
  }
  return n.setOutput(n.create<graph::ClipOp>(n.outputType(0), x, min, max));
}

} // namespace

void strata::onnx_import::registerElementwiseConverters(ConverterRegistry &r) {
  r.add("Abs", convertUnary<graph::AbsOp>);
  r.add("Neg", convertUnary<graph::NegOp>);
  r.add("Exp", convertUnary<graph::ExpOp>);
  r.add("Log", convertUnary<graph::LogOp>);
  r.add("Sqrt", convertUnary<graph::SqrtOp>);
  r.add("Reciprocal", convertUnary<graph::ReciprocalOp>);
  r.add("Relu", convertUnary<graph::ReluOp>);
  r.add("Sigmoid", convertUnary<graph::SigmoidOp>);
  r.add("Tanh", convertUnary<graph::TanhOp>);
  r.add("Erf", convertUnary<graph::ErfOp>);
  r.add("Identity", [](NodeImporter &n) -> LogicalResult {
    // Identity also passes sequences and optionals (opset 14/16); for those
    // the output is simply another name of the input value.
    Value x = n.input(0);
    if (x && !isa<TensorType>(x.getType()))
      return n.setOutput(x);
    return convertUnary<graph::IdentityOp>(n);
  });
  r.add("Floor", convertUnary<graph::FloorOp>);
  r.add("Ceil", convertUnary<graph::CeilOp>);
  r.add("Round", convertUnary<graph::RoundOp>);
  r.add("Sign", convertUnary<graph::SignOp>);
  r.add("Sin", convertUnary<graph::SinOp>);
  r.add("Cos", convertUnary<graph::CosOp>);
  r.add("Tan", convertUnary<graph::TanOp>);
  r.add("Asin", convertUnary<graph::AsinOp>);
  r.add("Acos", convertUnary<graph::AcosOp>);
  r.add("Atan", convertUnary<graph::AtanOp>);
  r.add("Sinh", convertUnary<graph::SinhOp>);
  r.add("Cosh", convertUnary<graph::CoshOp>);
  r.add("Asinh", convertUnary<graph::AsinhOp>);
  r.add("Acosh", convertUnary<graph::AcoshOp>);
  r.add("Atanh", convertUnary<graph::AtanhOp>);
  r.add("Softplus", convertUnary<graph::SoftplusOp>);
  r.add("Softsign", convertUnary<graph::SoftsignOp>);
  r.add("HardSwish", convertUnary<graph::HardSwishOp>);
  r.add("Not", convertUnary<graph::NotOp>);
  r.add("BitwiseNot", convertUnary<graph::BitwiseNotOp>);

  r.add("IsNaN", [](NodeImporter &n) -> LogicalResult {
    Value x = n.input(0);
    Type i1 = IntegerType::get(n.context(), 1);
    return n.setOutput(n.create<graph::IsNaNOp>(unaryResultType(n, x, i1), x));
  });
  r.add("IsInf", [](NodeImporter &n) -> LogicalResult {
    Value x = n.input(0);
    Type i1 = IntegerType::get(n.context(), 1);
    OpBuilder &b = n.builder();
    return n.setOutput(n.create<graph::IsInfOp>(
        unaryResultType(n, x, i1), x,
        b.getI64IntegerAttr(n.intAttr("detect_negative", 1)),
        b.getI64IntegerAttr(n.intAttr("detect_positive", 1))));
  });

  r.add("LeakyRelu", [](NodeImporter &n) {
    return convertUnaryWithFloats<graph::LeakyReluOp>(n, kLeakyReluAttrs);
  });
  r.add("Elu", [](NodeImporter &n) {
    return convertUnaryWithFloats<graph::EluOp>(n, kEluAttrs);
  });
  r.add("Selu", [](NodeImporter &n) {
    return convertUnaryWithFloats<graph::SeluOp>(n, kSeluAttrs);
  });
  r.add("Celu", [](NodeImporter &n) {
    return convertUnaryWithFloats<graph::CeluOp>(n, kCeluAttrs);
  });
  r.add("HardSigmoid", [](NodeImporter &n) {
    return convertUnaryWithFloats<graph::HardSigmoidOp>(n, kHardSigmoidAttrs);
  });
  r.add("ThresholdedRelu", [](NodeImporter &n) {
    return convertUnaryWithFloats<graph::ThresholdedReluOp>(
        n, kThresholdedReluAttrs);
  });
  r.add("Shrink", [](NodeImporter &n) {
    return convertUnaryWithFloats<graph::ShrinkOp>(n, kShrinkAttrs);
  });

  r.add("Add", convertBinary<graph::AddOp>);
  r.add("Sub", convertBinary<graph::SubOp>);
  r.add("Mul", convertBinary<graph::MulOp>);
  r.add("Div", convertBinary<graph::DivOp>);
  r.add("Pow", convertBinary<graph::PowOp>);
  r.add("PRelu", convertPRelu);
  r.add("And", convertBinary<graph::AndOp>);
  r.add("Or", convertBinary<graph::OrOp>);
  r.add("Xor", convertBinary<graph::XorOp>);
  // Opset 18 (torch's `&`, `|`, `^` on integers through the dynamo exporter).
  r.add("BitwiseAnd", convertBinary<graph::BitwiseAndOp>);
  r.add("BitwiseOr", convertBinary<graph::BitwiseOrOp>);
  r.add("BitwiseXor", convertBinary<graph::BitwiseXorOp>);
  r.add("Mod", [](NodeImporter &n) -> LogicalResult {
    Value a = n.input(0), b = n.input(1);
    if (!a || !b)
      return n.fail("expects two inputs");
    return n.setOutput(n.create<graph::ModOp>(
        n.outputType(0), a, b,
        n.builder().getI64IntegerAttr(n.intAttr("fmod", 0))));
  });
  r.add("BitShift", [](NodeImporter &n) -> LogicalResult {
    Value a = n.input(0), b = n.input(1);
    if (!a || !b)
      return n.fail("expects two inputs");
    if (!n.hasAttr("direction"))
      return n.fail("the required attribute 'direction' is missing");
    std::string direction = n.stringAttr("direction", "");
    if (direction != "LEFT" && direction != "RIGHT")
      return n.fail("direction must be LEFT or RIGHT, got '" + direction + "'");
    return n.setOutput(n.create<graph::BitShiftOp>(
        n.outputType(0), a, b, n.builder().getStringAttr(direction)));
  });

  r.add("Equal", convertCompare<graph::EqualOp>);
  r.add("Less", convertCompare<graph::LessOp>);
  r.add("Greater", convertCompare<graph::GreaterOp>);
  r.add("LessOrEqual", convertCompare<graph::LessEqualOp>);
  r.add("GreaterOrEqual", convertCompare<graph::GreaterEqualOp>);

  r.add("Where", [](NodeImporter &n) -> LogicalResult {
    Value cond = n.input(0), x = n.input(1), y = n.input(2);
    if (!cond || !x || !y)
      return n.fail("expects three inputs");
    return n.setOutput(n.create<graph::WhereOp>(
        n.outputType(0, getElementTypeOrSelf(x.getType())), cond, x, y));
  });
  r.add("Clip", convertClip);

  r.add("Sum", convertVariadic<graph::AddOp>);
  r.add("Mean", convertVariadic<graph::AddOp>);
  r.add("Max", convertVariadic<graph::MaxOp>);
  r.add("Min", convertVariadic<graph::MinOp>);

  r.add("Cast", [](NodeImporter &n) -> LogicalResult {
    Value x = n.input(0);
    int64_t to = n.intAttr("to", 0);
    Type element = convertElementType(n.context(), int32_t(to));
    if (!element)
      return n.fail("cast to " + elementTypeName(int32_t(to)) +
                    " is not supported");
    n.ignoreAttr("saturate");
    return n.setOutput(
        n.create<graph::CastOp>(unaryResultType(n, x, element), x));
  });
  // CastLike: a cast to the element type of input 1 (whose values are unused).
  r.add("CastLike", [](NodeImporter &n) -> LogicalResult {
    Value x = n.input(0), like = n.input(1);
    if (!x || !like)
      return n.fail("expects two inputs");
    // Opset 19's `saturate` only affects float8 targets, which strata lacks.
    n.ignoreAttr("saturate");
    Type element = getElementTypeOrSelf(like.getType());
    return n.setOutput(
        n.create<graph::CastOp>(unaryResultType(n, x, element), x));
  });
}
