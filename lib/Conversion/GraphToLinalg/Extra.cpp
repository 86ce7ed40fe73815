//===- Extra.cpp - optimizer, training and run-time-axis ops ----*- C++ -*-===//
//
// Lowers the graph ops no other family takes whose results still follow
// from a fixed formula: the optimizer steps of ONNX's training domain
// (Momentum, Adagrad, Adam), batch normalization in training mode, cum_sum
// and reduce_sum whose axes are only known at run time, and
// tfidf_vectorizer over integers. See Patterns.h for the contract.
//
// The optimizers update n tensors at once: one multi-result linalg.generic
// per tensor, with the scalar coefficients (which depend on the run-time
// learning rate R and step count T) computed once outside it, in f64 so
// that terms like 1 - beta^T keep their precision in f32 models.
//
// A run-time cum_sum axis has at most rank possible values and the shapes
// are static, so the lowering builds one cumulative sum per axis and picks
// one with scf.index_switch on the (wrapped) axis value; reduce_sum with
// run-time axes whose static shapes fit several axis sets does the same
// over those sets.
//
// tfidf_vectorizer's pool is an attribute: constant tables of its n-grams
// feed one generic that counts every (row, n-gram, start, skip) match and
// one that scatters the weighted counts to their output columns.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "Patterns.h"

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/bit.h"

#include <functional>

using namespace mlir;
using namespace strata::detail;
namespace graph = strata::graph;

namespace {

/// Scalar arithmetic on floats of one type, to keep the formulas readable.
struct FloatMath {
  OpBuilder &b;
  Location loc;
  Type type;

  Value c(double v) const { return scalarConstant(b, loc, type, v); }
  Value add(Value x, Value y) const {
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) const {
    return arith::SubFOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) const {
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y) const {
    return arith::DivFOp::create(b, loc, x, y);
  }
  Value sqrt(Value x) const { return math::SqrtOp::create(b, loc, x); }
};

} // namespace

static bool isF32OrF64(Type type) { return type.isF32() || type.isF64(); }

/// Converts a float scalar to `to` (extension or truncation).
static Value castFloat(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, value);
  return arith::TruncFOp::create(b, loc, to, value);
}

/// A multi-result elementwise linalg.generic over `inputs` (all of
/// `shape`), producing `numResults` tensors of `shape` and `element`.
static SmallVector<Value> mapMany(
    OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<int64_t> shape,
    Type element, unsigned numResults,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  auto type = RankedTensorType::get(shape, element);
  SmallVector<Value> inits;
  for (unsigned i = 0; i < numResults; ++i)
    inits.push_back(tensor::EmptyOp::create(b, loc, shape, element));
  int64_t rank = static_cast<int64_t>(shape.size());
  SmallVector<AffineMap> maps(inputs.size() + numResults,
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, SmallVector<Type>(numResults, type), inputs, inits, maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, body(nb, nl, args));
      });
  return SmallVector<Value>(generic.getResults());
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

/// Checks an optimizer with `groups` input groups (X, G, state...) and
/// `groups - 1` result groups (X, state...): static f32/f64 tensors whose
/// groups agree entry by entry, and scalar-like R and T.
static bool isLowerableOptimizer(Operation *op, unsigned groups) {
  if (!allStaticTensors(op) || op->getNumOperands() < 2)
    return false;
  unsigned numInputs = op->getNumOperands() - 2;
  if (numInputs == 0 || numInputs % groups != 0)
    return false;
  unsigned n = numInputs / groups;
  if (op->getNumResults() != n * (groups - 1))
    return false;
  auto r = cast<RankedTensorType>(op->getOperand(0).getType());
  auto t = cast<RankedTensorType>(op->getOperand(1).getType());
  if (r.getNumElements() < 1 || t.getNumElements() < 1 ||
      !isF32OrF64(r.getElementType()))
    return false;
  for (unsigned i = 0; i < n; ++i) {
    Type type = op->getOperand(2 + i).getType();
    if (!isF32OrF64(cast<RankedTensorType>(type).getElementType()))
      return false;
    for (unsigned g = 1; g < groups; ++g)
      if (op->getOperand(2 + g * n + i).getType() != type)
        return false;
    for (unsigned g = 0; g + 1 < groups; ++g)
      if (op->getResult(g * n + i).getType() != type)
        return false;
  }
  return true;
}

