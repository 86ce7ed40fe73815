//===- ReductionOps.cpp - reductions, softmax, cumsum, losses ---*- C++ -*-===//
//
// Shape inference, verifiers and canonicalizations of the reduction family.
// Reductions and CumSum accept their axes as an operand when ONNX computes
// them at run time; canonicalization moves constant ones into the attribute,
// which is the form later layers rely on. Sum, Mean, Max, Min and Prod of a
// small constant fold (shape arithmetic that exporters write in float).
//
//===----------------------------------------------------------------------===//

#include "ConstantValues.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata::graph;

/// Verifies that `axis` is within the rank of `op`'s first operand.
static LogicalResult verifyAxisInRange(Operation *op, int64_t axis,
                                       StringRef name = "axis") {
  auto type = cast<TensorType>(op->getOperand(0).getType());
  if (type.hasRank() && !normalizeAxis(axis, type.getRank()))
    return op->emitOpError()
           << name << " " << axis << " is out of range for an input of rank "
           << type.getRank();
  return success();
}

/// Verifies that an integer flag attribute is 0 or 1.
static LogicalResult verifyFlag(Operation *op, StringRef name, int64_t value) {
  if (value != 0 && value != 1)
    return op->emitOpError() << name << " must be 0 or 1, got " << value;
  return success();
}

//===----------------------------------------------------------------------===//
// ArgMax / ArgMin
//===----------------------------------------------------------------------===//

template <typename Op>
static LogicalResult inferArgReduce(Op op, SmallVectorImpl<Type> &types) {
  auto input = cast<TensorType>(op.getInput().getType());
  if (!input.hasRank()) {
    types.push_back(withShape(op.getType(), std::nullopt));
    return success();
  }
  auto axis = normalizeAxis(op.getAxis(), input.getRank());
  if (!axis)
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  if (op.getKeepdims())
    shape[*axis] = 1;
  else
    shape.erase(shape.begin() + *axis);
  types.push_back(withShape(op.getType(), ArrayRef<int64_t>(shape)));
  return success();
}

template <typename Op> static LogicalResult verifyArgReduce(Op op) {
  if (failed(verifyFlag(op, "keepdims", op.getKeepdims())) ||
      failed(verifyFlag(op, "select_last_index", op.getSelectLastIndex())))
    return failure();
  return verifyAxisInRange(op, op.getAxis());
}

LogicalResult ArgMaxOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferArgReduce(*this, types);
}
LogicalResult ArgMaxOp::verify() { return verifyArgReduce(*this); }
LogicalResult ArgMinOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferArgReduce(*this, types);
}
LogicalResult ArgMinOp::verify() { return verifyArgReduce(*this); }

//===----------------------------------------------------------------------===//
// Reductions with an `axes` attribute or a `dynamic_axes` operand
//===----------------------------------------------------------------------===//

/// The result type of a reduction whose axes are unknown at compile time.
/// With keepdims every dimension either stays or becomes 1, so the rank is
/// kept; without it the rank is known only when the number of axes is.
static LogicalResult inferDynamicReduction(Operation *op, Value axes,
                                           bool keepdims, bool noop,
                                           SmallVectorImpl<Type> &types) {
  auto input = cast<TensorType>(op->getOperand(0).getType());
  Type result = op->getResult(0).getType();
  if (!input.hasRank()) {
    types.push_back(withShape(result, std::nullopt));
    return success();
  }
  if (keepdims) {
    SmallVector<int64_t> shape;
    for (int64_t dim : input.getShape())
      shape.push_back(dim == 1 ? 1 : kDynamic);
    types.push_back(withShape(result, ArrayRef<int64_t>(shape)));
    return success();
  }
  auto axesType = cast<TensorType>(axes.getType());
  if (!axesType.hasStaticShape() || axesType.getRank() != 1) {
    types.push_back(withShape(result, std::nullopt));
    return success();
  }
  int64_t count = axesType.getDimSize(0);
  if (count > input.getRank())
    return failure();
  // No axes: the identity with noop_with_empty_axes, else a full reduction.
  if (count == 0) {
    if (noop)
      types.push_back(withShape(result, input.getShape()));
    else
      types.push_back(withShape(result, ArrayRef<int64_t>()));
    return success();
  }
  SmallVector<int64_t> shape(input.getRank() - count, kDynamic);
  types.push_back(withShape(result, ArrayRef<int64_t>(shape)));
  return success();
}

