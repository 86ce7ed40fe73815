//===- Elementwise.cpp - elementwise graph ops to linalg --------*- C++ -*-===//
//
// The first step of the kernel layer: graph dialect elementwise ops on ranked
// tensors become `linalg.generic` ops on tensors whose bodies compute one
// element with `arith` and `math` ops, writing into a `tensor.empty`. Numpy
// broadcasting is expressed in the operands' indexing maps, as upstream's
// tosa-to-linalg does: ranks are aligned on the right, a missing leading
// dimension is dropped from the map and a static size-1 dimension that
// broadcasts is read at index 0. Ops that cannot be lowered here stay as they
// are, so the pass runs on any module.
//
// Unsigned element types arrive as signless tensors (the pass's type
// converter); the bodies pick unsigned arith ops (divui, maxui, cmpi ult,
// uitofp, extui, ...) by looking at the graph op's own types. Transcendental
// functions added beyond the first set compute f16/bf16 in f32.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "Patterns.h"
#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

#include <cmath>
#include <functional>
#include <limits>

#define DEBUG_TYPE "strata-convert-graph-to-linalg"

using strata::detail::BodyBuilder;

using namespace mlir;
namespace graph = strata::graph;

//===----------------------------------------------------------------------===//
// Element types and scalar helpers
//===----------------------------------------------------------------------===//

static Type elementTypeOf(Value value) { return getElementTypeOrSelf(value); }

/// Signless integers (i1 is ONNX BOOL) and the unsigned ONNX types `uiN`.
/// Signed `siN` never comes out of the importer.
bool strata::detail::isSupportedInt(Type type) {
  auto integer = dyn_cast<IntegerType>(type);
  return integer && !integer.isSigned();
}

Type strata::detail::getSignlessType(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type);
      integer && !integer.isSignless())
    return IntegerType::get(type.getContext(), integer.getWidth());
  return type;
}

using strata::detail::convertScalar;
using strata::detail::getSignlessType;
using strata::detail::isComputeFloat;
using strata::detail::isHalfFloat;
using strata::detail::isSupportedInt;

/// Integers that take part in arithmetic; ONNX has no arithmetic on BOOL.
static bool isArithInt(Type type) {
  return isSupportedInt(type) && type.getIntOrFloatBitWidth() > 1;
}

static bool isUnsigned(Type type) { return type.isUnsignedInteger(); }

static Value floatConstant(OpBuilder &b, Location loc, Type type,
                           double value) {
  return arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getFloatAttr(type, value)));
}

static Value intConstant(OpBuilder &b, Location loc, Type type, int64_t value) {
  return arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getIntegerAttr(getSignlessType(type), value)));
}

/// Converts a scalar between supported float and integer types with ONNX
/// Cast semantics: float to int truncates toward zero, anything to i1 is
/// "nonzero" (NaN included), i1 and unsigned integers are zero-extended (i1
/// to a number is 0 or 1), other integers are sign-extended.
Value strata::detail::convertScalar(OpBuilder &b, Location loc, Value value,
                                    Type from, Type to) {
  Type target = getSignlessType(to);
  if (from == to || value.getType() == target) {
    // Same type, or the same bits under another signedness (i8 and ui8).
    if (!(isa<FloatType>(from) || isa<FloatType>(to)) || from == to)
      return value;
  }
  bool zeroExtend = from.isInteger(1) || isUnsigned(from);
  if (isa<FloatType>(from) && isa<FloatType>(to)) {
    unsigned fromWidth = from.getIntOrFloatBitWidth();
    unsigned toWidth = to.getIntOrFloatBitWidth();
    if (fromWidth < toWidth)
      return arith::ExtFOp::create(b, loc, to, value);
    if (fromWidth > toWidth)
      return arith::TruncFOp::create(b, loc, to, value);
    // Same width, different formats (f16 and bf16): go through f32, which
    // holds both exactly.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  if (isa<FloatType>(from)) {
    if (to.isInteger(1))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   floatConstant(b, loc, from, 0.0));
    if (isUnsigned(to))
      return arith::FPToUIOp::create(b, loc, target, value);
    return arith::FPToSIOp::create(b, loc, target, value);
  }
  if (isa<FloatType>(to)) {
    if (zeroExtend)
      return arith::UIToFPOp::create(b, loc, to, value);
    return arith::SIToFPOp::create(b, loc, to, value);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (toWidth == 1)
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                 intConstant(b, loc, from, 0));
  if (fromWidth < toWidth) {
    if (zeroExtend)
      return arith::ExtUIOp::create(b, loc, target, value);
    return arith::ExtSIOp::create(b, loc, target, value);
  }
  if (fromWidth > toWidth)
    return arith::TruncIOp::create(b, loc, target, value);
  return value;
}

/// Applies `fn` to a float scalar of `type`, in f32 when `type` is f16 or
/// bf16 (the result is rounded back).
static Value computeWide(OpBuilder &b, Location loc, Type type, Value x,
                         llvm::function_ref<Value(Value)> fn) {
  if (!isHalfFloat(type))
    return fn(x);
  Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  return arith::TruncFOp::create(b, loc, type, fn(wide));
}

