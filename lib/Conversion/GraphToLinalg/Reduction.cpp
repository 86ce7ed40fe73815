//===- Reduction.cpp - reduction graph ops to linalg ------------*- C++ -*-===//
//
// Lowers the graph dialect's reductions to linalg on tensors of static shape:
// reduce_{sum,mean,max,min,prod,l1,l2,log_sum,sum_square}, arg_max/arg_min,
// softmax, log_softmax, hardmax and cum_sum. See Patterns.h for the contract.
//
// Every reduction is a `linalg.generic` whose reduced dimensions are
// `reduction` iterators, accumulating into a `linalg.fill` of the
// reduction's identity; the output map drops the reduced dimensions, and
// keepdims puts them back as unit dimensions with `tensor.expand_shape`. An
// empty reduced extent therefore yields the identity (0 for sum, 1 for prod,
// -inf/+inf or the integer extremes for max/min), as ONNX specifies. f16 and
// bf16 sums and products accumulate in f32 and are rounded once at the end.
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
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
namespace graph = strata::graph;
using strata::detail::convertScalar;
using strata::detail::getSignlessType;
using strata::detail::isComputeFloat;
using strata::detail::isHalfFloat;
using strata::detail::isSupportedInt;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static RankedTensorType staticType(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !ranked.hasStaticShape())
    return nullptr;
  return ranked;
}

static bool isArithInt(Type type) {
  return isSupportedInt(type) && type.getIntOrFloatBitWidth() > 1;
}

/// The type sums and products accumulate in: f32 for f16 and bf16 (their
/// few mantissa bits would lose most of a long sum), else the element type.
static Type accumulatorType(Type element) {
  if (isHalfFloat(element))
    return Float32Type::get(element.getContext());
  return getSignlessType(element);
}

static Value floatConstant(OpBuilder &b, Location loc, Type type,
                           double value) {
  return arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getFloatAttr(type, value)));
}

static Value intConstant(OpBuilder &b, Location loc, Type type,
                         const APInt &value) {
  return arith::ConstantOp::create(
      b, loc, IntegerAttr::get(getSignlessType(type), value));
}

/// The smallest (`lowest`) or largest value of `type`: -inf/+inf for floats,
/// the signed or unsigned extremes for integers.
static Value extremeConstant(OpBuilder &b, Location loc, Type type,
                             bool lowest) {
  if (isa<FloatType>(type))
    return floatConstant(b, loc, type,
                         lowest ? -std::numeric_limits<double>::infinity()
                                : std::numeric_limits<double>::infinity());
  unsigned width = type.getIntOrFloatBitWidth();
  if (type.isUnsignedInteger())
    return intConstant(b, loc, type,
                       lowest ? APInt::getZero(width)
                              : APInt::getAllOnes(width));
  return intConstant(b, loc, type,
                     lowest ? APInt::getSignedMinValue(width)
                            : APInt::getSignedMaxValue(width));
}

/// A number as a constant of float or integer `type` (signless form).
static Value numberConstant(OpBuilder &b, Location loc, Type type,
                            int64_t value) {
  if (isa<FloatType>(type))
    return floatConstant(b, loc, type, static_cast<double>(value));
  return intConstant(b, loc, type,
                     APInt(type.getIntOrFloatBitWidth(), value,
                           /*isSigned=*/true, /*implicitTrunc=*/true));
}

/// The map from the iteration space (`rank` dims) to the dims not in
/// `reduced`.
static AffineMap keptDimsMap(int64_t rank, ArrayRef<bool> reduced,
                             MLIRContext *context) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i)
    if (!reduced[i])
      exprs.push_back(getAffineDimExpr(i, context));
  return AffineMap::get(rank, 0, exprs, context);
}

static SmallVector<int64_t> keptShape(ArrayRef<int64_t> shape,
                                      ArrayRef<bool> reduced) {
  SmallVector<int64_t> kept;
  for (auto [size, isReduced] : llvm::zip(shape, reduced))
    if (!isReduced)
      kept.push_back(size);
  return kept;
}

static SmallVector<utils::IteratorType> iteratorsFor(ArrayRef<bool> reduced) {
  SmallVector<utils::IteratorType> iterators;
  for (bool isReduced : reduced)
    iterators.push_back(isReduced ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
  return iterators;
}

/// A tensor of `shape` filled with `value`.
static Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                          Value value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, value.getType());
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

