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
//===----------------------------------------------------------------------===//

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

#include <functional>

#define DEBUG_TYPE "strata-convert-graph-to-linalg"

using strata::detail::BodyBuilder;

using namespace mlir;
namespace graph = strata::graph;

//===----------------------------------------------------------------------===//
// Element types and scalar helpers
//===----------------------------------------------------------------------===//

static Type elementTypeOf(Value value) { return getElementTypeOrSelf(value); }

/// The float types the kernel layer supports (ONNX FLOAT, DOUBLE, FLOAT16,
/// BFLOAT16); arith/math accept others, but nothing upstream of us makes them.
static bool isSupportedFloat(Type type) {
  return type.isF16() || type.isBF16() || type.isF32() || type.isF64();
}

/// Signless integers, including i1 (ONNX BOOL). Unsigned ONNX types are
/// `ui<N>`, which arith does not accept; they stay unlowered for now.
static bool isSignlessInt(Type type) { return type.isSignlessInteger(); }

/// Signless integers that take part in arithmetic; ONNX has no arithmetic on
/// BOOL.
static bool isArithInt(Type type) {
  return type.isSignlessInteger() && type.getIntOrFloatBitWidth() > 1;
}

static Value floatConstant(OpBuilder &b, Location loc, Type type,
                           double value) {
  return arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getFloatAttr(type, value)));
}

static Value intConstant(OpBuilder &b, Location loc, Type type, int64_t value) {
  return arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getIntegerAttr(type, value)));
}

/// Converts a scalar between supported float and signless integer types with
/// ONNX Cast semantics: float to int truncates toward zero, anything to i1 is
/// "nonzero" (NaN included), i1 to a number is 0 or 1 (so it is zero-, not
/// sign-extended), and other integers are signed.
static Value convertScalar(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
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
    return arith::FPToSIOp::create(b, loc, to, value);
  }
  if (isa<FloatType>(to)) {
    if (from.isInteger(1))
      return arith::UIToFPOp::create(b, loc, to, value);
    return arith::SIToFPOp::create(b, loc, to, value);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (toWidth == 1)
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                 intConstant(b, loc, from, 0));
  if (fromWidth == 1)
    return arith::ExtUIOp::create(b, loc, to, value);
  if (fromWidth < toWidth)
    return arith::ExtSIOp::create(b, loc, to, value);
  return arith::TruncIOp::create(b, loc, to, value);
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

//===----------------------------------------------------------------------===//
// Which ops lower, and their bodies
//===----------------------------------------------------------------------===//

/// A float-only unary op that maps to one upstream op.
template <typename ScalarOp> static BodyBuilder unaryFloat(Operation *op) {
  if (!isSupportedFloat(elementTypeOf(op->getOperand(0))))
    return nullptr;
  return [](OpBuilder &b, Location loc, ValueRange args) -> Value {
    return ScalarOp::create(b, loc, args[0]);
  };
}

/// A binary arithmetic op on floats or (non-bool) signless integers.
template <typename FloatOp, typename IntOp>
static BodyBuilder binaryArith(Operation *op) {
  Type type = elementTypeOf(op->getOperand(0));
  if (elementTypeOf(op->getOperand(1)) != type ||
      elementTypeOf(op->getResult(0)) != type)
    return nullptr;
  if (isSupportedFloat(type))
    return [](OpBuilder &b, Location loc, ValueRange args) -> Value {
      return FloatOp::create(b, loc, args[0], args[1]);
    };
  if (isArithInt(type))
    return [](OpBuilder &b, Location loc, ValueRange args) -> Value {
      return IntOp::create(b, loc, args[0], args[1]);
    };
  return nullptr;
}

/// A comparison. Float predicates are ordered (false when either side is
/// NaN), as ONNX and numpy define them; integers compare as signed. Only
/// `equal` is meaningful on i1.
static BodyBuilder compare(Operation *op, arith::CmpFPredicate floatPredicate,
                           arith::CmpIPredicate intPredicate, bool allowBool) {
  Type type = elementTypeOf(op->getOperand(0));
  if (elementTypeOf(op->getOperand(1)) != type)
    return nullptr;
  if (isSupportedFloat(type))
    return [floatPredicate](OpBuilder &b, Location loc,
                            ValueRange args) -> Value {
      return arith::CmpFOp::create(b, loc, floatPredicate, args[0], args[1]);
    };
  if (isArithInt(type) || (allowBool && type.isInteger(1)))
    return
        [intPredicate](OpBuilder &b, Location loc, ValueRange args) -> Value {
          return arith::CmpIOp::create(b, loc, intPredicate, args[0], args[1]);
        };
  return nullptr;
}

/// pow: a float base with an exponent of the same float type (or another
/// float type, converted to the base's), a float base with an integer
/// exponent, or integer base and exponent of one type.
static BodyBuilder buildPow(graph::PowOp op) {
  Type base = elementTypeOf(op.getLhs());
  Type exponent = elementTypeOf(op.getRhs());
  if (elementTypeOf(op.getOutput()) != base)
    return nullptr;
  if (isSupportedFloat(base) && isSupportedFloat(exponent))
    return [base](OpBuilder &b, Location loc, ValueRange args) -> Value {
      return math::PowFOp::create(b, loc, args[0],
                                  convertScalar(b, loc, args[1], base));
    };
  if (isSupportedFloat(base) && isArithInt(exponent))
    return [](OpBuilder &b, Location loc, ValueRange args) -> Value {
      return math::FPowIOp::create(b, loc, args[0], args[1]);
    };
  if (isArithInt(base) && exponent == base)
    return [](OpBuilder &b, Location loc, ValueRange args) -> Value {
      return math::IPowIOp::create(b, loc, args[0], args[1]);
    };
  return nullptr;
}

