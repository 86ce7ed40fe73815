//===- ElementwiseOps.cpp - elementwise op folders and shapes ---*- C++ -*-===//
//
// Constant folding of elementwise ops evaluates in double (floats) or int64
// (integers) with numpy broadcasting, then converts to the result element
// type. It only fires on small constants (shape arithmetic in exported
// models), never on weights, to keep compile time and memory bounded.
//
//===----------------------------------------------------------------------===//

#include "ConstantValues.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace strata::graph;
using namespace strata::graph::folding;

std::optional<ConstValues> folding::readConstant(Attribute attr) {
  auto elements = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!elements || elements.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  ConstValues values;
  values.shape = llvm::to_vector(elements.getType().getShape());
  Type element = elements.getElementType();
  if (isa<FloatType>(element)) {
    values.isFloat = true;
    for (const APFloat &v : elements.getValues<APFloat>())
      values.floats.push_back(v.convertToDouble());
  } else if (auto intType = dyn_cast<IntegerType>(element)) {
    bool isUnsigned = intType.isUnsigned() || intType.getWidth() == 1;
    for (const APInt &v : elements.getValues<APInt>())
      values.ints.push_back(isUnsigned ? int64_t(v.getZExtValue())
                                       : v.getSExtValue());
  } else {
    return std::nullopt;
  }
  return values;
}

Attribute folding::makeConstant(ShapedType type, ArrayRef<double> floats,
                                ArrayRef<int64_t> ints) {
  Type element = type.getElementType();
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    for (double v : floats) {
      APFloat f(v);
      bool lost;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      values.push_back(f);
    }
    if (values.empty())
      for (int64_t v : ints) {
        APFloat f(static_cast<double>(v));
        bool lost;
        f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &lost);
        values.push_back(f);
      }
    return DenseElementsAttr::get(type, values);
  }
  auto intType = dyn_cast<IntegerType>(element);
  if (!intType)
    return {};
  SmallVector<APInt> values;
  unsigned width = intType.getWidth();
  if (!floats.empty())
    for (double v : floats)
      values.push_back(width == 1 ? APInt(1, v != 0.0)
                                  : APInt(width, int64_t(v), /*signed=*/true,
                                          /*implicitTrunc=*/true));
  else
    for (int64_t v : ints)
      values.push_back(width == 1 ? APInt(1, v != 0)
                                  : APInt(width, v, /*signed=*/true,
                                          /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, values);
}

namespace {

/// Maps a flat index of the broadcast result to a flat index of an operand.
int64_t operandIndex(int64_t flat, ArrayRef<int64_t> resultShape,
                     ArrayRef<int64_t> shape) {
  int64_t index = 0, stride = 1;
  int64_t offset = resultShape.size() - shape.size();
  for (int64_t d = resultShape.size() - 1; d >= 0; --d) {
    int64_t coord = flat % resultShape[d];
    flat /= resultShape[d];
    if (d >= offset) {
      int64_t size = shape[d - offset];
      index += (size == 1 ? 0 : coord) * stride;
      stride *= size;
    }
  }
  return index;
}

using FloatFn = std::optional<double> (*)(double, double);
using IntFn = std::optional<int64_t> (*)(int64_t, int64_t);

/// Folds a broadcasting binary op over constants.
OpFoldResult foldBinary(Operation *op, ArrayRef<Attribute> operands,
                        FloatFn floatFn, IntFn intFn) {
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType || !resultType.hasStaticShape() || operands.size() != 2)
    return {};
  auto lhs = readConstant(operands[0]);
  auto rhs = readConstant(operands[1]);
  if (!lhs || !rhs || lhs->isFloat != rhs->isFloat)
    return {};
  auto shape = broadcastShapes(lhs->shape, rhs->shape);
  if (!shape || ArrayRef<int64_t>(*shape) != resultType.getShape())
    return {};
  int64_t count = resultType.getNumElements();
  if (count > kMaxFoldElements)
    return {};
  SmallVector<double> floats;
  SmallVector<int64_t> ints;
  for (int64_t i = 0; i < count; ++i) {
    int64_t li = operandIndex(i, *shape, lhs->shape);
    int64_t ri = operandIndex(i, *shape, rhs->shape);
    if (lhs->isFloat) {
      if (!floatFn)
        return {};
      auto v = floatFn(lhs->floats[li], rhs->floats[ri]);
      if (!v)
        return {};
      floats.push_back(*v);
    } else {
      if (!intFn)
        return {};
      auto v = intFn(lhs->ints[li], rhs->ints[ri]);
      if (!v)
        return {};
      ints.push_back(*v);
    }
  }
  return makeConstant(resultType, floats, ints);
}