/// GELU of a float scalar: exact, x * 0.5 * (1 + erf(x / sqrt(2))), or the
/// tanh approximation 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
static Value buildGelu(OpBuilder &b, Location loc, Value x, bool tanhApprox) {
  Type type = x.getType();
  Value half = floatConstant(b, loc, type, 0.5);
  Value one = floatConstant(b, loc, type, 1.0);
  Value inner;
  if (tanhApprox) {
    Value cube =
        arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value poly = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, floatConstant(b, loc, type, 0.044715),
                              cube));
    Value scaled = arith::MulFOp::create(
        b, loc, floatConstant(b, loc, type, 0.7978845608028654), poly);
    inner = math::TanhOp::create(b, loc, scaled);
  } else {
    // Multiplying by 1/sqrt(2) equals dividing by sqrt(2) up to rounding,
    // and is cheaper.
    Value scaled = arith::MulFOp::create(
        b, loc, x, floatConstant(b, loc, type, 0.70710678118654752440));
    inner = math::ErfOp::create(b, loc, scaled);
  }
  Value factor = arith::AddFOp::create(b, loc, one, inner);
  return arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, half),
                               factor);
}

/// The exact GELU of a bf16 value widened to f32 (`x`), to be rounded back
/// to bf16: GELU(x) = x * Phi(x), and with t = |x| and E = Phi(-t) =
/// erfc(t / sqrt 2) / 2, GELU(x) = x * E for x < 0 and x * (1 - E) for
/// x >= 0, neither side cancelling. E = exp2(P(s)), P a degree-10
/// polynomial in s = min(t, 14.5) * 2/14.5 - 1 fitted to log2 Phi(-t) with
/// weights 1/(1 + t), which favour small t, where the results lie closest
/// to bf16's rounding boundaries (scripts/fit-gelu-bf16.py fits it and
/// checks it; unweighted, it took degree 13, and was 14: 4 FMAs a value
/// more). log2 Phi(-t) is -156.9 at 14.5, so E is 0 in f32 from there on.
/// Every finite bf16 input then rounds as float64's GELU does (with a
/// correctly rounded exp2, the CPU's, and with every exp2 result moved by
/// up to 2 ulps, the bound of the GPU's ex2.approx), where erff in f32 leaves
/// 1 + erf(x / sqrt 2) = 0 below about -5.3. It is also about two thirds of
/// the instructions of libdevice's erff (which evaluates two polynomials and
/// selects): the bf16 GELU kernels after BERT's and the GEMM + GELU
/// workload's products were as much compute- as memory-bound. For bf16
/// only: f16's 10 bits of mantissa would need a closer fit.
///
/// The exponent is shifted: E' = exp2(P(s) + 24) (the 24 folded into the
/// constant term), E = E' * 2^-24. exp2 is marked `afn`, which lets the GPU
/// flush a subnormal result (one MUFU.EX2, where keeping subnormals costs a
/// compare and two multiplies per value): E' is subnormal only when E is
/// below 2^-150, which rounds to 0 in f32 anyway. The multiply by 2^-24 then
/// rounds E into the subnormals as the unshifted exp2 did; every input whose
/// GELU is at least 1e-37 still rounds as float64's (scripts/fit-gelu-bf16.py
/// --check emulates this form).
static Value buildGeluBf16(OpBuilder &b, Location loc, Value x) {
  static constexpr double kCoefficients[] = {
      -42.125790758139601,  -77.224185439162142,   -37.266792100546482,
      -0.38929287604422813, 0.26546011276420939,   -0.19056360090058722,
      0.098698320239283016, -0.043827223236824385, 0.075636587462231814,
      -0.0790548489029861,  0.025872422423348685};
  constexpr int kDegree = 10;
  constexpr double kRange = 14.5;
  Type type = x.getType();
  Value t = math::AbsFOp::create(b, loc, x);
  t = arith::MinimumFOp::create(b, loc, t, floatConstant(b, loc, type, kRange));
  Value s =
      math::FmaOp::create(b, loc, t, floatConstant(b, loc, type, 2.0 / kRange),
                          floatConstant(b, loc, type, -1.0));
  constexpr double kShift = 24;
  Value p = floatConstant(b, loc, type, kCoefficients[kDegree]);
  for (int i = kDegree - 1; i >= 0; --i)
    p = math::FmaOp::create(
        b, loc, p, s,
        floatConstant(b, loc, type, kCoefficients[i] + (i ? 0 : kShift)));
  Value e = math::Exp2Op::create(b, loc, p, arith::FastMathFlags::afn);
  e = arith::MulFOp::create(b, loc, e,
                            floatConstant(b, loc, type, std::exp2(-kShift)));
  Value negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                         floatConstant(b, loc, type, 0.0));
  Value phi = arith::SelectOp::create(
      b, loc, negative, e,
      arith::SubFOp::create(b, loc, floatConstant(b, loc, type, 1.0), e));
  return arith::MulFOp::create(b, loc, x, phi);
}