/// Applies `fn` to every element of `input` (static shape), producing a
/// tensor of the same shape and element type `resultElement`.
static Value
mapElements(OpBuilder &b, Location loc, Value input, Type resultElement,
            llvm::function_ref<Value(OpBuilder &, Location, Value)> fn) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), resultElement);
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{input},
             ValueRange{init}, maps, iterators,
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               linalg::YieldOp::create(nested, nestedLoc,
                                       fn(nested, nestedLoc, args[0]));
             })
      .getResult(0);
}

/// Puts the reduced dims of `value` (whose shape is the kept dims of the
/// input) back as unit dims, giving `resultType`.
static Value expandReduced(OpBuilder &b, Location loc, Value value,
                           ArrayRef<bool> reduced,
                           RankedTensorType resultType) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices leading;
  for (int64_t i = 0, e = reduced.size(); i < e; ++i) {
    if (!reduced[i]) {
      ReassociationIndices group = leading;
      leading.clear();
      group.push_back(i);
      groups.push_back(group);
    } else if (groups.empty()) {
      leading.push_back(i);
    } else {
      groups.back().push_back(i);
    }
  }
  return tensor::ExpandShapeOp::create(b, loc, resultType, value, groups);
}

/// The integer values of a constant operand (graph.constant or anything
/// that folds to dense integers).
static std::optional<SmallVector<int64_t>> constantInts(Value value) {
  DenseIntElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

/// Normalizes an ONNX axis into [0, rank), or std::nullopt when out of range.
static std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// reduce_* over axes
//===----------------------------------------------------------------------===//

namespace {
enum class ReduceKind { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, SumSquare };

/// What a reduce op does, once its axes are known.
struct ReducePlan {
  ReduceKind kind;
  RankedTensorType inputType;  // the op's (unsigned kept)
  RankedTensorType resultType; // the op's
  SmallVector<bool> reduced;   // per input dim
  bool keepdims = true;
  bool noop = false; // empty axes with noop_with_empty_axes: a copy
};
} // namespace

/// For axes only known at run time: the reduced dims that the static input
/// and result shapes imply, when they determine the result. With keepdims a
/// dim is reduced exactly where its size changes (a unit dim reduces to
/// itself either way). Without keepdims every choice of dropped dims that
/// leaves the result shape is tried; they must agree on the non-unit dims
/// (which unit dims are dropped changes nothing in the data).
static std::optional<SmallVector<bool>>
inferReducedDims(ArrayRef<int64_t> in, ArrayRef<int64_t> out, bool keepdims) {
  int64_t rank = in.size();
  if (keepdims) {
    if (static_cast<int64_t>(out.size()) != rank)
      return std::nullopt;
    SmallVector<bool> reduced(rank, false);
    for (int64_t i = 0; i < rank; ++i) {
      if (in[i] == out[i])
        continue;
      if (out[i] != 1)
        return std::nullopt;
      reduced[i] = true;
    }
    return reduced;
  }
  int64_t outRank = out.size();
  if (outRank > rank || rank > 16)
    return std::nullopt;
  std::optional<SmallVector<bool>> found;
  std::optional<SmallVector<bool>> foundNonUnit;
  bool ambiguous = false;
  // Enumerate the subsets of kept dims (bit i set: dim i kept).
  for (uint32_t mask = 0; mask < (1u << rank) && !ambiguous; ++mask) {
    if (llvm::popcount(mask) != outRank)
      continue;
    SmallVector<bool> reduced(rank);
    SmallVector<bool> nonUnit(rank);
    bool matches = true;
    for (int64_t i = 0, j = 0; i < rank && matches; ++i) {
      reduced[i] = !(mask & (1u << i));
      nonUnit[i] = reduced[i] && in[i] != 1;
      if (!reduced[i])
        matches = in[i] == out[j++];
    }
    if (!matches)
      continue;
    if (!found) {
      found = reduced;
      foundNonUnit = nonUnit;
    } else if (*foundNonUnit != nonUnit) {
      ambiguous = true;
    }
  }
  if (ambiguous)
    return std::nullopt;
  return found;
}

template <typename OpTy>
static std::optional<ReducePlan> getReducePlan(OpTy op, ReduceKind kind) {
  ReducePlan plan;
  plan.kind = kind;
  plan.inputType = staticType(op.getInput().getType());
  plan.resultType = staticType(op.getOutput().getType());
  if (!plan.inputType || !plan.resultType)
    return std::nullopt;
  Type element = plan.inputType.getElementType();
  if (plan.resultType.getElementType() != element)
    return std::nullopt;
  bool floatOnly = kind == ReduceKind::L1 || kind == ReduceKind::L2 ||
                   kind == ReduceKind::LogSum;
  if (!isComputeFloat(element) && (floatOnly || !isArithInt(element)))
    return std::nullopt;

  int64_t rank = plan.inputType.getRank();
  plan.keepdims = static_cast<int64_t>(op.getKeepdims()) != 0;
  bool noopWithEmptyAxes = static_cast<int64_t>(op.getNoopWithEmptyAxes()) != 0;

  // The axes: the attribute, a constant operand, or (operand computed at run
  // time) what the shapes imply.
  std::optional<SmallVector<int64_t>> axes;
  if (std::optional<ArrayRef<int64_t>> attr = op.getAxes())
    axes = SmallVector<int64_t>(*attr);
  else if (Value dynamic = op.getDynamicAxes()) {
    axes = constantInts(dynamic);
    auto axesType = dyn_cast<RankedTensorType>(dynamic.getType());
    if (!axes && axesType && axesType.hasStaticShape() &&
        axesType.getNumElements() == 0)
      axes = SmallVector<int64_t>();
    if (!axes) {
      std::optional<SmallVector<bool>> reduced = inferReducedDims(
          plan.inputType.getShape(), plan.resultType.getShape(), plan.keepdims);
      if (!reduced)
        return std::nullopt;
      plan.reduced = *reduced;
    }
  } else {
    axes = SmallVector<int64_t>();
  }

  if (axes) {
    if (axes->empty() && noopWithEmptyAxes) {
      plan.noop = true;
      plan.reduced.assign(rank, false);
    } else if (axes->empty()) {
      plan.reduced.assign(rank, true);
    } else {
      plan.reduced.assign(rank, false);
      for (int64_t axis : *axes) {
        std::optional<int64_t> normalized = normalizeAxis(axis, rank);
        if (!normalized)
          return std::nullopt;
        plan.reduced[*normalized] = true;
      }
    }
  }

  // The declared result must be what these axes give.
  SmallVector<int64_t> expected;
  for (int64_t i = 0; i < rank; ++i) {
    if (!plan.reduced[i])
      expected.push_back(plan.inputType.getDimSize(i));
    else if (plan.keepdims)
      expected.push_back(1);
  }
  if (ArrayRef<int64_t>(expected) != plan.resultType.getShape())
    return std::nullopt;

  // An integer mean of nothing would divide by zero.
  if (kind == ReduceKind::Mean && !isa<FloatType>(element) && !plan.noop) {
    for (int64_t i = 0; i < rank; ++i)
      if (plan.reduced[i] && plan.inputType.getDimSize(i) == 0)
        return std::nullopt;
  }
  return plan;
}

static std::optional<ReducePlan> getReducePlan(Operation *op) {
  using Plan = std::optional<ReducePlan>;
  return llvm::TypeSwitch<Operation *, Plan>(op)
      .Case([](graph::ReduceSumOp op) {
        return getReducePlan(op, ReduceKind::Sum);
      })
      .Case([](graph::ReduceMeanOp op) {
        return getReducePlan(op, ReduceKind::Mean);
      })
      .Case([](graph::ReduceMaxOp op) {
        return getReducePlan(op, ReduceKind::Max);
      })
      .Case([](graph::ReduceMinOp op) {
        return getReducePlan(op, ReduceKind::Min);
      })
      .Case([](graph::ReduceProdOp op) {
        return getReducePlan(op, ReduceKind::Prod);
      })
      .Case([](graph::ReduceL1Op op) {
        return getReducePlan(op, ReduceKind::L1);
      })
      .Case([](graph::ReduceL2Op op) {
        return getReducePlan(op, ReduceKind::L2);
      })
      .Case([](graph::ReduceLogSumOp op) {
        return getReducePlan(op, ReduceKind::LogSum);
      })
      .Case([](graph::ReduceSumSquareOp op) {
        return getReducePlan(op, ReduceKind::SumSquare);
      })
      .Default([](Operation *) -> Plan { return std::nullopt; });
}

/// Builds the reduction described by `plan` over `input` (the converted,
/// signless operand) and returns the result of the converted result type.
static Value buildReduce(OpBuilder &b, Location loc, const ReducePlan &plan,
                         Value input, RankedTensorType convertedResult) {
  if (plan.noop)
    return input;
  Type element = plan.inputType.getElementType();
  bool isFloat = isa<FloatType>(element);
  bool isUnsigned = element.isUnsignedInteger();
  bool isMinMax = plan.kind == ReduceKind::Max || plan.kind == ReduceKind::Min;
  Type acc = isMinMax ? getSignlessType(element) : accumulatorType(element);
  int64_t rank = plan.inputType.getRank();
  MLIRContext *context = b.getContext();

  Value identity;
  switch (plan.kind) {
  case ReduceKind::Max:
    identity = extremeConstant(b, loc, element, /*lowest=*/true);
    break;
  case ReduceKind::Min:
    identity = extremeConstant(b, loc, element, /*lowest=*/false);
    break;
  case ReduceKind::Prod:
    identity = numberConstant(b, loc, acc, 1);
    break;
  default:
    identity = numberConstant(b, loc, acc, 0);
  }
  SmallVector<int64_t> shape =
      keptShape(plan.inputType.getShape(), plan.reduced);
  Value init = filledTensor(b, loc, shape, identity);

  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 keptDimsMap(rank, plan.reduced, context)};
  ReduceKind kind = plan.kind;
  Value reducedValue =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{input},
          ValueRange{init}, maps, iteratorsFor(plan.reduced),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value x = convertScalar(nb, nl, args[0], element,
                                    isMinMax ? element : acc);
            Value sum = args[1];
            Value result;
            switch (kind) {
            case ReduceKind::Max:
              result =
                  isFloat
                      ? arith::MaximumFOp::create(nb, nl, sum, x).getResult()
                  : isUnsigned
                      ? arith::MaxUIOp::create(nb, nl, sum, x).getResult()
                      : arith::MaxSIOp::create(nb, nl, sum, x).getResult();
              break;
            case ReduceKind::Min:
              result =
                  isFloat
                      ? arith::MinimumFOp::create(nb, nl, sum, x).getResult()
                  : isUnsigned
                      ? arith::MinUIOp::create(nb, nl, sum, x).getResult()
                      : arith::MinSIOp::create(nb, nl, sum, x).getResult();
              break;
            case ReduceKind::Prod:
              result = isFloat
                           ? arith::MulFOp::create(nb, nl, sum, x).getResult()
                           : arith::MulIOp::create(nb, nl, sum, x).getResult();
              break;
            case ReduceKind::L1:
              result = arith::AddFOp::create(nb, nl, sum,
                                             math::AbsFOp::create(nb, nl, x));
              break;
            case ReduceKind::L2:
            case ReduceKind::SumSquare: {
              Value square =
                  isFloat ? arith::MulFOp::create(nb, nl, x, x).getResult()
                          : arith::MulIOp::create(nb, nl, x, x).getResult();
              result =
                  isFloat
                      ? arith::AddFOp::create(nb, nl, sum, square).getResult()
                      : arith::AddIOp::create(nb, nl, sum, square).getResult();
              break;
            }
            default:
              result = isFloat
                           ? arith::AddFOp::create(nb, nl, sum, x).getResult()
                           : arith::AddIOp::create(nb, nl, sum, x).getResult();
            }
            linalg::YieldOp::create(nb, nl, result);
          })
          .getResult(0);

  // Finish: the mean's division, the square root or log, and rounding a
  // wide accumulator back to the element type.
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i)
    if (plan.reduced[i])
      count *= plan.inputType.getDimSize(i);
  bool needsFinish = (!isMinMax && acc != getSignlessType(element)) ||
                     kind == ReduceKind::Mean || kind == ReduceKind::L2 ||
                     kind == ReduceKind::LogSum;
  if (needsFinish) {
    reducedValue = mapElements(
        b, loc, reducedValue, getSignlessType(element),
        [&](OpBuilder &nb, Location nl, Value v) -> Value {
          if (kind == ReduceKind::Mean) {
            Value n = numberConstant(nb, nl, acc, count);
            v = isFloat      ? arith::DivFOp::create(nb, nl, v, n).getResult()
                : isUnsigned ? arith::DivUIOp::create(nb, nl, v, n).getResult()
                             : arith::DivSIOp::create(nb, nl, v, n).getResult();
          } else if (kind == ReduceKind::L2) {
            v = math::SqrtOp::create(nb, nl, v);
          } else if (kind == ReduceKind::LogSum) {
            v = math::LogOp::create(nb, nl, v);
          }
          return isMinMax ? v : convertScalar(nb, nl, v, acc, element);
        });
  }
  if (plan.keepdims)
    return expandReduced(b, loc, reducedValue, plan.reduced, convertedResult);
  return reducedValue;
}

