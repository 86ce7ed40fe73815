//===- Loss.cpp - LossAndNorm graph ops to linalg ---------------*- C++ -*-===//
//
// Lowers the graph dialect's losses (negative log likelihood, softmax cross
// entropy) to linalg on tensors, and holds the entry points of the
// LossAndNorm family, whose normalizations (layer, instance, group,
// mean-variance, LRN) and dropout are in Norm.cpp. See Patterns.h for the
// contract.
//
// A loss reads log-probabilities (N, C, d...) at each target's class: the
// per-element loss -w * logp[n, t, d...] is built in a generic over the
// target's shape that reads logp and the class weight through tensor.extract
// (the class is data, not an affine index). Reductions "sum" and "mean" fold
// that generic into one reduction carrying two sums, of the losses and of
// the applied weights ("mean" divides the first by the second, so ignored
// targets neither add loss nor count). f16/bf16 compute in f32.
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

#include <functional>

using namespace mlir;
using namespace strata::detail;
namespace graph = strata::graph;

namespace {

enum class Reduction { None, Sum, Mean };

/// What a loss lowering needs to know about its op, checked up front.
struct LossPlan {
  RankedTensorType input; // (N, C, d...) scores or log-probabilities
  RankedTensorType target;
  bool hasWeight;
  std::optional<int64_t> ignoreIndex;
  Reduction reduction;
};

} // namespace

/// A tensor of `shape` and `element` filled with `value`.
static Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                          Type element, Value value) {
  Value init = tensor::EmptyOp::create(b, loc, shape, element);
  return linalg::FillOp::create(b, loc, value, init).getResult(0);
}

/// Checks the operands and the loss result of a loss op; std::nullopt when
/// it is not lowered.
static std::optional<LossPlan> planLoss(Value input, Value target, Value weight,
                                        std::optional<uint64_t> ignoreIndex,
                                        StringRef reduction, Value loss) {
  LossPlan plan;
  plan.input = staticTensorType(input);
  plan.target = staticTensorType(target);
  if (!plan.input || !plan.target || plan.input.getRank() < 2 ||
      !isComputeFloat(plan.input.getElementType()) ||
      plan.target.getRank() != plan.input.getRank() - 1)
    return std::nullopt;
  Type targetElement = plan.target.getElementType();
  if (!targetElement.isSignlessInteger(32) &&
      !targetElement.isSignlessInteger(64))
    return std::nullopt;
  for (int64_t i = 0; i < plan.target.getRank(); ++i)
    if (plan.target.getDimSize(i) != plan.input.getDimSize(i == 0 ? 0 : i + 1))
      return std::nullopt;
  plan.hasWeight = bool(weight);
  if (weight) {
    auto type = staticTensorType(weight);
    if (!type || type.getRank() != 1 ||
        type.getDimSize(0) != plan.input.getDimSize(1) ||
        type.getElementType() != plan.input.getElementType())
      return std::nullopt;
  }
  if (ignoreIndex)
    plan.ignoreIndex = int64_t(*ignoreIndex);
  if (reduction == "none")
    plan.reduction = Reduction::None;
  else if (reduction == "sum")
    plan.reduction = Reduction::Sum;
  else if (reduction == "mean")
    plan.reduction = Reduction::Mean;
  else
    return std::nullopt;
  auto lossType = staticTensorType(loss);
  if (!lossType || lossType.getElementType() != plan.input.getElementType())
    return std::nullopt;
  if (plan.reduction == Reduction::None
          ? lossType.getShape() != plan.target.getShape()
          : lossType.getNumElements() != 1)
    return std::nullopt;
  return plan;
}