template <typename Op>
static LogicalResult inferReduceAxes(Op op, SmallVectorImpl<Type> &types) {
  bool keepdims = op.getKeepdims() != 0;
  bool noop = op.getNoopWithEmptyAxes() != 0;
  Value dynamicAxes = op.getDynamicAxes();
  if (!dynamicAxes)
    return inferReduction(op, op.getAxes(), keepdims, noop, types);
  SmallVector<int64_t> axes;
  if (succeeded(getConstantIntValues(dynamicAxes, axes)))
    return inferReduction(op, ArrayRef<int64_t>(axes), keepdims, noop, types);
  return inferDynamicReduction(op, dynamicAxes, keepdims, noop, types);
}

template <typename Op> static LogicalResult verifyReduceAxes(Op op) {
  if (failed(verifyFlag(op, "keepdims", op.getKeepdims())) ||
      failed(verifyFlag(op, "noop_with_empty_axes", op.getNoopWithEmptyAxes())))
    return failure();
  Value dynamicAxes = op.getDynamicAxes();
  if (!dynamicAxes)
    return verifyReduction(op, op.getAxes());
  if (op.getAxes())
    return op.emitOpError(
        "takes its axes either as the `axes` attribute or as an operand, "
        "not both");
  auto axesType = cast<TensorType>(dynamicAxes.getType());
  if (axesType.hasRank() && axesType.getRank() != 1)
    return op.emitOpError("axes operand must be 1-D, got ") << axesType;
  auto input = cast<TensorType>(op.getInput().getType());
  if (input.hasRank() && axesType.hasStaticShape() &&
      axesType.getDimSize(0) > input.getRank())
    return op.emitOpError("has ")
           << axesType.getDimSize(0) << " axes for an input of rank "
           << input.getRank();
  SmallVector<int64_t> axes;
  if (succeeded(getConstantIntValues(dynamicAxes, axes)))
    return verifyReduction(op, ArrayRef<int64_t>(axes));
  return success();
}