/// Runs `update` once per optimized tensor: it gets that tensor's inputs
/// (X, G, state...) as scalars and returns its results (X, state...); the
/// results are regrouped as the op orders them (all X, then each state).
static SmallVector<Value> lowerOptimizer(
    OpBuilder &b, Location loc, ValueRange operands, unsigned groups,
    function_ref<SmallVector<Value>(const FloatMath &, ValueRange)> update) {
  unsigned n = (operands.size() - 2) / groups;
  SmallVector<Value> results((groups - 1) * n);
  for (unsigned i = 0; i < n; ++i) {
    SmallVector<Value> inputs;
    for (unsigned g = 0; g < groups; ++g)
      inputs.push_back(operands[2 + g * n + i]);
    auto type = cast<RankedTensorType>(inputs.front().getType());
    SmallVector<Value> updated =
        mapMany(b, loc, inputs, type.getShape(), type.getElementType(),
                groups - 1, [&](OpBuilder &nb, Location nl, ValueRange args) {
                  FloatMath m{nb, nl, type.getElementType()};
                  return update(m, args.take_front(groups));
                });
    for (unsigned g = 0; g + 1 < groups; ++g)
      results[g * n + i] = updated[g];
  }
  return results;
}

/// R and T as f64 scalars (T converted from its i64), plus T > 0.
struct StepScalars {
  Value r, t, positive;
};
static StepScalars readStep(OpBuilder &b, Location loc, ValueRange operands) {
  Type f64 = b.getF64Type();
  Value r = castFloat(b, loc, extractFirst(b, loc, operands[0]), f64);
  Value count = extractFirst(b, loc, operands[1]);
  Value t = arith::SIToFPOp::create(b, loc, f64, count);
  Value positive =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, count,
                            scalarConstant(b, loc, count.getType(), 0));
  return {r, t, positive};
}

/// Momentum: v' = alpha v + beta' (norm x + g) with beta' = 1 on the first
/// step (T = 0); x' = x - R v' (standard) or x - R (g_reg + alpha v')
/// (Nesterov).
static Lowering lowerMomentum(graph::MomentumOp op) {
  if (!isLowerableOptimizer(op, 3))
    return nullptr;
  bool nesterov = op.getMode() == "nesterov";
  if (!nesterov && op.getMode() != "standard")
    return nullptr;
  double alpha = op.getAlpha().convertToDouble();
  double beta = op.getBeta().convertToDouble();
  double norm = op.getNormCoefficient().convertToDouble();
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType>) {
    StepScalars step = readStep(b, loc, operands);
    FloatMath f64{b, loc, b.getF64Type()};
    Value betaAdjusted =
        arith::SelectOp::create(b, loc, step.positive, f64.c(beta), f64.c(1));
    return lowerOptimizer(
        b, loc, operands, 3, [&](const FloatMath &m, ValueRange args) {
          Value r = castFloat(m.b, m.loc, step.r, m.type);
          Value betaT = castFloat(m.b, m.loc, betaAdjusted, m.type);
          Value x = args[0], g = args[1], v = args[2];
          Value gReg = m.add(m.mul(m.c(norm), x), g);
          Value vNew = m.add(m.mul(m.c(alpha), v), m.mul(betaT, gReg));
          Value direction =
              nesterov ? m.add(gReg, m.mul(m.c(alpha), vNew)) : vNew;
          Value xNew = m.sub(x, m.mul(r, direction));
          return SmallVector<Value>{xNew, vNew};
        });
  };
}

/// Adagrad: h' = h + g_reg^2, x' = x - R / (1 + T decay) g_reg /
/// (sqrt(h') + epsilon).
static Lowering lowerAdagrad(graph::AdagradOp op) {
  if (!isLowerableOptimizer(op, 3))
    return nullptr;
  double epsilon = op.getEpsilon().convertToDouble();
  double decay = op.getDecayFactor().convertToDouble();
  double norm = op.getNormCoefficient().convertToDouble();
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType>) {
    StepScalars step = readStep(b, loc, operands);
    FloatMath f64{b, loc, b.getF64Type()};
    Value rate =
        f64.div(step.r, f64.add(f64.c(1), f64.mul(step.t, f64.c(decay))));
    return lowerOptimizer(b, loc, operands, 3,
                          [&](const FloatMath &m, ValueRange args) {
                            Value r = castFloat(m.b, m.loc, rate, m.type);
                            Value x = args[0], g = args[1], h = args[2];
                            Value gReg = m.add(m.mul(m.c(norm), x), g);
                            Value hNew = m.add(h, m.mul(gReg, gReg));
                            Value scale = m.add(m.sqrt(hNew), m.c(epsilon));
                            Value xNew = m.sub(x, m.div(m.mul(r, gReg), scale));
                            return SmallVector<Value>{xNew, hNew};
                          });
  };
}