/// The loss of one target element and the weight applied to it, in `acc`:
/// with class t = target[ivs], w = weight[t] (1 without weights; 0 when t is
/// ignore_index) and loss = -w * logp[ivs[0], t, ivs[1:]] (0 when ignored,
/// whatever logp holds). Out-of-range classes, undefined in ONNX, are
/// clamped so the reads stay in bounds.
static std::pair<Value, Value> elementLoss(OpBuilder &b, Location loc,
                                           const LossPlan &plan, Value logp,
                                           Value weight, ValueRange ivs,
                                           Value target, Type acc) {
  int64_t classes = plan.input.getDimSize(1);
  Value t = target;
  if (!t.getType().isInteger(64))
    t = arith::ExtSIOp::create(b, loc, b.getI64Type(), t);
  Value cls = clampIndex(b, loc, toIndex(b, loc, t), classes);
  SmallVector<Value> position{ivs.front(), cls};
  position.append(ivs.begin() + 1, ivs.end());
  Value x = convertNumeric(
      b, loc, tensor::ExtractOp::create(b, loc, logp, position), acc);
  Value w =
      weight ? convertNumeric(
                   b, loc, tensor::ExtractOp::create(b, loc, weight, cls), acc)
             : scalarConstant(b, loc, acc, 1.0);
  Value loss =
      arith::MulFOp::create(b, loc, arith::NegFOp::create(b, loc, x), w);
  if (plan.ignoreIndex) {
    Value ignored = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, t,
        scalarConstant(b, loc, b.getI64Type(), double(*plan.ignoreIndex)));
    Value zero = scalarConstant(b, loc, acc, 0.0);
    loss = arith::SelectOp::create(b, loc, ignored, zero, loss);
    w = arith::SelectOp::create(b, loc, ignored, zero, w);
  }
  return {loss, w};
}

/// The negative log likelihood loss of `logp` (the plan's input shape, any
/// float type) against `target`, with optional class `weight`, as a tensor
/// of `resultType`.
static Value buildNLL(OpBuilder &b, Location loc, const LossPlan &plan,
                      Value logp, Value target, Value weight,
                      RankedTensorType resultType) {
  Type element = resultType.getElementType();
  Type acc = productAccumulatorType(element);
  int64_t rank = plan.target.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);

  if (plan.reduction == Reduction::None)
    return buildIndexedGeneric(
        b, loc, resultType, target, identity,
        [&](OpBuilder &nb, Location nl, ValueRange ivs, ValueRange args) {
          Value loss =
              elementLoss(nb, nl, plan, logp, weight, ivs, args[0], acc).first;
          return convertNumeric(nb, nl, loss, element);
        });

  // One reduction over every target dim into two scalars: the summed losses
  // and the summed weights.
  Value zero = scalarConstant(b, loc, acc, 0.0);
  Value lossInit = filledTensor(b, loc, {}, acc, zero);
  Value weightInit = filledTensor(b, loc, {}, acc, zero);
  AffineMap scalar = AffineMap::get(rank, 0, {}, b.getContext());
  SmallVector<utils::IteratorType> reduction(rank,
                                             utils::IteratorType::reduction);
  auto sums = linalg::GenericOp::create(
      b, loc, TypeRange{lossInit.getType(), weightInit.getType()}, target,
      ValueRange{lossInit, weightInit},
      SmallVector<AffineMap>{identity, scalar, scalar}, reduction,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> ivs;
        for (int64_t d = 0; d < rank; ++d)
          ivs.push_back(linalg::IndexOp::create(nb, nl, d));
        auto [loss, w] =
            elementLoss(nb, nl, plan, logp, weight, ivs, args[0], acc);
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::AddFOp::create(nb, nl, args[1], loss),
                       arith::AddFOp::create(nb, nl, args[2], w)});
      });
  auto scalarType = RankedTensorType::get({}, element);
  Value result = buildIndexedGeneric(
      b, loc, scalarType, sums.getResults(),
      {b.getMultiDimIdentityMap(0), b.getMultiDimIdentityMap(0)},
      [&](OpBuilder &nb, Location nl, ValueRange, ValueRange args) {
        Value v = args[0];
        // Mean over the applied weights: NaN when they sum to 0, as in
        // ONNX's reference.
        if (plan.reduction == Reduction::Mean)
          v = arith::DivFOp::create(nb, nl, v, args[1]);
        return convertNumeric(nb, nl, v, element);
      });
  return reshapeTo(b, loc, result, resultType);
}