/// Folds a unary op over a float constant.
OpFoldResult foldUnary(Operation *op, ArrayRef<Attribute> operands,
                       double (*floatFn)(double),
                       std::optional<int64_t> (*intFn)(int64_t) = nullptr) {
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType || !resultType.hasStaticShape())
    return {};
  auto input = readConstant(operands[0]);
  if (!input || ArrayRef<int64_t>(input->shape) != resultType.getShape())
    return {};
  SmallVector<double> floats;
  SmallVector<int64_t> ints;
  if (input->isFloat) {
    if (!floatFn)
      return {};
    for (double v : input->floats)
      floats.push_back(floatFn(v));
  } else {
    if (!intFn)
      return {};
    for (int64_t v : input->ints) {
      auto r = intFn(v);
      if (!r)
        return {};
      ints.push_back(*r);
    }
  }
  return makeConstant(resultType, floats, ints);
}

// Integer arithmetic wraps around like the two's complement hardware the
// kernels run on (and without signed-overflow UB here); makeConstant then
// truncates to the element width.
int64_t wrapAdd(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) + uint64_t(b));
}
int64_t wrapSub(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) - uint64_t(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) * uint64_t(b));
}

double relu(double x) { return x > 0 ? x : 0; }
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double reciprocal(double x) { return 1 / x; }
double neg(double x) { return -x; }
double signOf(double x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }
double softplus(double x) { return std::log1p(std::exp(x)); }
double softsign(double x) { return x / (1 + std::fabs(x)); }
double hardSwish(double x) {
  return x * std::max(0.0, std::min(1.0, x / 6 + 0.5));
}
double roundEven(double x) { return std::nearbyint(x); }
double notOf(double x) { return x == 0; }

} // namespace

#define FOLD_UNARY(Op, floatFn, intFn)                                         \
  OpFoldResult Op::fold(FoldAdaptor adaptor) {                                 \
    return foldUnary(*this, adaptor.getOperands(), floatFn, intFn);            \
  }

FOLD_UNARY(AbsOp, static_cast<double (*)(double)>(std::fabs),
           [](int64_t x) -> std::optional<int64_t> {
             return x < 0 ? wrapSub(0, x) : x;
           })
FOLD_UNARY(NegOp, neg,
           [](int64_t x) -> std::optional<int64_t> { return wrapSub(0, x); })
FOLD_UNARY(ExpOp, static_cast<double (*)(double)>(std::exp), nullptr)
FOLD_UNARY(LogOp, static_cast<double (*)(double)>(std::log), nullptr)
FOLD_UNARY(SqrtOp, static_cast<double (*)(double)>(std::sqrt), nullptr)
FOLD_UNARY(ReciprocalOp, reciprocal, nullptr)
FOLD_UNARY(ReluOp, relu,
           [](int64_t x) -> std::optional<int64_t> { return x > 0 ? x : 0; })
FOLD_UNARY(SigmoidOp, sigmoid, nullptr)
FOLD_UNARY(TanhOp, static_cast<double (*)(double)>(std::tanh), nullptr)
FOLD_UNARY(ErfOp, static_cast<double (*)(double)>(std::erf), nullptr)
FOLD_UNARY(FloorOp, static_cast<double (*)(double)>(std::floor), nullptr)
FOLD_UNARY(CeilOp, static_cast<double (*)(double)>(std::ceil), nullptr)
FOLD_UNARY(RoundOp, roundEven, nullptr)
FOLD_UNARY(SignOp, signOf, [](int64_t x) -> std::optional<int64_t> {
  return x > 0 ? 1 : (x < 0 ? -1 : 0);
})
FOLD_UNARY(SinOp, static_cast<double (*)(double)>(std::sin), nullptr)
FOLD_UNARY(CosOp, static_cast<double (*)(double)>(std::cos), nullptr)
FOLD_UNARY(TanOp, static_cast<double (*)(double)>(std::tan), nullptr)
FOLD_UNARY(AsinOp, static_cast<double (*)(double)>(std::asin), nullptr)
FOLD_UNARY(AcosOp, static_cast<double (*)(double)>(std::acos), nullptr)
FOLD_UNARY(AtanOp, static_cast<double (*)(double)>(std::atan), nullptr)
FOLD_UNARY(SinhOp, static_cast<double (*)(double)>(std::sinh), nullptr)
FOLD_UNARY(CoshOp, static_cast<double (*)(double)>(std::cosh), nullptr)
FOLD_UNARY(AsinhOp, static_cast<double (*)(double)>(std::asinh), nullptr)
FOLD_UNARY(AcoshOp, static_cast<double (*)(double)>(std::acosh), nullptr)
FOLD_UNARY(AtanhOp, static_cast<double (*)(double)>(std::atanh), nullptr)
FOLD_UNARY(SoftplusOp, softplus, nullptr)
FOLD_UNARY(SoftsignOp, softsign, nullptr)
FOLD_UNARY(HardSwishOp, hardSwish, nullptr)
FOLD_UNARY(BitwiseNotOp, nullptr,
           [](int64_t x) -> std::optional<int64_t> { return ~x; })