/// Adam: v' = alpha v + (1 - alpha) g_reg, h' = beta h + (1 - beta) g_reg^2,
/// x' = (1 - norm_post) (x - R' v' / (sqrt(h') + epsilon)) with the bias
/// corrected rate R' = R sqrt(1 - beta^T) / (1 - alpha^T) once T > 0.
static Lowering lowerAdam(graph::AdamOp op) {
  if (!isLowerableOptimizer(op, 4))
    return nullptr;
  double alpha = op.getAlpha().convertToDouble();
  double beta = op.getBeta().convertToDouble();
  double epsilon = op.getEpsilon().convertToDouble();
  double norm = op.getNormCoefficient().convertToDouble();
  double normPost = op.getNormCoefficientPost().convertToDouble();
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType>) {
    StepScalars step = readStep(b, loc, operands);
    FloatMath f64{b, loc, b.getF64Type()};
    Value betaT = math::PowFOp::create(b, loc, f64.c(beta), step.t);
    Value alphaT = math::PowFOp::create(b, loc, f64.c(alpha), step.t);
    Value corrected =
        f64.div(f64.mul(step.r, f64.sqrt(f64.sub(f64.c(1), betaT))),
                f64.sub(f64.c(1), alphaT));
    // At T = 0 the correction divides by zero; the select discards it.
    Value rate =
        arith::SelectOp::create(b, loc, step.positive, corrected, step.r);
    return lowerOptimizer(
        b, loc, operands, 4, [&](const FloatMath &m, ValueRange args) {
          Value r = castFloat(m.b, m.loc, rate, m.type);
          Value x = args[0], g = args[1], v = args[2], h = args[3];
          Value gReg = m.add(m.mul(m.c(norm), x), g);
          Value vNew = m.add(m.mul(m.c(alpha), v), m.mul(m.c(1 - alpha), gReg));
          Value hNew = m.add(m.mul(m.c(beta), h),
                             m.mul(m.c(1 - beta), m.mul(gReg, gReg)));
          Value scale = m.add(m.sqrt(hNew), m.c(epsilon));
          Value xNew = m.sub(x, m.mul(r, m.div(vNew, scale)));
          Value xFinal = m.mul(m.c(1 - normPost), xNew);
          return SmallVector<Value>{xFinal, vNew, hNew};
        });
  };
}

//===----------------------------------------------------------------------===//
// Batch normalization, training mode
//===----------------------------------------------------------------------===//

/// Per channel (axis 1): the batch mean and population variance over every
/// other axis normalize the input, and the running statistics move towards
/// them: running = input_running * momentum + batch * (1 - momentum).
static Lowering lowerBatchNormTraining(graph::BatchNormOp op) {
  if (!allStaticTensors(op) || op.getTrainingMode() == 0)
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  Type element = input.getElementType();
  if (input.getRank() < 2 || !isF32OrF64(element) ||
      op.getOutput().getType() != input || input.getNumElements() == 0)
    return nullptr;
  int64_t channels = input.getDimSize(1);
  auto channelType = RankedTensorType::get({channels}, element);
  for (Value param :
       {op.getScale(), op.getBias(), op.getInputMean(), op.getInputVar(),
        op.getRunningMean(), op.getRunningVar()})
    if (param.getType() != channelType)
      return nullptr;
  double epsilon = op.getEpsilon().convertToDouble();
  double momentum = op.getMomentum().convertToDouble();
  double count = static_cast<double>(input.getNumElements() / channels);
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType>) {
    Value x = operands[0], scale = operands[1], bias = operands[2],
          inputMean = operands[3], inputVar = operands[4];
    int64_t rank = input.getRank();
    MLIRContext *context = b.getContext();
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    AffineMap channel =
        AffineMap::get(rank, 0, getAffineDimExpr(1, context), context);
    SmallVector<utils::IteratorType> reduce(rank,
                                            utils::IteratorType::reduction);
    reduce[1] = utils::IteratorType::parallel;
    Value zeros =
        linalg::FillOp::create(
            b, loc, scalarConstant(b, loc, element, 0),
            ValueRange{tensor::EmptyOp::create(b, loc, {channels}, element)})
            .getResult(0);

    // Sum over all axes but 1, then the mean.
    Value sums =
        linalg::GenericOp::create(
            b, loc, TypeRange{channelType}, ValueRange{x}, ValueRange{zeros},
            SmallVector<AffineMap>{identity, channel}, reduce,
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              linalg::YieldOp::create(
                  nb, nl,
                  arith::AddFOp::create(nb, nl, args[1], args[0]).getResult());
            })
            .getResult(0);
    Value mean =
        mapMany(b, loc, ValueRange{sums}, {channels}, element, 1,
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  FloatMath m{nb, nl, element};
                  return SmallVector<Value>{m.mul(args[0], m.c(1.0 / count))};
                })[0];
    // Squared deviations from the mean (two passes: no cancellation).
    Value squares =
        linalg::GenericOp::create(
            b, loc, TypeRange{channelType}, ValueRange{x, mean},
            ValueRange{zeros},
            SmallVector<AffineMap>{identity, channel, channel}, reduce,
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              FloatMath m{nb, nl, element};
              Value d = m.sub(args[0], args[1]);
              linalg::YieldOp::create(nb, nl, m.add(args[2], m.mul(d, d)));
            })
            .getResult(0);
    SmallVector<Value> stats = mapMany(
        b, loc, ValueRange{squares, mean, inputMean, inputVar}, {channels},
        element, 3, [&](OpBuilder &nb, Location nl, ValueRange args) {
          FloatMath m{nb, nl, element};
          Value var = m.mul(args[0], m.c(1.0 / count));
          Value runningMean = m.add(m.mul(args[2], m.c(momentum)),
                                    m.mul(args[1], m.c(1 - momentum)));
          Value runningVar = m.add(m.mul(args[3], m.c(momentum)),
                                   m.mul(var, m.c(1 - momentum)));
          return SmallVector<Value>{var, runningMean, runningVar};
        });
    Value var = stats[0];

    SmallVector<utils::IteratorType> parallel(rank,
                                              utils::IteratorType::parallel);
    Value y =
        linalg::GenericOp::create(
            b, loc, TypeRange{input}, ValueRange{x, mean, var, scale, bias},
            ValueRange{
                tensor::EmptyOp::create(b, loc, input.getShape(), element)},
            SmallVector<AffineMap>{identity, channel, channel, channel, channel,
                                   identity},
            parallel,
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              FloatMath m{nb, nl, element};
              Value normalized = m.div(m.sub(args[0], args[1]),
                                       m.sqrt(m.add(args[2], m.c(epsilon))));
              linalg::YieldOp::create(
                  nb, nl, m.add(m.mul(normalized, args[3]), args[4]));
            })
            .getResult(0);
    return SmallVector<Value>{y, stats[1], stats[2]};
  };
}