/// ONNX Mod. `fmod`: the remainder has the dividend's sign (C fmod, arith's
/// remf/remsi); otherwise the divisor's, like Python's `%`: a nonzero
/// remainder whose sign differs from the divisor's gets the divisor added.
/// Unsigned remainders have no sign to choose. Integer division by zero is
/// undefined, as for Div.
static Value buildMod(OpBuilder &b, Location loc, Type type, bool fmod,
                      Value lhs, Value rhs) {
  if (isUnsigned(type))
    return arith::RemUIOp::create(b, loc, lhs, rhs);
  if (isa<FloatType>(type)) {
    return computeWide(b, loc, type, lhs, [&](Value x) -> Value {
      Value y = rhs;
      if (x.getType() != rhs.getType())
        y = arith::ExtFOp::create(b, loc, x.getType(), rhs);
      Value rem = arith::RemFOp::create(b, loc, x, y);
      if (fmod)
        return rem;
      Value zero = floatConstant(b, loc, x.getType(), 0.0);
      Value nonzero =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, rem, zero);
      Value remNegative =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, rem, zero);
      Value divNegative =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, y, zero);
      Value signsDiffer =
          arith::XOrIOp::create(b, loc, remNegative, divNegative);
      Value adjust = arith::AndIOp::create(b, loc, nonzero, signsDiffer);
      return arith::SelectOp::create(
          b, loc, adjust, arith::AddFOp::create(b, loc, rem, y), rem);
    });
  }
  Value rem = arith::RemSIOp::create(b, loc, lhs, rhs);
  if (fmod)
    return rem;
  Value zero = intConstant(b, loc, type, 0);
  Value nonzero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rem, zero);
  Value remNegative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rem, zero);
  Value divNegative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rhs, zero);
  Value signsDiffer = arith::XOrIOp::create(b, loc, remNegative, divNegative);
  Value adjust = arith::AndIOp::create(b, loc, nonzero, signsDiffer);
  return arith::SelectOp::create(b, loc, adjust,
                                 arith::AddIOp::create(b, loc, rem, rhs), rem);
}

/// sign(x): -1, 0 or 1 in x's type; a float NaN (and -0) stays as it is.
static Value buildSign(OpBuilder &b, Location loc, Type type, Value x) {
  if (isa<FloatType>(type)) {
    Value zero = floatConstant(b, loc, type, 0.0);
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    Value negative =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
    Value inner = arith::SelectOp::create(b, loc, negative,
                                          floatConstant(b, loc, type, -1.0), x);
    return arith::SelectOp::create(b, loc, positive,
                                   floatConstant(b, loc, type, 1.0), inner);
  }
  Value zero = intConstant(b, loc, type, 0);
  Value one = intConstant(b, loc, type, 1);
  if (isUnsigned(type)) {
    Value nonzero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero);
    return arith::SelectOp::create(b, loc, nonzero, one, zero);
  }
  Value positive =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
  Value inner = arith::SelectOp::create(b, loc, negative,
                                        intConstant(b, loc, type, -1), zero);
  return arith::SelectOp::create(b, loc, positive, one, inner);
}

/// Logical shifts of unsigned integers. arith's shifts are poison for an
/// amount of at least the bit width; ONNX (like numpy on unsigned types)
/// gives 0 there, so such amounts select 0.
static Value buildBitShift(OpBuilder &b, Location loc, Type type, bool left,
                           Value x, Value amount) {
  Value shifted = left ? arith::ShLIOp::create(b, loc, x, amount).getResult()
                       : arith::ShRUIOp::create(b, loc, x, amount).getResult();
  Value width = intConstant(b, loc, type, type.getIntOrFloatBitWidth());
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, amount, width);
  return arith::SelectOp::create(b, loc, inRange, shifted,
                                 intConstant(b, loc, type, 0));
}

//===----------------------------------------------------------------------===//
// Which ops lower, and their bodies
//===----------------------------------------------------------------------===//

/// A float-only unary op that maps to one upstream op, computed in the
/// operand's own type (kept so for the ops whose LLVM lowering handles f16
/// and bf16 directly).
template <typename ScalarOp> static BodyBuilder unaryFloat(Operation *op) {
  if (!isComputeFloat(elementTypeOf(op->getOperand(0))))
    return nullptr;
  return [](OpBuilder &b, Location loc, ValueRange args) -> Value {
    return ScalarOp::create(b, loc, args[0]);
  };
}

/// A float-only unary op that maps to one upstream op, computed in f32 for
/// f16 and bf16 (these become libm calls, which exist for f32 and f64 only).
template <typename ScalarOp> static BodyBuilder unaryFloatWide(Operation *op) {
  Type type = elementTypeOf(op->getOperand(0));
  if (!isComputeFloat(type))
    return nullptr;
  return [type](OpBuilder &b, Location loc, ValueRange args) -> Value {
    return computeWide(b, loc, type, args[0], [&](Value x) -> Value {
      return ScalarOp::create(b, loc, x);
    });
  };
}