FOLD_UNARY(NotOp, notOf,
           [](int64_t x) -> std::optional<int64_t> { return x == 0; })
#undef FOLD_UNARY

OpFoldResult IdentityOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto resultType = dyn_cast<RankedTensorType>(getType());
  auto input = readConstant(adaptor.getInput());
  if (!resultType || !resultType.hasStaticShape() || !input ||
      ArrayRef<int64_t>(input->shape) != resultType.getShape())
    return {};
  // Float to integer truncates toward zero (ONNX Cast); makeConstant does the
  // truncation through the int64 path.
  if (input->isFloat && isa<IntegerType>(resultType.getElementType())) {
    SmallVector<int64_t> ints;
    for (double v : input->floats) {
      if (!std::isfinite(v))
        return {};
      if (resultType.getElementType().isInteger(1))
        ints.push_back(v != 0.0);
      else
        ints.push_back(int64_t(std::trunc(v)));
    }
    return makeConstant(resultType, {}, ints);
  }
  if (!input->isFloat && resultType.getElementType().isInteger(1)) {
    SmallVector<int64_t> ints;
    for (int64_t v : input->ints)
      ints.push_back(v != 0);
    return makeConstant(resultType, {}, ints);
  }
  return makeConstant(resultType, input->floats, input->ints);
}

#define FOLD_BINARY(Op, floatFn, intFn)                                        \
  OpFoldResult Op::fold(FoldAdaptor adaptor) {                                 \
    return foldBinary(*this, adaptor.getOperands(), floatFn, intFn);           \
  }

/// Like FOLD_BINARY, but first tries `identity(op, lhsAttr, rhsAttr)`, which
/// returns an operand when the op leaves it unchanged (x + 0, x * 1).
#define FOLD_BINARY_WITH_IDENTITY(Op, identity, floatFn, intFn)                \
  OpFoldResult Op::fold(FoldAdaptor adaptor) {                                 \
    if (Value same = identity(*this, adaptor.getLhs(), adaptor.getRhs()))      \
      return same;                                                             \
    return foldBinary(*this, adaptor.getOperands(), floatFn, intFn);           \
  }

namespace {

/// True when `attr` is a constant whose elements all equal `value`.
bool isSplatOf(Attribute attr, double value) {
  auto elements = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!elements || !elements.isSplat())
    return false;
  if (isa<FloatType>(elements.getElementType()))
    return elements.getSplatValue<APFloat>().convertToDouble() == value;
  if (auto intType = dyn_cast<IntegerType>(elements.getElementType())) {
    APInt v = elements.getSplatValue<APInt>();
    bool isUnsigned = intType.isUnsigned() || intType.getWidth() == 1;
    return double(isUnsigned ? int64_t(v.getZExtValue()) : v.getSExtValue()) ==
           value;
  }
  return false;
}

/// `operand` when `other` is the neutral constant `neutral` and the op's
/// result type is exactly the operand's, so no broadcast is dropped.
Value neutralOperand(Operation *op, Value operand, Attribute other,
                     double neutral) {
  if (operand.getType() == op->getResult(0).getType() &&
      isSplatOf(other, neutral))
    return operand;
  return {};
}