//===----------------------------------------------------------------------===//
// arg_max / arg_min and hardmax
//===----------------------------------------------------------------------===//

namespace {
/// An index reduction along one axis.
struct ArgPlan {
  RankedTensorType inputType;
  int64_t axis;
  bool keepdims;
  bool lastIndex;
};
} // namespace

template <typename OpTy> static std::optional<ArgPlan> getArgPlan(OpTy op) {
  ArgPlan plan;
  plan.inputType = staticType(op.getInput().getType());
  auto resultType = staticType(op.getOutput().getType());
  if (!plan.inputType || !resultType ||
      !resultType.getElementType().isInteger(64))
    return std::nullopt;
  Type element = plan.inputType.getElementType();
  if (!isComputeFloat(element) && !isArithInt(element))
    return std::nullopt;
  int64_t rank = plan.inputType.getRank();
  std::optional<int64_t> axis =
      normalizeAxis(static_cast<int64_t>(op.getAxis()), rank);
  // ONNX leaves the index of an empty extent undefined.
  if (!axis || plan.inputType.getDimSize(*axis) == 0)
    return std::nullopt;
  plan.axis = *axis;
  plan.keepdims = static_cast<int64_t>(op.getKeepdims()) != 0;
  plan.lastIndex = static_cast<int64_t>(op.getSelectLastIndex()) != 0;
  SmallVector<int64_t> expected(plan.inputType.getShape());
  if (plan.keepdims)
    expected[plan.axis] = 1;
  else
    expected.erase(expected.begin() + plan.axis);
  if (ArrayRef<int64_t>(expected) != resultType.getShape())
    return std::nullopt;
  return plan;
}