/// A binary arithmetic op on floats or (non-bool) integers; `UIntOp` is used
/// for unsigned element types.
template <typename FloatOp, typename IntOp, typename UIntOp = IntOp>
static BodyBuilder binaryArith(Operation *op) {
  Type type = elementTypeOf(op->getOperand(0));
  if (elementTypeOf(op->getOperand(1)) != type ||
      elementTypeOf(op->getResult(0)) != type)
    return nullptr;
  if (isComputeFloat(type))
    return [](OpBuilder &b, Location loc, ValueRange args) -> Value {
      return FloatOp::create(b, loc, args[0], args[1]);
    };
  if (isArithInt(type) && isUnsigned(type))
    return [](OpBuilder &b, Location loc, ValueRange args) -> Value {
      return UIntOp::create(b, loc, args[0], args[1]);
    };
  if (isArithInt(type))
    return [](OpBuilder &b, Location loc, ValueRange args) -> Value {
      return IntOp::create(b, loc, args[0], args[1]);
    };
  return nullptr;
}

/// A bitwise op on integers of one type (i1 included).
template <typename IntOp> static BodyBuilder bitwise(Operation *op) {
  Type type = elementTypeOf(op->getOperand(0));
  if (elementTypeOf(op->getOperand(1)) != type ||
      elementTypeOf(op->getResult(0)) != type || !isSupportedInt(type))
    return nullptr;
  return [](OpBuilder &b, Location loc, ValueRange args) -> Value {
    return IntOp::create(b, loc, args[0], args[1]);
  };
}

/// A comparison. Float predicates are ordered (false when either side is
/// NaN), as ONNX and numpy define them; integers compare as signed or
/// unsigned per their type. Only `equal` is meaningful on i1.
static BodyBuilder compare(Operation *op, arith::CmpFPredicate floatPredicate,
                           arith::CmpIPredicate signedPredicate,
                           arith::CmpIPredicate unsignedPredicate,
                           bool allowBool) {
  Type type = elementTypeOf(op->getOperand(0));
  if (elementTypeOf(op->getOperand(1)) != type)
    return nullptr;
  if (isComputeFloat(type))
    return [floatPredicate](OpBuilder &b, Location loc,
                            ValueRange args) -> Value {
      return arith::CmpFOp::create(b, loc, floatPredicate, args[0], args[1]);
    };
  if (isArithInt(type) || (allowBool && type.isInteger(1))) {
    arith::CmpIPredicate predicate =
        isUnsigned(type) ? unsignedPredicate : signedPredicate;
    return [predicate](OpBuilder &b, Location loc, ValueRange args) -> Value {
      return arith::CmpIOp::create(b, loc, predicate, args[0], args[1]);
    };
  }
  return nullptr;
}

/// pow: a float base with a float exponent (converted to the base's type), a
/// float base with a signed (fpowi) or unsigned (converted to float)
/// exponent, integer base and exponent of one type, or an integer base with
/// a float exponent (computed in f64 and truncated toward zero, as
/// onnxruntime does).
static BodyBuilder buildPow(graph::PowOp op) {
  Type base = elementTypeOf(op.getLhs());
  Type exponent = elementTypeOf(op.getRhs());
  if (elementTypeOf(op.getOutput()) != base)
    return nullptr;
  if (isComputeFloat(base) && isComputeFloat(exponent))
    return
        [base, exponent](OpBuilder &b, Location loc, ValueRange args) -> Value {
          return math::PowFOp::create(
              b, loc, args[0], convertScalar(b, loc, args[1], exponent, base));
        };
  // A signed integer exponent goes through powf on the converted exponent
  // (exact below 2^53, and libm's pow handles negative bases with integral
  // exponents): math.fpowi lowers to llvm.powi, which needs an i32 exponent
  // and makes LLVM abort on others.
  if (isComputeFloat(base) && isArithInt(exponent) && !isUnsigned(exponent))
    return [base](OpBuilder &b, Location loc, ValueRange args) -> Value {
      return math::PowFOp::create(
          b, loc, args[0], arith::SIToFPOp::create(b, loc, base, args[1]));
    };
  if (isComputeFloat(base) && isArithInt(exponent))
    return
        [base, exponent](OpBuilder &b, Location loc, ValueRange args) -> Value {
          return math::PowFOp::create(
              b, loc, args[0], convertScalar(b, loc, args[1], exponent, base));
        };
  if (isArithInt(base) && !isUnsigned(base) && exponent == base)
    return [](OpBuilder &b, Location loc, ValueRange args) -> Value {
      return math::IPowIOp::create(b, loc, args[0], args[1]);
    };
  if (isArithInt(base) && isComputeFloat(exponent))
    return
        [base, exponent](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Type f64 = b.getF64Type();
          Value x = convertScalar(b, loc, args[0], base, f64);
          Value y = convertScalar(b, loc, args[1], exponent, f64);
          Value power = math::PowFOp::create(b, loc, x, y);
          return convertScalar(b, loc, power, f64, base);
        };
  return nullptr;
}