/// Returns how to compute one element of `op`'s result, or null when this
/// pass does not lower `op` (an op it does not know, or element types it does
/// not handle). Shapes are checked separately (getBroadcastShape).
static BodyBuilder getBodyBuilder(Operation *op) {
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
      // Unary ops on floats and integers.
      .Case([](graph::AbsOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        if (isSupportedFloat(type))
          return [](OpBuilder &b, Location loc, Args args) -> Value {
            return math::AbsFOp::create(b, loc, args[0]);
          };
        if (isArithInt(type))
          return [](OpBuilder &b, Location loc, Args args) -> Value {
            return math::AbsIOp::create(b, loc, args[0]);
          };
        return nullptr;
      })
      .Case([](graph::NegOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        if (isSupportedFloat(type))
          return [](OpBuilder &b, Location loc, Args args) -> Value {
            return arith::NegFOp::create(b, loc, args[0]);
          };
        if (isArithInt(type))
          return [type](OpBuilder &b, Location loc, Args args) -> Value {
            return arith::SubIOp::create(b, loc, intConstant(b, loc, type, 0),
                                         args[0]);
          };
        return nullptr;
      })
      .Case([](graph::ReluOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        // maximumf propagates NaN, as ONNX Relu does.
        if (isSupportedFloat(type))
          return [type](OpBuilder &b, Location loc, Args args) -> Value {
            return arith::MaximumFOp::create(b, loc, args[0],
                                             floatConstant(b, loc, type, 0.0));
          };
        if (isArithInt(type))
          return [type](OpBuilder &b, Location loc, Args args) -> Value {
            return arith::MaxSIOp::create(b, loc, args[0],
                                          intConstant(b, loc, type, 0));
          };
        return nullptr;
      })
      // Unary float ops expressed with several upstream ops.
      .Case([](graph::ReciprocalOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        if (!isSupportedFloat(type))
          return nullptr;
        return [type](OpBuilder &b, Location loc, Args args) -> Value {
          return arith::DivFOp::create(b, loc, floatConstant(b, loc, type, 1.0),
                                       args[0]);
        };
      })
      .Case([](graph::SigmoidOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getInput());
        if (!isSupportedFloat(type))
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
        if (!isSupportedFloat(elementTypeOf(op.getInput())))
          return nullptr;
        bool tanhApprox = op.getApproximate() == "tanh";
        return [tanhApprox](OpBuilder &b, Location loc, Args args) -> Value {
          return buildGelu(b, loc, args[0], tanhApprox);
        };
      })
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
        return binaryArith<arith::DivFOp, arith::DivSIOp>(op);
      })
      .Case([](graph::MaxOp op) {
        return binaryArith<arith::MaximumFOp, arith::MaxSIOp>(op);
      })
      .Case([](graph::MinOp op) {
        return binaryArith<arith::MinimumFOp, arith::MinSIOp>(op);
      })
      .Case([](graph::PowOp op) { return buildPow(op); })
      // Comparisons.
      .Case([](graph::EqualOp op) {
        return compare(op, arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq,
                       /*allowBool=*/true);
      })
      .Case([](graph::LessOp op) {
        return compare(op, arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt,
                       /*allowBool=*/false);
      })
      .Case([](graph::GreaterOp op) {
        return compare(op, arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt,
                       /*allowBool=*/false);
      })
      .Case([](graph::LessEqualOp op) {
        return compare(op, arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle,
                       /*allowBool=*/false);
      })
      .Case([](graph::GreaterEqualOp op) {
        return compare(op, arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge,
                       /*allowBool=*/false);
      })
      // Selection and conversion.
      .Case([](graph::WhereOp op) -> BodyBuilder {
        Type type = elementTypeOf(op.getX());
        if (elementTypeOf(op.getY()) != type ||
            elementTypeOf(op.getOutput()) != type ||
            !(isSupportedFloat(type) || isSignlessInt(type)))
          return nullptr;
        return [](OpBuilder &b, Location loc, Args args) -> Value {
          return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
        };
      })
      .Case([](graph::CastOp op) -> BodyBuilder {
        Type from = elementTypeOf(op.getInput());
        Type to = elementTypeOf(op.getOutput());
        auto supported = [](Type type) {
          return isSupportedFloat(type) || isSignlessInt(type);
        };
        if (!supported(from) || !supported(to))
          return nullptr;
        return [to](OpBuilder &b, Location loc, Args args) -> Value {
          return convertScalar(b, loc, args[0], to);
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

/// Lowers any op for which isLowerable holds to a linalg.generic.
struct ElementwiseToLinalg : ConversionPattern {
  explicit ElementwiseToLinalg(MLIRContext *context)
      : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

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
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
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
  (void)converter;
  patterns.add<ElementwiseToLinalg>(patterns.getContext());
}