/// The i64 index of the largest (`isMax`) or smallest element along
/// `plan.axis`, with the axis dropped. Ties go to the first index, or the
/// last one with `lastIndex`. NaN compares false, so it is never selected.
static Value buildArgReduce(OpBuilder &b, Location loc, const ArgPlan &plan,
                            Value input, bool isMax) {
  Type element = plan.inputType.getElementType();
  int64_t rank = plan.inputType.getRank();
  SmallVector<bool> reduced(rank, false);
  reduced[plan.axis] = true;
  SmallVector<int64_t> shape = keptShape(plan.inputType.getShape(), reduced);
  Value values =
      filledTensor(b, loc, shape, extremeConstant(b, loc, element, isMax));
  Value indices = filledTensor(
      b, loc, shape, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)));
  AffineMap kept = keptDimsMap(rank, reduced, b.getContext());
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank), kept, kept};
  bool isFloat = isa<FloatType>(element);
  bool isUnsigned = element.isUnsignedInteger();
  bool lastIndex = plan.lastIndex;
  int64_t axis = plan.axis;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{values.getType(), indices.getType()}, ValueRange{input},
      ValueRange{values, indices}, maps, iteratorsFor(reduced),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = args[0], best = args[1], bestIndex = args[2];
        Value better;
        if (isFloat) {
          arith::CmpFPredicate predicate =
              isMax ? (lastIndex ? arith::CmpFPredicate::OGE
                                 : arith::CmpFPredicate::OGT)
                    : (lastIndex ? arith::CmpFPredicate::OLE
                                 : arith::CmpFPredicate::OLT);
          better = arith::CmpFOp::create(nb, nl, predicate, x, best);
        } else {
          arith::CmpIPredicate predicate;
          if (isMax)
            predicate = isUnsigned ? (lastIndex ? arith::CmpIPredicate::uge
                                                : arith::CmpIPredicate::ugt)
                                   : (lastIndex ? arith::CmpIPredicate::sge
                                                : arith::CmpIPredicate::sgt);
          else
            predicate = isUnsigned ? (lastIndex ? arith::CmpIPredicate::ule
                                                : arith::CmpIPredicate::ult)
                                   : (lastIndex ? arith::CmpIPredicate::sle
                                                : arith::CmpIPredicate::slt);
          better = arith::CmpIOp::create(nb, nl, predicate, x, best);
        }
        Value position = arith::IndexCastOp::create(
            nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, axis));
        Value newBest = arith::SelectOp::create(nb, nl, better, x, best);
        Value newIndex =
            arith::SelectOp::create(nb, nl, better, position, bestIndex);
        linalg::YieldOp::create(nb, nl, ValueRange{newBest, newIndex});
      });
  return generic.getResult(1);
}