/// Clip: max(x, min) then min(.., max), so min > max gives max (ONNX). Float
/// NaN propagates. The bounds are optional operands (scalars that broadcast).
static BodyBuilder buildClip(graph::ClipOp op) {
  Type type = elementTypeOf(op.getInput());
  if (elementTypeOf(op.getOutput()) != type ||
      (op.getMin() && elementTypeOf(op.getMin()) != type) ||
      (op.getMax() && elementTypeOf(op.getMax()) != type))
    return nullptr;
  bool hasMin = static_cast<bool>(op.getMin());
  bool hasMax = static_cast<bool>(op.getMax());
  if (isComputeFloat(type))
    return [=](OpBuilder &b, Location loc, ValueRange args) -> Value {
      Value x = args[0];
      if (hasMin)
        x = arith::MaximumFOp::create(b, loc, x, args[1]);
      if (hasMax)
        x = arith::MinimumFOp::create(b, loc, x, args[hasMin ? 2 : 1]);
      return x;
    };
  if (isArithInt(type)) {
    bool isUnsignedType = isUnsigned(type);
    return [=](OpBuilder &b, Location loc, ValueRange args) -> Value {
      Value x = args[0];
      if (hasMin)
        x = isUnsignedType
                ? arith::MaxUIOp::create(b, loc, x, args[1]).getResult()
                : arith::MaxSIOp::create(b, loc, x, args[1]).getResult();
      if (hasMax) {
        Value bound = args[hasMin ? 2 : 1];
        x = isUnsignedType
                ? arith::MinUIOp::create(b, loc, x, bound).getResult()
                : arith::MinSIOp::create(b, loc, x, bound).getResult();
      }
      return x;
    };
  }
  return nullptr;
}