//===----------------------------------------------------------------------===//
// cum_sum with a run-time axis
//===----------------------------------------------------------------------===//

/// The cumulative sum of `input` along a known `axis`: one generic with an
/// extra reduction dimension j over the axis that adds in[.., j, ..] into
/// out[.., i, ..] when j precedes i in the summation order (inclusive or
/// exclusive, forwards or reversed).
static Value cumulativeSum(OpBuilder &b, Location loc, Value input,
                           int64_t axis, bool exclusive, bool reverse) {
  auto type = cast<RankedTensorType>(input.getType());
  Type element = type.getElementType();
  int64_t rank = type.getRank();
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> read, write;
  for (int64_t d = 0; d < rank; ++d) {
    read.push_back(getAffineDimExpr(d == axis ? rank : d, context));
    write.push_back(getAffineDimExpr(d, context));
  }
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value zeros =
      linalg::FillOp::create(
          b, loc, scalarConstant(b, loc, element, 0),
          ValueRange{tensor::EmptyOp::create(b, loc, type.getShape(), element)})
          .getResult(0);
  arith::CmpIPredicate takes =
      reverse
          ? (exclusive ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::uge)
          : (exclusive ? arith::CmpIPredicate::ult : arith::CmpIPredicate::ule);
  bool isFloat = isa<FloatType>(element);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{input}, ValueRange{zeros},
             SmallVector<AffineMap>{
                 AffineMap::get(rank + 1, 0, read, context),
                 AffineMap::get(rank + 1, 0, write, context)},
             iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value i = linalg::IndexOp::create(nb, nl, axis);
               Value j = linalg::IndexOp::create(nb, nl, rank);
               Value take = arith::CmpIOp::create(nb, nl, takes, j, i);
               Value sum = isFloat
                               ? arith::AddFOp::create(nb, nl, args[1], args[0])
                                     .getResult()
                               : arith::AddIOp::create(nb, nl, args[1], args[0])
                                     .getResult();
               linalg::YieldOp::create(
                   nb, nl,
                   arith::SelectOp::create(nb, nl, take, sum, args[1])
                       .getResult());
             })
      .getResult(0);
}