//===----------------------------------------------------------------------===//
// softmax family
//===----------------------------------------------------------------------===//

template <typename OpTy> static std::optional<int64_t> getSoftmaxAxis(OpTy op) {
  auto inputType = staticType(op.getInput().getType());
  if (!inputType || inputType != op.getOutput().getType() ||
      !isComputeFloat(inputType.getElementType()) || inputType.getRank() == 0)
    return std::nullopt;
  return normalizeAxis(static_cast<int64_t>(op.getAxis()), inputType.getRank());
}

/// softmax (or log_softmax) along `axis`, numerically stable: with m the
/// maximum along the axis and s = sum(exp(x - m)), softmax is exp(x - m) / s
/// and log_softmax (x - m) - log(s). The exponentials and s are in f32 for
/// f16 and bf16.
static Value buildSoftmax(OpBuilder &b, Location loc, Value input, int64_t axis,
                          bool isLog) {
  auto type = cast<RankedTensorType>(input.getType());
  Type element = type.getElementType();
  Type acc = accumulatorType(element);
  int64_t rank = type.getRank();
  SmallVector<bool> reduced(rank, false);
  reduced[axis] = true;
  SmallVector<int64_t> shape = keptShape(type.getShape(), reduced);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap kept = keptDimsMap(rank, reduced, b.getContext());
  SmallVector<utils::IteratorType> reduceIterators = iteratorsFor(reduced);

  Value maxInit =
      filledTensor(b, loc, shape, extremeConstant(b, loc, element, true));
  Value max = linalg::GenericOp::create(
                  b, loc, TypeRange{maxInit.getType()}, ValueRange{input},
                  ValueRange{maxInit}, SmallVector<AffineMap>{identity, kept},
                  reduceIterators,
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    linalg::YieldOp::create(
                        nb, nl,
                        arith::MaximumFOp::create(nb, nl, args[1], args[0])
                            .getResult());
                  })
                  .getResult(0);

  auto shifted = [&](OpBuilder &nb, Location nl, Value x, Value m) -> Value {
    return arith::SubFOp::create(nb, nl, convertScalar(nb, nl, x, element, acc),
                                 convertScalar(nb, nl, m, element, acc));
  };
  Value sumInit = filledTensor(b, loc, shape, floatConstant(b, loc, acc, 0.0));
  Value sum =
      linalg::GenericOp::create(
          b, loc, TypeRange{sumInit.getType()}, ValueRange{input, max},
          ValueRange{sumInit}, SmallVector<AffineMap>{identity, kept, kept},
          reduceIterators,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value e =
                math::ExpOp::create(nb, nl, shifted(nb, nl, args[0], args[1]));
            linalg::YieldOp::create(
                nb, nl, arith::AddFOp::create(nb, nl, args[2], e).getResult());
          })
          .getResult(0);

  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), element);
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{input, max, sum},
             ValueRange{init},
             SmallVector<AffineMap>{identity, kept, kept, identity}, parallel,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value d = shifted(nb, nl, args[0], args[1]);
               Value r =
                   isLog ? arith::SubFOp::create(
                               nb, nl, d, math::LogOp::create(nb, nl, args[2]))
                               .getResult()
                         : arith::DivFOp::create(
                               nb, nl, math::ExpOp::create(nb, nl, d), args[2])
                               .getResult();
               linalg::YieldOp::create(nb, nl,
                                       convertScalar(nb, nl, r, acc, element));
             })
      .getResult(0);
}