/// log_softmax of `scores` (N, C, d...) along the class dim 1, in `acc`:
/// (x - m) - log(sum(exp(x - m))) with m the maximum over the classes.
static Value buildLogSoftmax(OpBuilder &b, Location loc, Value scores,
                             Type acc) {
  auto type = cast<RankedTensorType>(scores.getType());
  int64_t rank = type.getRank();
  MLIRContext *context = b.getContext();
  SmallVector<int64_t> keptShape;
  SmallVector<AffineExpr> keptExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    iterators.push_back(d == 1 ? utils::IteratorType::reduction
                               : utils::IteratorType::parallel);
    if (d == 1)
      continue;
    keptShape.push_back(type.getDimSize(d));
    keptExprs.push_back(getAffineDimExpr(d, context));
  }
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap kept = AffineMap::get(rank, 0, keptExprs, context);
  auto reduce = [&](Value init, ValueRange inputs,
                    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>
                        combine) {
    SmallVector<AffineMap> maps{identity};
    maps.append(inputs.size() - 1, kept);
    maps.push_back(kept);
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
               maps, iterators,
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(nb, nl, combine(nb, nl, args));
               })
        .getResult(0);
  };

  auto negInf = cast<FloatType>(acc);
  Value lowest = arith::ConstantOp::create(
      b, loc,
      b.getFloatAttr(acc, APFloat::getInf(negInf.getFloatSemantics(),
                                          /*Negative=*/true)));
  Value max =
      reduce(filledTensor(b, loc, keptShape, acc, lowest), scores,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value x = convertNumeric(nb, nl, args[0], acc);
               return arith::MaximumFOp::create(nb, nl, args[1], x).getResult();
             });
  Value sum = reduce(
      filledTensor(b, loc, keptShape, acc, scalarConstant(b, loc, acc, 0.0)),
      {scores, max}, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = convertNumeric(nb, nl, args[0], acc);
        Value e = math::ExpOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, x, args[1]));
        return arith::AddFOp::create(nb, nl, args[2], e).getResult();
      });
  return buildIndexedGeneric(
      b, loc, type.clone(acc), {scores, max, sum}, {identity, kept, kept},
      [&](OpBuilder &nb, Location nl, ValueRange, ValueRange args) {
        Value x = convertNumeric(nb, nl, args[0], acc);
        Value shifted = arith::SubFOp::create(nb, nl, x, args[1]);
        return arith::SubFOp::create(nb, nl, shifted,
                                     math::LogOp::create(nb, nl, args[2]))
            .getResult();
      });
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

static Lowering lowerNLL(graph::NegativeLogLikelihoodLossOp op) {
  std::optional<LossPlan> plan =
      planLoss(op.getInput(), op.getTarget(), op.getWeight(),
               op.getIgnoreIndex(), op.getReduction(), op.getLoss());
  if (!plan)
    return nullptr;
  return
      [plan = *plan](OpBuilder &b, Location loc, ValueRange operands,
                     ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
        Value weight = plan.hasWeight ? operands[2] : Value();
        return {buildNLL(b, loc, plan, operands[0], operands[1], weight,
                         results[0])};
      };
}

/// SoftmaxCrossEntropyLoss: the NLL loss of log_softmax(scores) along the
/// classes; the log-probabilities are the second result.
static Lowering lowerSoftmaxCrossEntropy(graph::SoftmaxCrossEntropyLossOp op) {
  std::optional<LossPlan> plan =
      planLoss(op.getScores(), op.getLabels(), op.getWeights(),
               op.getIgnoreIndex(), op.getReduction(), op.getOutput());
  if (!plan || op.getLogProb().getType() != plan->input)
    return nullptr;
  return [plan =
              *plan](OpBuilder &b, Location loc, ValueRange operands,
                     ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Type element = plan.input.getElementType();
    Type acc = productAccumulatorType(element);
    // The loss reads the log-probabilities before they are rounded to a
    // 16-bit result type.
    Value logp = buildLogSoftmax(b, loc, operands[0], acc);
    Value weight = plan.hasWeight ? operands[2] : Value();
    Value loss = buildNLL(b, loc, plan, logp, operands[1], weight, results[0]);
    Value logProb = logp;
    if (acc != element)
      logProb = buildIndexedGeneric(
          b, loc, results[1], logp,
          b.getMultiDimIdentityMap(plan.input.getRank()),
          [&](OpBuilder &nb, Location nl, ValueRange, ValueRange args) {
            return convertNumeric(nb, nl, args[0], element);
          });
    return {loss, logProb};
  };
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

static Lowering getLowering(Operation *op) {
  if (!isa_and_present<graph::GraphDialect>(op->getDialect()))
    return nullptr;
  return llvm::TypeSwitch<Operation *, Lowering>(op)
      .Case([](graph::NegativeLogLikelihoodLossOp op) { return lowerNLL(op); })
      .Case([](graph::SoftmaxCrossEntropyLossOp op) {
        return lowerSoftmaxCrossEntropy(op);
      })
      .Default([](Operation *) { return nullptr; });
}

bool strata::detail::canLowerLossAndNorm(Operation *op) {
  return bool(getLowering(op)) || canLowerNorm(op);
}

void strata::detail::populateLossAndNormToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  addPlannedLowering(converter, patterns, getLowering, "loss");
  populateNormToLinalgPatterns(converter, patterns);
}