static Lowering lowerDynamicCumSum(graph::CumSumOp op) {
  // Constant axes are the Reduction family's.
  if (!op.getDynamicAxis() || canLowerReduction(op))
    return nullptr;
  auto type = staticTensorType(op.getInput());
  if (!type || type.getRank() == 0 || op.getOutput().getType() != type ||
      !staticTensorType(op.getDynamicAxis()) ||
      staticTensorType(op.getDynamicAxis()).getNumElements() < 1)
    return nullptr;
  Type element = type.getElementType();
  bool isInt =
      isa<IntegerType>(element) && (element.getIntOrFloatBitWidth() == 32 ||
                                    element.getIntOrFloatBitWidth() == 64);
  if (!isF32OrF64(element) && !isInt)
    return nullptr;
  bool exclusive = static_cast<int64_t>(op.getExclusive()) != 0;
  bool reverse = static_cast<int64_t>(op.getReverse()) != 0;
  int64_t rank = type.getRank();
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) {
    Value input = operands[0];
    // Out-of-range axes are invalid ONNX; wrapIndex clamps them.
    Value axis = wrapIndex(b, loc, extractFirst(b, loc, operands[1]), rank);
    SmallVector<int64_t> cases;
    for (int64_t d = 0; d + 1 < rank; ++d)
      cases.push_back(d);
    auto select = scf::IndexSwitchOp::create(b, loc, TypeRange{results[0]},
                                             axis, cases, cases.size());
    OpBuilder::InsertionGuard guard(b);
    auto fill = [&](Region &region, int64_t d) {
      Block *block = b.createBlock(&region);
      b.setInsertionPointToStart(block);
      scf::YieldOp::create(b, loc,
                           cumulativeSum(b, loc, input, d, exclusive, reverse));
    };
    for (int64_t d = 0; d + 1 < rank; ++d)
      fill(select.getCaseRegions()[d], d);
    fill(select.getDefaultRegion(), rank - 1);
    return SmallVector<Value>(select.getResults());
  };
}

//===----------------------------------------------------------------------===//
// reduce_sum with run-time axes
//===----------------------------------------------------------------------===//

/// The sets of axes (bit masks over the input's dimensions) that reduce
/// `input` to `result` when `count` axes are given, in increasing order.
static SmallVector<uint64_t> candidateAxisSets(RankedTensorType input,
                                               RankedTensorType result,
                                               int64_t count, bool keepdims) {
  SmallVector<uint64_t> sets;
  int64_t rank = input.getRank();
  if (rank > 16)
    return sets;
  for (uint64_t mask = 1; mask < (uint64_t(1) << rank); ++mask) {
    if (llvm::popcount(mask) != count)
      continue;
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d) {
      if (!(mask & (uint64_t(1) << d)))
        shape.push_back(input.getDimSize(d));
      else if (keepdims)
        shape.push_back(1);
    }
    if (ArrayRef<int64_t>(shape) == result.getShape())
      sets.push_back(mask);
  }
  return sets;
}

/// Sums `input` over the dimensions in `mask` into `result`'s shape.
static Value sumOver(OpBuilder &b, Location loc, Value input, uint64_t mask,
                     RankedTensorType result) {
  auto type = cast<RankedTensorType>(input.getType());
  Type element = type.getElementType();
  int64_t rank = type.getRank();
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> kept;
  SmallVector<int64_t> keptShape;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = mask & (uint64_t(1) << d);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (!reduced) {
      kept.push_back(getAffineDimExpr(d, context));
      keptShape.push_back(type.getDimSize(d));
    }
  }
  auto keptType = RankedTensorType::get(keptShape, element);
  Value zeros =
      linalg::FillOp::create(
          b, loc, scalarConstant(b, loc, element, 0),
          ValueRange{tensor::EmptyOp::create(b, loc, keptShape, element)})
          .getResult(0);
  bool isFloat = isa<FloatType>(element);
  Value sums =
      linalg::GenericOp::create(
          b, loc, TypeRange{keptType}, ValueRange{input}, ValueRange{zeros},
          SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, kept, context)},
          iterators,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value sum = isFloat
                            ? arith::AddFOp::create(nb, nl, args[1], args[0])
                                  .getResult()
                            : arith::AddIOp::create(nb, nl, args[1], args[0])
                                  .getResult();
            linalg::YieldOp::create(nb, nl, sum);
          })
          .getResult(0);
  return keptType == result ? sums : reshapeTo(b, loc, sums, result);
}