/// How to compute one element of a unary op's result (math, sign and
/// classification ops), or null (getBodyBuilder).
static BodyBuilder unaryBody(Operation *op) {
  using Args = ValueRange;
  return llvm::TypeSwitch<Operation *, BodyBuilder>(op)
      // Unary float ops with a direct upstream counterpart.
      .Case([](graph::ExpOp op) { return unaryFloat<math::ExpOp>(op); })
      .Case([](graph::LogOp op) { return unaryFloat<math::LogOp>(op); })
      .Case([](graph::SqrtOp op) { return unaryFloat<math::SqrtOp>(op); })
      .Case([](graph::TanhOp op) { return unaryFloat<math::TanhOp>(op); })
      .Case([](graph::ErfOp op) { return unaryFloat<math::ErfOp>(op); })
      .Case([](graph::FloorOp op) { return unaryFloat<math::FloorOp>(op); })
      .Case([](graph::CeilOp op) { return unaryFloat<math::CeilOp>(op); })
      .Case([](graph::SinOp op) { return unaryFloat<math::SinOp>(op); })
      .Case([](graph::CosOp op) { return unaryFloat<math::CosOp>(op); })
      // Round is half to even, like numpy and ONNX.
      .Case([](graph::RoundOp op) {
        return unaryFloatWide<math::RoundEvenOp>(op);
      })
      .Case([](graph::TanOp op) { return unaryFloatWide<math::TanOp>(op); })
      .Case([](graph::AsinOp op) { return unaryFloatWide<math::AsinOp>(op); })
      .Case([](graph::AcosOp op) { return unaryFloatWide<math::AcosOp>(op); })
      .Case([](graph::AtanOp op) { return unaryFloatWide<math::AtanOp>(op); })
      .Case([](graph::SinhOp op) { return unaryFloatWide<math::SinhOp>(op); })
      .Case([](graph::CoshOp op) { return unaryFloatWide<math::CoshOp>(op); })
      .Case([](graph::AsinhOp op) { return unaryFloatWide<math::AsinhOp>(op); })
      .Case([](graph::AcoshOp op) { return unaryFloatWide<math::AcoshOp>(op); })
      .Case([](graph::AtanhOp op) { return unaryFloatWide<math::AtanhOp>(op); })
      // Unary ops on floats and integers.
      .Case([](graph::AbsOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        if (isComputeFloat(type))
          return [](OpBuilder &b, Location loc, Args args) -> Value {
            return math::AbsFOp::create(b, loc, args[0]);
          };
        // An unsigned value is its own magnitude.
        if (isArithInt(type) && isUnsigned(type))
          return
              [](OpBuilder &, Location, Args args) -> Value { return args[0]; };
        if (isArithInt(type))
          return [](OpBuilder &b, Location loc, Args args) -> Value {
            return math::AbsIOp::create(b, loc, args[0]);
          };
        return nullptr;
      })
      .Case([](graph::NegOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        if (isComputeFloat(type))
          return [](OpBuilder &b, Location loc, Args args) -> Value {
            return arith::NegFOp::create(b, loc, args[0]);
          };
        // ONNX Neg has no unsigned types.
        if (isArithInt(type) && !isUnsigned(type))
          return [type](OpBuilder &b, Location loc, Args args) -> Value {
            return arith::SubIOp::create(b, loc, intConstant(b, loc, type, 0),
                                         args[0]);
          };
        return nullptr;
      })
      .Case([](graph::ReluOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        // maximumf propagates NaN, as ONNX Relu does.
        if (isComputeFloat(type))
          return [type](OpBuilder &b, Location loc, Args args) -> Value {
            return arith::MaximumFOp::create(b, loc, args[0],
                                             floatConstant(b, loc, type, 0.0));
          };
        if (isArithInt(type) && isUnsigned(type))
          return
              [](OpBuilder &, Location, Args args) -> Value { return args[0]; };
        if (isArithInt(type))
          return [type](OpBuilder &b, Location loc, Args args) -> Value {
            return arith::MaxSIOp::create(b, loc, args[0],
                                          intConstant(b, loc, type, 0));
          };
        return nullptr;
      })
      .Case([](graph::SignOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        if (!isComputeFloat(type) && !isArithInt(type))
          return nullptr;
        return [type](OpBuilder &b, Location loc, Args args) -> Value {
          return buildSign(b, loc, type, args[0]);
        };
      })
      .Case([](graph::IdentityOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        if (!isComputeFloat(type) && !isSupportedInt(type))
          return nullptr;
        return
            [](OpBuilder &, Location, Args args) -> Value { return args[0]; };
      })
      // Unary float ops expressed with several upstream ops.
      .Case([](graph::ReciprocalOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        if (!isComputeFloat(type))
          return nullptr;
        return [type](OpBuilder &b, Location loc, Args args) -> Value {
          return arith::DivFOp::create(b, loc, floatConstant(b, loc, type, 1.0),
                                       args[0]);
        };
      })
      .Case([](graph::SigmoidOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        if (!isComputeFloat(type))
          return nullptr;
        // 1 / (1 + exp(-x)): exp overflows to inf for very negative x, which
        // still gives the correct limit 0.
        return [type](OpBuilder &b, Location loc, Args args) -> Value {
          Value one = floatConstant(b, loc, type, 1.0);
          Value negated = arith::NegFOp::create(b, loc, args[0]);
          Value denominator = arith::AddFOp::create(
              b, loc, one, math::ExpOp::create(b, loc, negated));
          return arith::DivFOp::create(b, loc, one, denominator);
        };
      })
      .Case([](graph::GeluOp op) -> BodyBuilder {
        if (!isComputeFloat(elementTypeOf(op.getInput())))
          return nullptr;
        bool tanhApprox = op.getApproximate() == "tanh";
        // f16 and bf16 in f32, rounded once (as PyTorch computes it): in
        // the narrow type, 1/sqrt(2), erf, 1 + erf and the products would
        // each be rounded to 8 bits (bf16) of mantissa.
        return [tanhApprox](OpBuilder &b, Location loc, Args args) -> Value {
          bool bf16 = args[0].getType().isBF16();
          return computeWide(b, loc, args[0].getType(), args[0], [&](Value x) {
            return bf16 && !tanhApprox ? buildGeluBf16(b, loc, x)
                                       : buildGelu(b, loc, x, tanhApprox);
          });
        };
      })
      // Float classification (i1 results).
      .Case([](graph::IsNaNOp op) -> BodyBuilder {
        if (!isComputeFloat(elementTypeOf(op.getInput())))
          return nullptr;
        return [](OpBuilder &b, Location loc, Args args) -> Value {
          return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                       args[0], args[0]);
        };
      })
      .Case([](graph::IsInfOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        if (!isComputeFloat(type))
          return nullptr;
        bool positive = op.getDetectPositive() != 0;
        bool negative = op.getDetectNegative() != 0;
        return [=](OpBuilder &b, Location loc, Args args) -> Value {
          Value result =
              arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
          auto equals = [&](double value) -> Value {
            return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         args[0],
                                         floatConstant(b, loc, type, value));
          };
          if (positive)
            result = equals(std::numeric_limits<double>::infinity());
          if (negative) {
            Value isNegInf = equals(-std::numeric_limits<double>::infinity());
            result =
                positive
                    ? arith::OrIOp::create(b, loc, result, isNegInf).getResult()
                    : isNegInf;
          }
          return result;
        };
      })
      .Default([](Operation *) { return nullptr; });
}