/// hardmax: 1 at the first maximum along `axis`, 0 elsewhere.
static Value buildHardmax(OpBuilder &b, Location loc, Value input,
                          int64_t axis) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  ArgPlan plan{type, axis, /*keepdims=*/false, /*lastIndex=*/false};
  Value indices = buildArgReduce(b, loc, plan, input, /*isMax=*/true);
  SmallVector<bool> reduced(rank, false);
  reduced[axis] = true;
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), element);
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{indices},
             ValueRange{init},
             SmallVector<AffineMap>{keptDimsMap(rank, reduced, b.getContext()),
                                    b.getMultiDimIdentityMap(rank)},
             parallel,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value position = arith::IndexCastOp::create(
                   nb, nl, nb.getI64Type(),
                   linalg::IndexOp::create(nb, nl, axis));
               Value hit = arith::CmpIOp::create(
                   nb, nl, arith::CmpIPredicate::eq, position, args[0]);
               linalg::YieldOp::create(
                   nb, nl,
                   arith::SelectOp::create(nb, nl, hit,
                                           floatConstant(nb, nl, element, 1.0),
                                           floatConstant(nb, nl, element, 0.0))
                       .getResult());
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// cum_sum
//===----------------------------------------------------------------------===//

static std::optional<int64_t> getCumSumAxis(graph::CumSumOp op) {
  auto inputType = staticType(op.getInput().getType());
  if (!inputType || inputType != op.getOutput().getType() ||
      inputType.getRank() == 0)
    return std::nullopt;
  Type element = inputType.getElementType();
  if (!isComputeFloat(element) && !isArithInt(element))
    return std::nullopt;
  std::optional<int64_t> axis;
  if (std::optional<uint64_t> attr = op.getAxis())
    axis = static_cast<int64_t>(*attr);
  else if (std::optional<SmallVector<int64_t>> values =
               constantInts(op.getDynamicAxis());
           values && values->size() == 1)
    axis = values->front();
  if (!axis)
    return std::nullopt;
  return normalizeAxis(*axis, inputType.getRank());
}