/// reduce_sum whose axes operand is computed at run time and whose static
/// shapes fit several axis sets (e.g. 3x2x2 -> 3x2 reduces axis 1 or 2):
/// one sum per candidate set, selected by the bit mask of the wrapped axes.
static Lowering lowerDynamicReduceSum(graph::ReduceSumOp op) {
  if (!op.getDynamicAxes() || op.getAxes() || canLowerReduction(op))
    return nullptr;
  auto input = staticTensorType(op.getInput());
  auto result = staticTensorType(op.getOutput());
  auto axesType = staticTensorType(op.getDynamicAxes());
  if (!input || !result || !axesType || axesType.getRank() != 1 ||
      result.getElementType() != input.getElementType())
    return nullptr;
  Type element = input.getElementType();
  bool isInt =
      isa<IntegerType>(element) && (element.getIntOrFloatBitWidth() == 32 ||
                                    element.getIntOrFloatBitWidth() == 64);
  if (!isF32OrF64(element) && !isInt)
    return nullptr;
  int64_t count = axesType.getDimSize(0);
  bool keepdims = static_cast<int64_t>(op.getKeepdims()) != 0;
  // No axes (reduce all, or nothing) is the Reduction family's business.
  if (count == 0)
    return nullptr;
  SmallVector<uint64_t> sets =
      candidateAxisSets(input, result, count, keepdims);
  if (sets.empty())
    return nullptr;
  int64_t rank = input.getRank();
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) {
    Value mask = indexConstant(b, loc, 0);
    Value one = indexConstant(b, loc, 1);
    for (int64_t i = 0; i < count; ++i) {
      Value axis = tensor::ExtractOp::create(
          b, loc, operands[1], ValueRange{indexConstant(b, loc, i)});
      Value bit =
          arith::ShLIOp::create(b, loc, one, wrapIndex(b, loc, axis, rank));
      mask = arith::OrIOp::create(b, loc, mask, bit);
    }
    // Axis lists that match no candidate are invalid for these shapes;
    // they take the last candidate.
    SmallVector<int64_t> cases;
    for (uint64_t set : ArrayRef<uint64_t>(sets).drop_back())
      cases.push_back(static_cast<int64_t>(set));
    auto select = scf::IndexSwitchOp::create(b, loc, TypeRange{results[0]},
                                             mask, cases, cases.size());
    OpBuilder::InsertionGuard guard(b);
    auto fill = [&](Region &region, uint64_t set) {
      Block *block = b.createBlock(&region);
      b.setInsertionPointToStart(block);
      scf::YieldOp::create(b, loc,
                           sumOver(b, loc, operands[0], set, results[0]));
    };
    for (size_t c = 0; c < cases.size(); ++c)
      fill(select.getCaseRegions()[c], sets[c]);
    fill(select.getDefaultRegion(), sets.back());
    return SmallVector<Value>(select.getResults());
  };
}

//===----------------------------------------------------------------------===//
// tfidf_vectorizer over integers
//===----------------------------------------------------------------------===//

/// The pool n-grams a tfidf_vectorizer counts (lengths within
/// [min_gram_length, max_gram_length]), with where each count goes.
struct NgramTable {
  SmallVector<SmallVector<int64_t>> items;
  SmallVector<int64_t> outputIndex;
  SmallVector<double> weight;
};

static std::optional<NgramTable> getNgramTable(graph::TfIdfVectorizerOp op) {
  std::optional<ArrayRef<int64_t>> pool = op.getPoolInt64s();
  if (!pool)
    return std::nullopt;
  ArrayRef<int64_t> starts = op.getNgramCounts();
  ArrayRef<int64_t> indexes = op.getNgramIndexes();
  std::optional<ArrayRef<float>> weights = op.getWeights();
  int64_t minLength = static_cast<int64_t>(op.getMinGramLength());
  int64_t maxLength = static_cast<int64_t>(op.getMaxGramLength());
  if (minLength < 1 || maxLength < minLength || starts.empty())
    return std::nullopt;
  NgramTable table;
  int64_t entry = 0; // position of an n-gram in ngram_indexes
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t length = static_cast<int64_t>(k) + 1;
    int64_t begin = starts[k];
    int64_t end = k + 1 < starts.size() ? starts[k + 1]
                                        : static_cast<int64_t>(pool->size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool->size()) ||
        (end - begin) % length != 0)
      return std::nullopt;
    for (int64_t at = begin; at < end; at += length, ++entry) {
      if (entry >= static_cast<int64_t>(indexes.size()) || indexes[entry] < 0)
        return std::nullopt;
      if (length < minLength || length > maxLength)
        continue;
      table.items.push_back(SmallVector<int64_t>(pool->slice(at, length)));
      table.outputIndex.push_back(indexes[entry]);
      double w = 1.0;
      if (weights) {
        if (entry >= static_cast<int64_t>(weights->size()))
          return std::nullopt;
        w = (*weights)[entry];
      }
      table.weight.push_back(w);
    }
  }
  return table;
}

/// A constant tensor of `values` with `shape` and integer or f32 `element`.
static Value constantTable(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                           Type element, ArrayRef<double> values) {
  auto type = RankedTensorType::get(shape, element);
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> elements;
    for (double v : values)
      elements.push_back(APFloat(static_cast<float>(v)));
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(type, elements));
  }
  SmallVector<APInt> elements;
  for (double v : values)
    elements.push_back(APInt(element.getIntOrFloatBitWidth(),
                             static_cast<int64_t>(v), /*isSigned=*/true,
                             /*implicitTrunc=*/true));
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, elements));
}