/// How to compute one element of a binary op's result (arithmetic, bitwise
/// and logical ops, comparisons), or null (getBodyBuilder).
static BodyBuilder binaryBody(Operation *op) {
  using Args = ValueRange;
  return llvm::TypeSwitch<Operation *, BodyBuilder>(op)
      // Binary arithmetic. Integer division truncates toward zero, like C
      // and onnxruntime; min/max on floats propagate NaN, like numpy.
      .Case([](graph::AddOp op) {
        return binaryArith<arith::AddFOp, arith::AddIOp>(op);
      })
      .Case([](graph::SubOp op) {
        return binaryArith<arith::SubFOp, arith::SubIOp>(op);
      })
      .Case([](graph::MulOp op) {
        return binaryArith<arith::MulFOp, arith::MulIOp>(op);
      })
      .Case([](graph::DivOp op) {
        return binaryArith<arith::DivFOp, arith::DivSIOp, arith::DivUIOp>(op);
      })
      .Case([](graph::MaxOp op) {
        return binaryArith<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>(
            op);
      })
      .Case([](graph::MinOp op) {
        return binaryArith<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>(
            op);
      })
      .Case([](graph::PowOp op) { return buildPow(op); })
      .Case([](graph::ModOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getLhs());
        if (elementTypeOf(op.getRhs()) != type ||
            elementTypeOf(op.getOutput()) != type ||
            !(isComputeFloat(type) || isArithInt(type)))
          return nullptr;
        bool fmod = op.getFmod() != 0;
        return [=](OpBuilder &b, Location loc, Args args) -> Value {
          return buildMod(b, loc, type, fmod, args[0], args[1]);
        };
      })
      .Case([](graph::BitShiftOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getLhs());
        if (elementTypeOf(op.getRhs()) != type ||
            elementTypeOf(op.getOutput()) != type || !isArithInt(type) ||
            (op.getDirection() != "LEFT" && op.getDirection() != "RIGHT"))
          return nullptr;
        bool left = op.getDirection() == "LEFT";
        return [=](OpBuilder &b, Location loc, Args args) -> Value {
          return buildBitShift(b, loc, type, left, args[0], args[1]);
        };
      })
      // Bitwise ops on integers, logical ops on i1.
      .Case([](graph::BitwiseAndOp op) { return bitwise<arith::AndIOp>(op); })
      .Case([](graph::BitwiseOrOp op) { return bitwise<arith::OrIOp>(op); })
      .Case([](graph::BitwiseXorOp op) { return bitwise<arith::XOrIOp>(op); })
      .Case([](graph::AndOp op) { return bitwise<arith::AndIOp>(op); })
      .Case([](graph::OrOp op) { return bitwise<arith::OrIOp>(op); })
      .Case([](graph::XorOp op) { return bitwise<arith::XOrIOp>(op); })
      .Case([](graph::BitwiseNotOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        if (!isSupportedInt(type))
          return nullptr;
        return [type](OpBuilder &b, Location loc, Args args) -> Value {
          // All ones: -1 in two's complement, `true` for i1.
          return arith::XOrIOp::create(b, loc, args[0],
                                       intConstant(b, loc, type, -1));
        };
      })
      .Case([](graph::NotOp op) -> BodyBuilder {
        if (!elementTypeOf(op.getInput()).isInteger(1))
          return nullptr;
        return [](OpBuilder &b, Location loc, Args args) -> Value {
          Value trueValue =
              arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
          return arith::XOrIOp::create(b, loc, args[0], trueValue);
        };
      })
      // Comparisons.
      .Case([](graph::EqualOp op) {
        return compare(op, arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq,
                       arith::CmpIPredicate::eq, /*allowBool=*/true);
      })
      .Case([](graph::LessOp op) {
        return compare(op, arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt,
                       arith::CmpIPredicate::ult, /*allowBool=*/false);
      })
      .Case([](graph::GreaterOp op) {
        return compare(op, arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt,
                       arith::CmpIPredicate::ugt, /*allowBool=*/false);
      })
      .Case([](graph::LessEqualOp op) {
        return compare(op, arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle,
                       arith::CmpIPredicate::ule, /*allowBool=*/false);
      })
      .Case([](graph::GreaterEqualOp op) {
        return compare(op, arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge,
                       arith::CmpIPredicate::uge, /*allowBool=*/false);
      })
      .Default([](Operation *) { return nullptr; });
}

/// Returns how to compute one element of `op`'s result, or null when this
/// pass does not lower `op` (an op it does not know, or element types it does
/// not handle). Shapes are checked separately (getBroadcastShape). The types
/// inspected are the op's own (uiN included); the body sees their signless
/// forms.
static BodyBuilder getBodyBuilder(Operation *op) {
  if (BodyBuilder body = unaryBody(op))
    return body;
  if (BodyBuilder body = binaryBody(op))
    return body;
  using Args = ValueRange;
  return llvm::TypeSwitch<Operation *, BodyBuilder>(op)
      // Selection, clamping and conversion.
      .Case([](graph::WhereOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getX());
        if (elementTypeOf(op.getY()) != type ||
            elementTypeOf(op.getOutput()) != type ||
            !(isComputeFloat(type) || isSupportedInt(type)))
          return nullptr;
        return [](OpBuilder &b, Location loc, Args args) -> Value {
          return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
        };
      })
      .Case([](graph::ClipOp op) { return buildClip(op); })
      .Case([](graph::CastOp op) -> BodyBuilder {
        Type from = elementTypeOf(op.getInput());
        Type to = elementTypeOf(op.getOutput());
        auto supported = [](Type type) {
          return isComputeFloat(type) || isSupportedInt(type);
        };
        if (!supported(from) || !supported(to))
          return nullptr;
        return [from, to](OpBuilder &b, Location loc, Args args) -> Value {
          return convertScalar(b, loc, args[0], from, to);
        };
      })
      .Default([](Operation *) { return nullptr; });
}

//===----------------------------------------------------------------------===//
// Shapes and broadcasting
//===----------------------------------------------------------------------===//