/// x + 0 and 0 + x. For floats this turns -0.0 + 0.0 (which is +0.0) into
/// -0.0; the sign of a zero sum is not something exported models rely on,
/// and dropping the add lets fusion see through bias-free layers.
template <typename Op> Value addIdentity(Op op, Attribute lhs, Attribute rhs) {
  if (Value x = neutralOperand(op, op.getLhs(), rhs, 0.0))
    return x;
  return neutralOperand(op, op.getRhs(), lhs, 0.0);
}
/// x - 0 (exact, including for -0.0).
template <typename Op> Value subIdentity(Op op, Attribute, Attribute rhs) {
  return neutralOperand(op, op.getLhs(), rhs, 0.0);
}
/// x * 1 and 1 * x (exact, NaN and infinities included).
template <typename Op> Value mulIdentity(Op op, Attribute lhs, Attribute rhs) {
  if (Value x = neutralOperand(op, op.getLhs(), rhs, 1.0))
    return x;
  return neutralOperand(op, op.getRhs(), lhs, 1.0);
}
/// x / 1 and x ** 1 (exact).
template <typename Op> Value rhsOneIdentity(Op op, Attribute, Attribute rhs) {
  return neutralOperand(op, op.getLhs(), rhs, 1.0);
}
/// max(x, x) and min(x, x).
template <typename Op> Value idempotentIdentity(Op op, Attribute, Attribute) {
  if (op.getLhs() == op.getRhs() && op.getLhs().getType() == op.getType())
    return op.getLhs();
  return {};
}

} // namespace

FOLD_BINARY_WITH_IDENTITY(
    AddOp, addIdentity,
    [](double a, double b) -> std::optional<double> { return a + b; },
    [](int64_t a, int64_t b) -> std::optional<int64_t> {
      return wrapAdd(a, b);
    })
FOLD_BINARY_WITH_IDENTITY(
    SubOp, subIdentity,
    [](double a, double b) -> std::optional<double> { return a - b; },
    [](int64_t a, int64_t b) -> std::optional<int64_t> {
      return wrapSub(a, b);
    })
FOLD_BINARY_WITH_IDENTITY(
    MulOp, mulIdentity,
    [](double a, double b) -> std::optional<double> { return a * b; },
    [](int64_t a, int64_t b) -> std::optional<int64_t> {
      return wrapMul(a, b);
    })
FOLD_BINARY_WITH_IDENTITY(
    DivOp, rhsOneIdentity,
    [](double a, double b) -> std::optional<double> { return a / b; },
    [](int64_t a, int64_t b) -> std::optional<int64_t> {
      // Integer division truncates (C semantics, as ONNX Runtime does).
      if (b == 0 || (a == INT64_MIN && b == -1))
        return std::nullopt;
      return a / b;
    })
FOLD_BINARY_WITH_IDENTITY(
    PowOp, rhsOneIdentity,
    [](double a, double b) -> std::optional<double> { return std::pow(a, b); },
    [](int64_t a, int64_t b) -> std::optional<int64_t> {
      if (b < 0)
        return std::nullopt;
      return int64_t(std::pow(double(a), double(b)));
    })
FOLD_BINARY_WITH_IDENTITY(
    MaxOp, idempotentIdentity,
    [](double a, double b) -> std::optional<double> {
      return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    },
    [](int64_t a, int64_t b) -> std::optional<int64_t> {
      return std::max(a, b);
    })
FOLD_BINARY_WITH_IDENTITY(
    MinOp, idempotentIdentity,
    [](double a, double b) -> std::optional<double> {
      return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
    },
    [](int64_t a, int64_t b) -> std::optional<int64_t> {
      return std::min(a, b);
    })
FOLD_BINARY(BitwiseAndOp, nullptr,
            [](int64_t a, int64_t b) -> std::optional<int64_t> {
              return a & b;
            })
FOLD_BINARY(BitwiseOrOp, nullptr,
            [](int64_t a, int64_t b) -> std::optional<int64_t> {
              return a | b;
            })
FOLD_BINARY(BitwiseXorOp, nullptr,
            [](int64_t a, int64_t b) -> std::optional<int64_t> {
              return a ^ b;
            })
FOLD_BINARY(
    EqualOp, [](double a, double b) -> std::optional<double> { return a == b; },
    [](int64_t a, int64_t b) -> std::optional<int64_t> { return a == b; })
FOLD_BINARY(
    LessOp, [](double a, double b) -> std::optional<double> { return a < b; },
    [](int64_t a, int64_t b) -> std::optional<int64_t> { return a < b; })
FOLD_BINARY(
    GreaterOp,
    [](double a, double b) -> std::optional<double> { return a > b; },
    [](int64_t a, int64_t b) -> std::optional<int64_t> { return a > b; })
FOLD_BINARY(
    LessEqualOp,
    [](double a, double b) -> std::optional<double> { return a <= b; },
    [](int64_t a, int64_t b) -> std::optional<int64_t> { return a <= b; })