namespace {
/// How a reduction combines the elements it folds.
enum class Combine { Sum, Mean, Max, Min, Prod };

template <typename Op> constexpr Combine combineOf();
template <> constexpr Combine combineOf<ReduceSumOp>() { return Combine::Sum; }
template <> constexpr Combine combineOf<ReduceMeanOp>() {
  return Combine::Mean;
}
template <> constexpr Combine combineOf<ReduceMaxOp>() { return Combine::Max; }
template <> constexpr Combine combineOf<ReduceMinOp>() { return Combine::Min; }
template <> constexpr Combine combineOf<ReduceProdOp>() {
  return Combine::Prod;
}

/// The most elements a reduction of a constant folds: exporters reduce
/// small shape tensors (torchvision's detection transform takes the max of
/// the image sizes, in float, to size its padding).
constexpr int64_t kMaxFoldedReduction = 4096;

/// A Sum, Mean, Max, Min or Prod of a constant, computed in double (float
/// elements) or int64 (integer elements; Mean then divides and truncates).
template <typename Op>
LogicalResult foldConstantReduction(Op op, PatternRewriter &rewriter) {
  Attribute attr;
  auto resultType = dyn_cast<RankedTensorType>(op.getType());
  if (op.getDynamicAxes() || !resultType || !resultType.hasStaticShape() ||
      !matchPattern(op.getInput(), m_Constant(&attr)))
    return failure();
  std::optional<folding::ConstValues> input = folding::readConstant(attr);
  if (!input)
    return failure();
  bool isFloat = input->isFloat;
  const SmallVector<double> &floats = input->floats;
  const SmallVector<int64_t> &ints = input->ints;
  int64_t count = isFloat ? floats.size() : ints.size();
  if (count > kMaxFoldedReduction || count == 0)
    return failure();
  ArrayRef<int64_t> shape = input->shape;
  int64_t rank = shape.size();
  SmallVector<bool> reduced(rank, false);
  std::optional<ArrayRef<int64_t>> axes = op.getAxes();
  if (!axes || axes->empty()) {
    if (op.getNoopWithEmptyAxes())
      return failure(); // the identity; its folder is the op's own business
    reduced.assign(rank, true);
  } else {
    for (int64_t axis : *axes) {
      std::optional<int64_t> normalized = normalizeAxis(axis, rank);
      if (!normalized)
        return failure();
      reduced[*normalized] = true;
    }
  }
  // Each element's place in the result: its coordinates along the axes that
  // stay, row-major.
  int64_t outCount = 1, perOut = 1;
  for (int64_t d = 0; d < rank; ++d)
    (reduced[d] ? perOut : outCount) *= shape[d];
  if (resultType.getNumElements() != outCount)
    return failure();
  constexpr Combine combine = combineOf<Op>();
  SmallVector<double> outFloats(outCount);
  SmallVector<int64_t> outInts(outCount);
  SmallVector<bool> seen(outCount, false);
  SmallVector<int64_t> coords(rank, 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t out = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d])
        out = out * shape[d] + coords[d];
    auto merge = [&](auto &acc, auto v) {
      if (!seen[out]) {
        acc = v;
        return;
      }
      switch (combine) {
      case Combine::Sum:
      case Combine::Mean:
        acc += v;
        break;
      case Combine::Max:
        acc = std::max(acc, v);
        break;
      case Combine::Min:
        acc = std::min(acc, v);
        break;
      case Combine::Prod:
        acc *= v;
        break;
      }
    };
    if (isFloat)
      merge(outFloats[out], floats[flat]);
    else
      merge(outInts[out], ints[flat]);
    seen[out] = true;
    for (int64_t d = rank - 1; d >= 0 && ++coords[d] == shape[d]; --d)
      coords[d] = 0;
  }
  if (combine == Combine::Mean) {
    for (double &v : outFloats)
      v /= double(perOut);
    for (int64_t &v : outInts)
      v /= perOut;
  }
  Attribute value = isFloat ? folding::makeConstant(resultType, outFloats, {})
                            : folding::makeConstant(resultType, {}, outInts);
  if (!value)
    return failure();
  rewriter.replaceOpWithNewOp<ConstantOp>(op, cast<ElementsAttr>(value));
  return success();
}
} // namespace

/// The reductions that fold a constant input (Sum, Mean, Max, Min, Prod).
template <typename Op>
static void addConstantFold(RewritePatternSet &patterns) {
  if constexpr (std::is_same_v<Op, ReduceSumOp> ||
                std::is_same_v<Op, ReduceMeanOp> ||
                std::is_same_v<Op, ReduceMaxOp> ||
                std::is_same_v<Op, ReduceMinOp> ||
                std::is_same_v<Op, ReduceProdOp>)
    patterns.add(+[](Op op, PatternRewriter &rewriter) {
      return foldConstantReduction(op, rewriter);
    });
}