/// cum_sum along `axis` as one generic with an extra reduction dimension j
/// over the axis: out[.., i, ..] = sum over j of in[.., j, ..] where j <= i
/// (j < i exclusive; j >= i / j > i reversed). Quadratic in the axis length,
/// which keeps it a single parallel-friendly linalg op; f16/bf16 accumulate
/// in f32.
static Value buildCumSum(OpBuilder &b, Location loc, Value input, Type element,
                         int64_t axis, bool exclusive, bool reverse) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  Type acc = accumulatorType(element);
  bool isFloat = isa<FloatType>(element);
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> inputExprs;
  for (int64_t i = 0; i < rank; ++i)
    inputExprs.push_back(getAffineDimExpr(i == axis ? rank : i, context));
  AffineMap inputMap = AffineMap::get(rank + 1, 0, inputExprs, context);
  SmallVector<AffineExpr> outputExprs;
  for (int64_t i = 0; i < rank; ++i)
    outputExprs.push_back(getAffineDimExpr(i, context));
  AffineMap outputMap = AffineMap::get(rank + 1, 0, outputExprs, context);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);

  Value init =
      filledTensor(b, loc, type.getShape(), numberConstant(b, loc, acc, 0));
  arith::CmpIPredicate predicate =
      reverse
          ? (exclusive ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::uge)
          : (exclusive ? arith::CmpIPredicate::ult : arith::CmpIPredicate::ule);
  Value sums =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{input},
          ValueRange{init}, SmallVector<AffineMap>{inputMap, outputMap},
          iterators,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value i = linalg::IndexOp::create(nb, nl, axis);
            Value j = linalg::IndexOp::create(nb, nl, rank);
            Value take = arith::CmpIOp::create(nb, nl, predicate, j, i);
            Value x = convertScalar(nb, nl, args[0], element, acc);
            Value added =
                isFloat ? arith::AddFOp::create(nb, nl, args[1], x).getResult()
                        : arith::AddIOp::create(nb, nl, args[1], x).getResult();
            linalg::YieldOp::create(
                nb, nl,
                arith::SelectOp::create(nb, nl, take, added, args[1])
                    .getResult());
          })
          .getResult(0);
  if (acc == getSignlessType(element))
    return sums;
  return mapElements(b, loc, sums, getSignlessType(element),
                     [&](OpBuilder &nb, Location nl, Value v) {
                       return convertScalar(nb, nl, v, acc, element);
                     });
}

//===----------------------------------------------------------------------===//
// Legality and patterns
//===----------------------------------------------------------------------===//