/// Counts, per row, each pool n-gram of length L at every start p and skip
/// s (items at p, p + (s + 1), ..., all inside the row; unigrams once, not
/// once per skip): one generic over (row, n-gram, p, s) reading constant
/// tables of the n-grams. A second generic adds each n-gram's weighted
/// count into its output column.
static Lowering lowerTfIdf(graph::TfIdfVectorizerOp op) {
  auto input = staticTensorType(op.getInput());
  auto output = staticTensorType(op.getOutput());
  if (!input || !output || !isa<IntegerType>(input.getElementType()) ||
      input.getRank() < 1 || input.getRank() > 2 ||
      output.getRank() != input.getRank() || !output.getElementType().isF32())
    return nullptr;
  StringRef mode = op.getMode();
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return nullptr;
  int64_t maxSkip = static_cast<int64_t>(op.getMaxSkipCount());
  std::optional<NgramTable> table = getNgramTable(op);
  if (maxSkip < 0 || !table)
    return nullptr;
  ArrayRef<int64_t> indexes = op.getNgramIndexes();
  int64_t columns = indexes.empty() ? 0 : *llvm::max_element(indexes) + 1;
  int64_t rows = input.getRank() == 2 ? input.getDimSize(0) : 1;
  if (output.getShape().back() != columns ||
      (input.getRank() == 2 && output.getDimSize(0) != rows))
    return nullptr;
  int64_t width = input.getShape().back();
  enum class Weighting { TF, IDF, TFIDF };
  Weighting weighting = mode == "TF"    ? Weighting::TF
                        : mode == "IDF" ? Weighting::IDF
                                        : Weighting::TFIDF;
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) {
    Type f32 = b.getF32Type();
    Type element = input.getElementType();
    auto matrixType = RankedTensorType::get({rows, columns}, f32);
    Value zeros =
        linalg::FillOp::create(b, loc, scalarConstant(b, loc, f32, 0),
                               ValueRange{tensor::EmptyOp::create(
                                   b, loc, matrixType.getShape(), f32)})
            .getResult(0);
    int64_t count = static_cast<int64_t>(table->items.size());
    if (count == 0 || rows == 0 || columns == 0)
      return SmallVector<Value>{reshapeTo(b, loc, zeros, results[0])};

    Value rowsValue = reshapeTo(b, loc, operands[0],
                                RankedTensorType::get({rows, width}, element));
    int64_t longest = 0;
    for (const SmallVector<int64_t> &items : table->items)
      longest = std::max<int64_t>(longest, items.size());
    SmallVector<double> itemValues, lengths, targets, weights;
    for (int64_t i = 0; i < count; ++i) {
      for (int64_t k = 0; k < longest; ++k)
        itemValues.push_back(k < static_cast<int64_t>(table->items[i].size())
                                 ? table->items[i][k]
                                 : 0);
      lengths.push_back(table->items[i].size());
      targets.push_back(table->outputIndex[i]);
      weights.push_back(table->weight[i]);
    }
    Value itemTable =
        constantTable(b, loc, {count, longest}, element, itemValues);
    Value lengthTable = constantTable(b, loc, {count}, b.getI64Type(), lengths);
    Value targetTable = constantTable(b, loc, {count}, b.getI64Type(), targets);
    Value weightTable = constantTable(b, loc, {count}, f32, weights);

    MLIRContext *context = b.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
    // (row, n-gram, start, skip) -> counts[row, n-gram].
    auto countType = RankedTensorType::get({rows, count}, f32);
    Value countInit =
        linalg::FillOp::create(b, loc, scalarConstant(b, loc, f32, 0),
                               ValueRange{tensor::EmptyOp::create(
                                   b, loc, countType.getShape(), f32)})
            .getResult(0);
    // An operand that is never read: its map gives the start and skip
    // dimensions their extents (width, max_skip_count + 1).
    Value domain = tensor::EmptyOp::create(b, loc, {width, maxSkip + 1}, f32);
    Value counts =
        linalg::GenericOp::create(
            b, loc, TypeRange{countType}, ValueRange{lengthTable, domain},
            ValueRange{countInit},
            SmallVector<AffineMap>{AffineMap::get(4, 0, {d(1)}, context),
                                   AffineMap::get(4, 0, {d(2), d(3)}, context),
                                   AffineMap::get(4, 0, {d(0), d(1)}, context)},
            SmallVector<utils::IteratorType>{
                utils::IteratorType::parallel, utils::IteratorType::parallel,
                utils::IteratorType::reduction, utils::IteratorType::reduction},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Type index = nb.getIndexType();
              Value row = linalg::IndexOp::create(nb, nl, 0);
              Value gram = linalg::IndexOp::create(nb, nl, 1);
              Value start = linalg::IndexOp::create(nb, nl, 2);
              Value skip = linalg::IndexOp::create(nb, nl, 3);
              Value length = arith::IndexCastOp::create(nb, nl, index, args[0]);
              Value one = indexConstant(nb, nl, 1);
              Value step = arith::AddIOp::create(nb, nl, skip, one);
              // The last item's position must be inside the row.
              Value last = arith::AddIOp::create(
                  nb, nl, start,
                  arith::MulIOp::create(
                      nb, nl, arith::SubIOp::create(nb, nl, length, one),
                      step));
              Value ok =
                  arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, last,
                                        indexConstant(nb, nl, width));
              // Unigrams do not depend on the skip: count them at skip 0.
              Value unigram = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::eq, length, one);
              Value firstSkip =
                  arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, skip,
                                        indexConstant(nb, nl, 0));
              ok = arith::AndIOp::create(
                  nb, nl, ok,
                  arith::OrIOp::create(
                      nb, nl,
                      arith::XOrIOp::create(
                          nb, nl, unigram,
                          arith::ConstantIntOp::create(nb, nl, 1, 1)),
                      firstSkip));
              for (int64_t k = 0; k < longest; ++k) {
                Value kValue = indexConstant(nb, nl, k);
                Value position = arith::AddIOp::create(
                    nb, nl, start, arith::MulIOp::create(nb, nl, kValue, step));
                Value item = tensor::ExtractOp::create(
                    nb, nl, rowsValue,
                    ValueRange{row, clampIndex(nb, nl, position, width)});
                Value expected = tensor::ExtractOp::create(
                    nb, nl, itemTable, ValueRange{gram, kValue});
                Value same = arith::CmpIOp::create(
                    nb, nl, arith::CmpIPredicate::eq, item, expected);
                Value beyond = arith::CmpIOp::create(
                    nb, nl, arith::CmpIPredicate::uge, kValue, length);
                ok = arith::AndIOp::create(
                    nb, nl, ok, arith::OrIOp::create(nb, nl, same, beyond));
              }
              Value added = arith::AddFOp::create(
                  nb, nl, args[2], scalarConstant(nb, nl, f32, 1));
              linalg::YieldOp::create(
                  nb, nl,
                  arith::SelectOp::create(nb, nl, ok, added, args[2])
                      .getResult());
            })
            .getResult(0);

    // (row, column, n-gram) -> out[row, column].
    Value out =
        linalg::GenericOp::create(
            b, loc, TypeRange{matrixType},
            ValueRange{counts, targetTable, weightTable}, ValueRange{zeros},
            SmallVector<AffineMap>{AffineMap::get(3, 0, {d(0), d(2)}, context),
                                   AffineMap::get(3, 0, {d(2)}, context),
                                   AffineMap::get(3, 0, {d(2)}, context),
                                   AffineMap::get(3, 0, {d(0), d(1)}, context)},
            SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                             utils::IteratorType::parallel,
                                             utils::IteratorType::reduction},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              FloatMath m{nb, nl, f32};
              Value column = arith::IndexCastOp::create(
                  nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, 1));
              Value mine = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::eq, column, args[1]);
              Value value = args[0];
              if (weighting == Weighting::TFIDF) {
                value = m.mul(value, args[2]);
              } else if (weighting == Weighting::IDF) {
                Value seen = arith::CmpFOp::create(
                    nb, nl, arith::CmpFPredicate::OGT, value, m.c(0));
                value = arith::SelectOp::create(nb, nl, seen, args[2], m.c(0));
              }
              Value sum = m.add(args[3], value);
              linalg::YieldOp::create(
                  nb, nl,
                  arith::SelectOp::create(nb, nl, mine, sum, args[3])
                      .getResult());
            })
            .getResult(0);
    return SmallVector<Value>{reshapeTo(b, loc, out, results[0])};
  };
}

//===----------------------------------------------------------------------===//
// Legality and patterns
//===----------------------------------------------------------------------===//

static Lowering getLowering(Operation *op) {
  if (!isa_and_present<graph::GraphDialect>(op->getDialect()))
    return nullptr;
  return llvm::TypeSwitch<Operation *, Lowering>(op)
      .Case([](graph::MomentumOp op) { return lowerMomentum(op); })
      .Case([](graph::AdagradOp op) { return lowerAdagrad(op); })
      .Case([](graph::AdamOp op) { return lowerAdam(op); })
      .Case([](graph::BatchNormOp op) { return lowerBatchNormTraining(op); })
      .Case([](graph::CumSumOp op) { return lowerDynamicCumSum(op); })
      .Case([](graph::ReduceSumOp op) { return lowerDynamicReduceSum(op); })
      .Case([](graph::TfIdfVectorizerOp op) { return lowerTfIdf(op); })
      .Default([](Operation *) { return nullptr; });
}

bool strata::detail::canLowerExtra(Operation *op) {
  return bool(getLowering(op));
}

void strata::detail::populateExtraToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  addPlannedLowering(converter, patterns, getLowering, "extra");
}