/// A mean or max over every spatial axis of an image batch [N, C, D...] (2
/// or 3 spatial axes, floats) is GlobalAveragePool or GlobalMaxPool. torch's
/// dynamo exporter writes `adaptive_avg_pool2d(x, 1)` (a squeeze-and-
/// excitation block's pool, a CNN's head) as ReduceMean over [2, 3], the
/// TorchScript exporter as GlobalAveragePool; one form means the layers
/// below treat both alike: the GPU's convolution rewrites read the pool's
/// input channels-last where it lies (ConvToGemm.cpp) and the CPU runs it as
/// oneDNN's pool beside its convolutions (Library.cpp), where a reduction
/// over [2, 3] needed a channels-first copy of its input. Without keepdims the
/// pool's [N, C, 1...] is viewed as [N, C].
template <typename Op>
static void addGlobalPoolForm(RewritePatternSet &patterns) {
  if constexpr (std::is_same_v<Op, ReduceMeanOp> ||
                std::is_same_v<Op, ReduceMaxOp>)
    patterns.add(+[](Op op, PatternRewriter &rewriter) -> LogicalResult {
      auto input = dyn_cast<RankedTensorType>(op.getInput().getType());
      std::optional<ArrayRef<int64_t>> axes = op.getAxes();
      if (op.getDynamicAxes() || !input || !axes ||
          !isa<FloatType>(input.getElementType()) || input.getRank() < 4 ||
          input.getRank() > 5)
        return failure();
      int64_t rank = input.getRank();
      SmallVector<int64_t> normalized;
      for (int64_t axis : *axes) {
        std::optional<int64_t> n = normalizeAxis(axis, rank);
        if (!n)
          return failure();
        normalized.push_back(*n);
      }
      llvm::sort(normalized);
      if (!llvm::equal(normalized, llvm::seq<int64_t>(2, rank)))
        return failure();
      SmallVector<int64_t> pooledShape(input.getShape().take_front(2));
      pooledShape.append(rank - 2, 1);
      auto pooledType =
          RankedTensorType::get(pooledShape, input.getElementType());
      // Checked before anything is created: a pattern that fails leaves the
      // IR as it was.
      if (op.getKeepdims() && pooledType != op.getType())
        return failure();
      Location loc = op.getLoc();
      Value pooled;
      if constexpr (std::is_same_v<Op, ReduceMeanOp>)
        pooled = GlobalAveragePoolOp::create(rewriter, loc, pooledType,
                                             op.getInput());
      else
        pooled =
            GlobalMaxPoolOp::create(rewriter, loc, pooledType, op.getInput());
      if (op.getKeepdims()) {
        rewriter.replaceOp(op, pooled);
        return success();
      }
      // [N, C]: ONNX's 0 keeps a dimension, so the view holds for a
      // dynamic batch too.
      auto shapeType = RankedTensorType::get({2}, rewriter.getI64Type());
      Value shape =
          ConstantOp::create(rewriter, loc,
                             cast<ElementsAttr>(DenseElementsAttr::get(
                                 shapeType, ArrayRef<int64_t>{0, 0})));
      rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), pooled, shape,
                                             rewriter.getI64IntegerAttr(0));
      return success();
    });
}

#define REDUCE_AXES_OP(Op)                                                     \
  LogicalResult Op::inferResultTypes(SmallVectorImpl<Type> &types) {           \
    return inferReduceAxes(*this, types);                                      \
  }                                                                            \
  LogicalResult Op::verify() { return verifyReduceAxes(*this); }               \
  void Op::getCanonicalizationPatterns(RewritePatternSet &patterns,            \
                                       MLIRContext *context) {                 \
    patterns.add(+[](Op op, PatternRewriter &rewriter) {                       \
      return moveConstantOperandToAttr(                                        \
          rewriter, op, op.getDynamicAxesMutable(), "axes",                    \
          [&](ArrayRef<int64_t> v) {                                           \
            return i64ArrayAttr(op.getContext(), v);                           \
          });                                                                  \
    });                                                                        \
    addConstantFold<Op>(patterns);                                             \
    addGlobalPoolForm<Op>(patterns);                                           \
  }

REDUCE_AXES_OP(ReduceSumOp)
REDUCE_AXES_OP(ReduceMeanOp)
REDUCE_AXES_OP(ReduceMaxOp)
REDUCE_AXES_OP(ReduceMinOp)
REDUCE_AXES_OP(ReduceProdOp)
REDUCE_AXES_OP(ReduceL1Op)
REDUCE_AXES_OP(ReduceL2Op)
REDUCE_AXES_OP(ReduceLogSumOp)
REDUCE_AXES_OP(ReduceLogSumExpOp)
REDUCE_AXES_OP(ReduceSumSquareOp)
#undef REDUCE_AXES_OP

//===----------------------------------------------------------------------===//
// Softmax family: the result has the input's type.
//===----------------------------------------------------------------------===//

#define SAME_TYPE_AXIS_OP(Op)                                                  \
  LogicalResult Op::inferResultTypes(SmallVectorImpl<Type> &types) {           \
    types.push_back(getInput().getType());                                     \
    return success();                                                          \
  }                                                                            \
  LogicalResult Op::verify() { return verifyAxisInRange(*this, getAxis()); }

SAME_TYPE_AXIS_OP(SoftmaxOp)
SAME_TYPE_AXIS_OP(LogSoftmaxOp)
SAME_TYPE_AXIS_OP(HardmaxOp)
#undef SAME_TYPE_AXIS_OP

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

LogicalResult CumSumOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  types.push_back(getInput().getType());
  return success();
}