bool strata::detail::canLowerReduction(Operation *op) {
  if (!isa_and_present<graph::GraphDialect>(op->getDialect()))
    return false;
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([](graph::ArgMaxOp op) { return getArgPlan(op).has_value(); })
      .Case([](graph::ArgMinOp op) { return getArgPlan(op).has_value(); })
      .Case([](graph::SoftmaxOp op) { return getSoftmaxAxis(op).has_value(); })
      .Case(
          [](graph::LogSoftmaxOp op) { return getSoftmaxAxis(op).has_value(); })
      .Case([](graph::HardmaxOp op) { return getSoftmaxAxis(op).has_value(); })
      .Case([](graph::CumSumOp op) { return getCumSumAxis(op).has_value(); })
      .Default([](Operation *op) { return getReducePlan(op).has_value(); });
}

namespace {

/// The converted (signless) result type of `op`'s result `index`.
static RankedTensorType convertedResultType(const TypeConverter *converter,
                                            Operation *op, unsigned index = 0) {
  return dyn_cast_or_null<RankedTensorType>(
      converter->convertType(op->getResult(index).getType()));
}

/// reduce_* ops: matched by any op name, planned by getReducePlan.
struct ReduceToLinalg : ConversionPattern {
  ReduceToLinalg(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa_and_present<graph::GraphDialect>(op->getDialect()))
      return failure();
    std::optional<ReducePlan> plan = getReducePlan(op);
    RankedTensorType resultType = convertedResultType(getTypeConverter(), op);
    if (!plan || !resultType)
      return rewriter.notifyMatchFailure(op, "not a lowerable reduction");
    // Operand 0 is the input; a dynamic axes operand (if any) is unused.
    rewriter.replaceOp(op, buildReduce(rewriter, op->getLoc(), *plan,
                                       operands[0], resultType));
    return success();
  }
};

template <typename OpTy, bool IsMax>
struct ArgReduceToLinalg : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<ArgPlan> plan = getArgPlan(op);
    RankedTensorType resultType =
        convertedResultType(this->getTypeConverter(), op);
    if (!plan || !resultType)
      return rewriter.notifyMatchFailure(op, "not a lowerable arg reduction");
    Location loc = op.getLoc();
    Value indices =
        buildArgReduce(rewriter, loc, *plan, adaptor.getInput(), IsMax);
    if (plan->keepdims) {
      SmallVector<bool> reduced(plan->inputType.getRank(), false);
      reduced[plan->axis] = true;
      indices = expandReduced(rewriter, loc, indices, reduced, resultType);
    }
    rewriter.replaceOp(op, indices);
    return success();
  }
};

template <typename OpTy, bool IsLog>
struct SoftmaxToLinalg : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int64_t> axis = getSoftmaxAxis(op);
    if (!axis)
      return rewriter.notifyMatchFailure(op, "not a lowerable softmax");
    rewriter.replaceOp(op, buildSoftmax(rewriter, op.getLoc(),
                                        adaptor.getInput(), *axis, IsLog));
    return success();
  }
};

struct HardmaxToLinalg : OpConversionPattern<graph::HardmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::HardmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int64_t> axis = getSoftmaxAxis(op);
    if (!axis)
      return rewriter.notifyMatchFailure(op, "not a lowerable hardmax");
    rewriter.replaceOp(
        op, buildHardmax(rewriter, op.getLoc(), adaptor.getInput(), *axis));
    return success();
  }
};

struct CumSumToLinalg : OpConversionPattern<graph::CumSumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::CumSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int64_t> axis = getCumSumAxis(op);
    if (!axis)
      return rewriter.notifyMatchFailure(op, "not a lowerable cum_sum");
    Type element =
        cast<RankedTensorType>(op.getInput().getType()).getElementType();
    rewriter.replaceOp(
        op, buildCumSum(rewriter, op.getLoc(), adaptor.getInput(), element,
                        *axis, static_cast<int64_t>(op.getExclusive()) != 0,
                        static_cast<int64_t>(op.getReverse()) != 0));
    return success();
  }
};

} // namespace

void strata::detail::populateReductionToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ReduceToLinalg, ArgReduceToLinalg<graph::ArgMaxOp, true>,
               ArgReduceToLinalg<graph::ArgMinOp, false>,
               SoftmaxToLinalg<graph::SoftmaxOp, false>,
               SoftmaxToLinalg<graph::LogSoftmaxOp, true>, HardmaxToLinalg,
               CumSumToLinalg>(converter, context);
}