FOLD_BINARY(
    GreaterEqualOp,
    [](double a, double b) -> std::optional<double> { return a >= b; },
    [](int64_t a, int64_t b) -> std::optional<int64_t> { return a >= b; })
// Logical ops on i1: x and x, x or x are x; otherwise fold constants.
FOLD_BINARY_WITH_IDENTITY(AndOp, idempotentIdentity, nullptr,
                          [](int64_t a, int64_t b) -> std::optional<int64_t> {
                            return a && b;
                          })
FOLD_BINARY_WITH_IDENTITY(OrOp, idempotentIdentity, nullptr,
                          [](int64_t a, int64_t b) -> std::optional<int64_t> {
                            return a || b;
                          })
FOLD_BINARY(XorOp, nullptr, [](int64_t a, int64_t b) -> std::optional<int64_t> {
  return (a != 0) != (b != 0);
})
#undef FOLD_BINARY
#undef FOLD_BINARY_WITH_IDENTITY

//===----------------------------------------------------------------------===//
// Mod, BitShift, PRelu, Gelu: op-specific verifiers
//===----------------------------------------------------------------------===//

LogicalResult ModOp::verify() {
  int64_t fmod = getFmod();
  if (fmod != 0 && fmod != 1)
    return emitOpError("fmod must be 0 or 1, got ") << fmod;
  Type element = getElementTypeOrSelf(getLhs());
  if (isa<FloatType>(element) && fmod != 1)
    return emitOpError("floating-point operands (")
           << element << ") require fmod = 1";
  if (!isa<FloatType, IntegerType>(element) || element.isInteger(1))
    return emitOpError("expects integer or floating-point operands, got ")
           << element;
  return verifyBroadcastElementwise(*this);
}

namespace {
/// Folds an integer binary op like foldBinary, but with a capturing callable:
/// Mod and BitShift depend on an attribute (fmod, direction) and BitShift on
/// the element width. Operands arrive sign- or zero-extended to int64.
OpFoldResult
foldIntBinary(Operation *op, ArrayRef<Attribute> operands,
              llvm::function_ref<std::optional<int64_t>(int64_t, int64_t)> fn) {
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType || !resultType.hasStaticShape() || operands.size() != 2)
    return {};
  auto lhs = readConstant(operands[0]);
  auto rhs = readConstant(operands[1]);
  if (!lhs || !rhs || lhs->isFloat || rhs->isFloat)
    return {};
  auto shape = broadcastShapes(lhs->shape, rhs->shape);
  if (!shape || ArrayRef<int64_t>(*shape) != resultType.getShape() ||
      resultType.getNumElements() > kMaxFoldElements)
    return {};
  SmallVector<int64_t> ints;
  for (int64_t i = 0, e = resultType.getNumElements(); i < e; ++i) {
    auto v = fn(lhs->ints[operandIndex(i, *shape, lhs->shape)],
                rhs->ints[operandIndex(i, *shape, rhs->shape)]);
    if (!v)
      return {};
    ints.push_back(*v);
  }
  return makeConstant(resultType, {}, ints);
}
} // namespace

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  if (isa<FloatType>(getElementTypeOrSelf(getType())))
    // Floats require fmod = 1 (the verifier checks): C fmod.
    return foldBinary(
        *this, adaptor.getOperands(),
        [](double a, double b) -> std::optional<double> {
          return std::fmod(a, b);
        },
        nullptr);
  bool cStyle = getFmod() == 1;
  return foldIntBinary(
      *this, adaptor.getOperands(),
      [cStyle](int64_t a, int64_t b) -> std::optional<int64_t> {
        if (b == 0 || (a == INT64_MIN && b == -1))
          return std::nullopt;
        int64_t r = a % b;
        // fmod = 0: the remainder takes the divisor's sign (Python's %).
        if (!cStyle && r != 0 && ((r < 0) != (b < 0)))
          r += b;
        return r;
      });
}

LogicalResult BitShiftOp::verify() {
  StringRef direction = getDirection();
  if (direction != "LEFT" && direction != "RIGHT")
    return emitOpError("direction must be \"LEFT\" or \"RIGHT\", got \"")
           << direction << "\"";
  auto element = dyn_cast<IntegerType>(getElementTypeOrSelf(getLhs()));
  if (!element || !element.isUnsigned())
    return emitOpError("expects unsigned integer operands, got ")
           << getElementTypeOrSelf(getLhs());
  return verifyBroadcastElementwise(*this);
}