LogicalResult CumSumOp::verify() {
  if (failed(verifyFlag(*this, "exclusive", getExclusive())) ||
      failed(verifyFlag(*this, "reverse", getReverse())))
    return failure();
  Value dynamicAxis = getDynamicAxis();
  if (dynamicAxis && getAxis())
    return emitOpError("takes its axis either as the `axis` attribute or as "
                       "an operand, not both");
  if (!dynamicAxis && !getAxis())
    return emitOpError("needs an `axis` attribute or an axis operand");
  if (!dynamicAxis)
    return verifyAxisInRange(*this, *getAxis());
  // ONNX specifies a 0-D axis; a one-element 1-D tensor is accepted too.
  auto axisType = cast<TensorType>(dynamicAxis.getType());
  if (axisType.hasRank() &&
      (axisType.getRank() > 1 ||
       (axisType.getRank() == 1 && axisType.getDimSize(0) != 1 &&
        !ShapedType::isDynamic(axisType.getDimSize(0)))))
    return emitOpError("axis operand must be a scalar, got ") << axisType;
  SmallVector<int64_t> axis;
  if (succeeded(getConstantIntValues(dynamicAxis, axis)) && axis.size() == 1)
    return verifyAxisInRange(*this, axis.front());
  return success();
}

/// A CumSum of a constant, in double (float elements) or int64 (integers),
/// as the constant reductions fold: exporters compute masks and position ids
/// so (transformers' packed-sequence detection sums a constant's steps).
static LogicalResult foldConstantCumSum(CumSumOp op,
                                        PatternRewriter &rewriter) {
  Attribute attr;
  auto resultType = dyn_cast<RankedTensorType>(op.getType());
  if (op.getDynamicAxis() || !op.getAxis() || !resultType ||
      !resultType.hasStaticShape() ||
      !matchPattern(op.getInput(), m_Constant(&attr)))
    return failure();
  std::optional<folding::ConstValues> input = folding::readConstant(attr);
  if (!input || ArrayRef<int64_t>(input->shape) != resultType.getShape())
    return failure();
  ArrayRef<int64_t> shape = input->shape;
  std::optional<int64_t> axis = normalizeAxis(*op.getAxis(), shape.size());
  if (!axis)
    return failure();
  // Each line along the axis: `outer` lines of `dim` elements `inner` apart.
  int64_t dim = shape[*axis], outer = 1, inner = 1;
  for (int64_t d = 0; d < *axis; ++d)
    outer *= shape[d];
  for (int64_t d = *axis + 1; d < int64_t(shape.size()); ++d)
    inner *= shape[d];
  bool exclusive = op.getExclusive() != 0, reverse = op.getReverse() != 0;
  auto scan = [&](auto &values) {
    using T = std::decay_t<decltype(values[0])>;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        T sum = 0;
        for (int64_t s = 0; s < dim; ++s) {
          int64_t at = (o * dim + (reverse ? dim - 1 - s : s)) * inner + i;
          T x = values[at];
          values[at] = exclusive ? sum : sum + x;
          sum += x;
        }
      }
  };
  if (input->isFloat)
    scan(input->floats);
  else
    scan(input->ints);
  Attribute value = input->isFloat
                        ? folding::makeConstant(resultType, input->floats, {})
                        : folding::makeConstant(resultType, {}, input->ints);
  if (!value)
    return failure();
  rewriter.replaceOpWithNewOp<ConstantOp>(op, cast<ElementsAttr>(value));
  return success();
}

void CumSumOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add(+[](CumSumOp op, PatternRewriter &rewriter) {
    return moveConstantOperandToAttr(
        rewriter, op, op.getDynamicAxisMutable(), "axis",
        [&](ArrayRef<int64_t> v) { return i64ScalarAttr(op.getContext(), v); });
  });
  patterns.add(foldConstantCumSum);
}

//===----------------------------------------------------------------------===//
// NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss
//===----------------------------------------------------------------------===//