/// The shape of `op`'s broadcast result: its declared result shape, refined
/// with what the operands show. A static operand size other than 1 fixes its
/// dimension; a dimension where no operand is dynamic and all are 1 (or
/// absent) is 1. Dimensions still dynamic get their size from an operand at
/// run time. std::nullopt when a type is not a ranked tensor, an operand's
/// rank exceeds the result's, or static sizes conflict.
static std::optional<SmallVector<int64_t>> getBroadcastShape(Operation *op) {
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType || op->getNumResults() != 1)
    return std::nullopt;
  int64_t rank = resultType.getRank();
  SmallVector<int64_t> shape(resultType.getShape());
  SmallVector<bool> anyDynamic(rank, false);
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || type.getRank() > rank)
      return std::nullopt;
    int64_t offset = rank - type.getRank();
    for (auto [dim, size] : llvm::enumerate(type.getShape())) {
      int64_t &out = shape[dim + offset];
      if (ShapedType::isDynamic(size)) {
        anyDynamic[dim + offset] = true;
        continue;
      }
      if (size == 1)
        continue;
      if (ShapedType::isDynamic(out))
        out = size;
      else if (out != size)
        return std::nullopt;
    }
  }
  for (int64_t i = 0; i < rank; ++i)
    if (ShapedType::isDynamic(shape[i]) && !anyDynamic[i])
      shape[i] = 1;
  return shape;
}

bool strata::detail::canLowerElementwise(Operation *op) {
  if (!isa_and_present<graph::GraphDialect>(op->getDialect()))
    return false;
  return getBodyBuilder(op) && getBroadcastShape(op).has_value();
}

namespace {

/// Lowers any op for which getBodyBuilder and getBroadcastShape succeed to a
/// linalg.generic on the converted (signless) types.
struct ElementwiseToLinalg : ConversionPattern {
  ElementwiseToLinalg(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa_and_present<graph::GraphDialect>(op->getDialect()))
      return failure();
    BodyBuilder body = getBodyBuilder(op);
    std::optional<SmallVector<int64_t>> shape = getBroadcastShape(op);
    if (!body || !shape)
      return rewriter.notifyMatchFailure(op, "not a lowerable elementwise op");
    LLVM_DEBUG(llvm::dbgs() << "lowering " << op->getName() << " at "
                            << op->getLoc() << "\n");

    Location loc = op->getLoc();
    auto resultType = dyn_cast_or_null<RankedTensorType>(
        getTypeConverter()->convertType(op->getResult(0).getType()));
    if (!resultType)
      return rewriter.notifyMatchFailure(op, "result type does not convert");
    int64_t rank = resultType.getRank();

    // Output sizes. A dynamic dimension takes its size from the first operand
    // that is dynamic there: operands of static size 1 broadcast and say
    // nothing, and one of static size other than 1 would have made the
    // dimension static. We assume a dynamic operand dimension equals the
    // output's size at run time (it is never a 1 that broadcasts), so any
    // dynamic operand is as good as the first; upstream's tosa-to-linalg
    // instead emits a run-time broadcast, which strata leaves to the shape
    // specialization of the later layers (docs/graph-layer.md, "Symbolic
    // dimensions").
    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < rank; ++i) {
      if (!ShapedType::isDynamic((*shape)[i])) {
        sizes.push_back(rewriter.getIndexAttr((*shape)[i]));
        continue;
      }
      for (Value operand : operands) {
        auto type = cast<RankedTensorType>(operand.getType());
        int64_t dim = i - (rank - type.getRank());
        if (dim >= 0 && type.isDynamicDim(dim)) {
          sizes.push_back(
              tensor::DimOp::create(rewriter, loc, operand, dim).getResult());
          break;
        }
      }
    }
    Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                         resultType.getElementType(),
                                         resultType.getEncoding());

    // Indexing maps: operand dimension `dim` reads output dimension
    // `dim + offset`, or index 0 where a static 1 broadcasts. A dynamic
    // operand dimension always reads the output index (see above).
    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineMap> maps;
    for (Value operand : operands) {
      auto type = cast<RankedTensorType>(operand.getType());
      int64_t offset = rank - type.getRank();
      SmallVector<AffineExpr> exprs;
      for (auto [dim, size] : llvm::enumerate(type.getShape())) {
        int64_t out = (*shape)[dim + offset];
        if (size == 1 && out != 1)
          exprs.push_back(getAffineConstantExpr(0, context));
        else
          exprs.push_back(getAffineDimExpr(dim + offset, context));
      }
      maps.push_back(AffineMap::get(rank, /*symbolCount=*/0, exprs, context));
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);

    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType()}, operands, ValueRange{init},
        maps, iterators, [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
          // The last block argument is the (unused) output element.
          Value value = body(b, bodyLoc, args.drop_back());
          linalg::YieldOp::create(b, bodyLoc, value);
        });

    // The refined shape may be more static than the declared result type
    // (before strata-graph-infer-shapes); users keep seeing the declared one.
    Value result = generic.getResult(0);
    if (result.getType() != resultType)
      result = tensor::CastOp::create(rewriter, loc, resultType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void strata::detail::populateElementwiseToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ElementwiseToLinalg>(converter, patterns.getContext());
}