OpFoldResult BitShiftOp::fold(FoldAdaptor adaptor) {
  auto element = dyn_cast<IntegerType>(getElementTypeOrSelf(getType()));
  if (!element)
    return {};
  unsigned width = element.getWidth();
  bool left = getDirection() == "LEFT";
  return foldIntBinary(*this, adaptor.getOperands(),
                       [=](int64_t a, int64_t b) -> std::optional<int64_t> {
                         // Operands are unsigned (zero-extended); a 64-bit
                         // amount above INT64_MAX reads as negative and shifts
                         // everything out too.
                         uint64_t value = uint64_t(a);
                         if (b < 0 || uint64_t(b) >= width)
                           return 0;
                         return int64_t(left ? value << b : value >> b);
                       });
}

LogicalResult PReluOp::verify() {
  if (failed(verifyBroadcastElementwise(*this)))
    return failure();
  // slope broadcasts to x, never the other way: x's shape is the result's.
  auto x = cast<TensorType>(getLhs().getType());
  auto slope = cast<TensorType>(getRhs().getType());
  if (x.hasRank() && slope.hasRank()) {
    auto shape = broadcastShapes(x.getShape(), slope.getShape());
    if (shape && failed(verifyCompatibleShape(*shape, x.getShape())))
      return emitOpError("slope ")
             << slope << " does not broadcast to the input " << x;
  }
  return success();
}

LogicalResult GeluOp::verify() {
  StringRef approximate = getApproximate();
  if (approximate != "none" && approximate != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << approximate << "\"";
  return verifyUnaryElementwise(*this);
}

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferBroadcastElementwise(*this, types);
}

LogicalResult WhereOp::verify() {
  if (getElementTypeOrSelf(getX()) != getElementTypeOrSelf(getY()) ||
      getElementTypeOrSelf(getX()) != getElementTypeOrSelf(getOutput()))
    return emitOpError("x, y and the result must share an element type");
  return verifyBroadcastElementwise(*this);
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  // where(c, x, x) is x when no broadcasting is involved.
  if (getX() == getY() && getX().getType() == getType())
    return getX();
  if (auto cond = dyn_cast_or_null<SplatElementsAttr>(adaptor.getCondition())) {
    Value chosen = cond.getSplatValue<bool>() ? getX() : getY();
    if (chosen.getType() == getType())
      return chosen;
  }
  // All three constant: shape arithmetic. The TorchScript exporter writes
  // expand(n, -1, -1) as Where(Equal(sizes, -1), ones, sizes).
  auto resultType = dyn_cast<RankedTensorType>(getType());
  if (!resultType || !resultType.hasStaticShape() ||
      resultType.getNumElements() > kMaxFoldElements)
    return {};
  auto cond = readConstant(adaptor.getCondition());
  auto x = readConstant(adaptor.getX());
  auto y = readConstant(adaptor.getY());
  if (!cond || !x || !y || cond->isFloat || x->isFloat != y->isFloat)
    return {};
  auto xy = broadcastShapes(x->shape, y->shape);
  auto shape = xy ? broadcastShapes(cond->shape, *xy) : std::nullopt;
  if (!shape || ArrayRef<int64_t>(*shape) != resultType.getShape())
    return {};
  SmallVector<double> floats;
  SmallVector<int64_t> ints;
  for (int64_t i = 0, e = resultType.getNumElements(); i < e; ++i) {
    bool pick = cond->ints[operandIndex(i, *shape, cond->shape)] != 0;
    const ConstValues &from = pick ? *x : *y;
    int64_t at = operandIndex(i, *shape, from.shape);
    if (from.isFloat)
      floats.push_back(from.floats[at]);
    else
      ints.push_back(from.ints[at]);
  }
  return makeConstant(resultType, floats, ints);
}

//===----------------------------------------------------------------------===//
// Clip
//===----------------------------------------------------------------------===//

LogicalResult ClipOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferUnaryElementwise(*this, types);
}

LogicalResult ClipOp::verify() {
  for (Value bound : {getMin(), getMax()}) {
    if (!bound)
      continue;
    auto type = cast<TensorType>(bound.getType());
    if (type.getElementType() != getElementTypeOrSelf(getInput()))
      return emitOpError("bound element type ")
             << type.getElementType() << " differs from the input's";
    if (type.hasRank() && type.getNumElements() != 1 && type.hasStaticShape())
      return emitOpError("bounds must be scalars, got ") << type;
  }
  if (getElementTypeOrSelf(getInput()) != getElementTypeOrSelf(getOutput()))
    return emitOpError("result element type differs from the input's");
  return verifyUnaryElementwise(*this);
}