/// The loss shape: the target's (N, d1, ..., dk) for reduction "none", which
/// the input's (N, C, d1, ..., dk) also determines, else a scalar.
static LogicalResult inferLossType(Value input, Value target,
                                   StringRef reduction, Type result,
                                   SmallVectorImpl<Type> &types) {
  if (reduction != "none") {
    types.push_back(withShape(result, ArrayRef<int64_t>()));
    return success();
  }
  auto inputType = cast<TensorType>(input.getType());
  auto targetType = cast<TensorType>(target.getType());
  Type fromTarget = withShape(
      result, targetType.hasRank()
                  ? std::optional<ArrayRef<int64_t>>(targetType.getShape())
                  : std::nullopt);
  if (!inputType.hasRank()) {
    types.push_back(fromTarget);
    return success();
  }
  if (inputType.getRank() < 2)
    return failure();
  SmallVector<int64_t> shape(inputType.getShape());
  shape.erase(shape.begin() + 1);
  Type joined =
      joinTypes(fromTarget, withShape(result, ArrayRef<int64_t>(shape)));
  if (!joined)
    return failure();
  types.push_back(joined);
  return success();
}

/// Checks the operands of a loss: `input` (N, C, d1, ..., dk) floats,
/// `target` (N, d1, ..., dk), `weight` (C) with the input's element type.
static LogicalResult verifyLoss(Operation *op, Value input, Value target,
                                Value weight, StringRef reduction,
                                StringRef inputName, StringRef targetName,
                                StringRef weightName) {
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return op->emitOpError("reduction must be \"none\", \"sum\" or \"mean\", "
                           "got \"")
           << reduction << "\"";
  auto inputType = cast<TensorType>(input.getType());
  auto targetType = cast<TensorType>(target.getType());
  Type element = inputType.getElementType();
  if (!isa<FloatType>(element))
    return op->emitOpError() << inputName << " must have a floating-point "
                             << "element type, got " << element;
  for (Value result : op->getResults())
    if (getElementTypeOrSelf(result) != element)
      return op->emitOpError("result element types must match the ")
             << inputName << "'s";
  if (inputType.hasRank() && inputType.getRank() < 2)
    return op->emitOpError() << inputName << " must have rank >= 2 (N, C, "
                             << "...), got " << inputType;
  if (inputType.hasRank() && targetType.hasRank()) {
    if (targetType.getRank() != inputType.getRank() - 1)
      return op->emitOpError()
             << targetName << " rank must be one less than the " << inputName
             << "'s: " << targetType << " vs " << inputType;
    for (int64_t i = 0; i < targetType.getRank(); ++i) {
      int64_t a = targetType.getDimSize(i);
      int64_t b = inputType.getDimSize(i == 0 ? 0 : i + 1);
      if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
        return op->emitOpError()
               << targetName << " dimension " << i << " is " << a
               << ", but the " << inputName << " has " << b;
    }
  }
  if (!weight)
    return success();
  auto weightType = cast<TensorType>(weight.getType());
  if (weightType.getElementType() != element)
    return op->emitOpError()
           << weightName << " element type " << weightType.getElementType()
           << " differs from the " << inputName << "'s";
  if (!weightType.hasRank())
    return success();
  if (weightType.getRank() != 1)
    return op->emitOpError()
           << weightName << " must be 1-D, got " << weightType;
  if (inputType.hasRank()) {
    int64_t classes = inputType.getDimSize(1);
    int64_t size = weightType.getDimSize(0);
    if (!ShapedType::isDynamic(classes) && !ShapedType::isDynamic(size) &&
        classes != size)
      return op->emitOpError() << weightName << " has " << size
                               << " elements for " << classes << " classes";
  }
  return success();
}

LogicalResult
NegativeLogLikelihoodLossOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferLossType(getInput(), getTarget(), getReduction(), getType(),
                       types);
}

LogicalResult NegativeLogLikelihoodLossOp::verify() {
  return verifyLoss(*this, getInput(), getTarget(), getWeight(), getReduction(),
                    "input", "target", "weight");
}

LogicalResult
SoftmaxCrossEntropyLossOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  if (failed(inferLossType(getScores(), getLabels(), getReduction(),
                           getOutput().getType(), types)))
    return failure();
  types.push_back(
      withShape(getLogProb().getType(),
                cast<TensorType>(getScores().getType()).hasRank()
                    ? std::optional<ArrayRef<int64_t>>(
                          cast<TensorType>(getScores().getType()).getShape())
                    : std::nullopt));
  return success();
}

LogicalResult SoftmaxCrossEntropyLossOp::verify() {
  return verifyLoss(*this, getScores(), getLabels(), getWeights(),
                    getReduction(), "scores", "labels", "weights");
}
