//===- Decompose.cpp - rewrite composite ops into core ops ------*- C++ -*-===//
//
// Each pattern expresses one composite op with core ops, keeping the
// original op's location (its ONNX node name) on everything it creates:
//
//   reduce_sum_square, reduce_l1, reduce_l2, reduce_log_sum,
//   reduce_log_sum_exp      -> reduce_sum / reduce_max plus elementwise ops
//   leaky_relu, elu, selu, celu, hard_sigmoid, hard_swish, softplus,
//   softsign                -> max/min and arithmetic (no masks)
//   thresholded_relu, shrink, prelu -> comparisons and where
//
// It also recognises the erf form of GELU that exporters write,
// x * 0.5 * (1 + erf(x / sqrt(2))) in any association order, and forms
// graph.gelu, which fusion and the libraries know. Softmax, log_softmax,
// layer_norm, matmul and conv stay: later layers map them to kernels.
//
// Intermediate values get types from the ops' own shape inference, so the
// patterns work on dynamic and unranked shapes as well.
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"
#include "strata/Dialect/Graph/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <map>

#define DEBUG_TYPE "strata-graph-decompose"

namespace strata::graph {
#define GEN_PASS_DEF_GRAPHDECOMPOSEPASS
#include "strata/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace strata::graph

using namespace mlir;
using namespace strata::graph;

namespace {

/// A scalar constant of `element` type, shaped as a rank-0 tensor.
Value scalarConstant(PatternRewriter &rewriter, Location loc, Type element,
                     double value) {
  return createSplatConstant(rewriter, loc, RankedTensorType::get({}, element),
                             value);
}

/// Builds the elementwise ops of one decomposition: every op gets the
/// location of the op being replaced and an inferred result type.
class Builder {
public:
  Builder(PatternRewriter &rewriter, Location loc, Type element)
      : rewriter(rewriter), loc(loc), element(element) {}

  /// A rank-0 constant; each value is created once per decomposition.
  Value constant(double value) {
    Value &cached = constants[value];
    if (!cached)
      cached = scalarConstant(rewriter, loc, element, value);
    return cached;
  }
  template <typename OpTy> Value unary(Value x) {
    return createInferred<OpTy>(rewriter, loc, element, x);
  }
  template <typename OpTy> Value binary(Value a, Value b) {
    return createInferred<OpTy>(rewriter, loc, element, a, b);
  }
  template <typename OpTy> Value compare(Value a, Value b) {
    return createInferred<OpTy>(rewriter, loc, rewriter.getI1Type(), a, b);
  }
  Value select(Value cond, Value a, Value b) {
    return createInferred<WhereOp>(rewriter, loc, element, cond, a, b);
  }

private:
  PatternRewriter &rewriter;
  Location loc;
  Type element;
  std::map<double, Value> constants;
};

/// The element type of `op`'s result when it is a float, else null: the
/// activation decompositions use float constants.
Type floatElement(Operation *op) {
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  return isa<FloatType>(element) ? element : Type();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// reduce_sum over the same axes (attribute or operand) and flags as `op`.
template <typename Op>
Value reduceSumLike(PatternRewriter &rewriter, Op op, Type type, Value input) {
  return ReduceSumOp::create(
      rewriter, op.getLoc(), type, input, op.getDynamicAxes(), op.getAxesAttr(),
      op.getKeepdimsAttr(), op.getNoopWithEmptyAxesAttr());
}

/// reduce_sum_square(x) = reduce_sum(x * x).
struct DecomposeReduceSumSquare : OpRewritePattern<ReduceSumSquareOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceSumSquareOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInput();
    Builder b(rewriter, op.getLoc(), getElementTypeOrSelf(x.getType()));
    Value square = b.binary<MulOp>(x, x);
    rewriter.replaceOp(op, reduceSumLike(rewriter, op, op.getType(), square));
    return success();
  }
};

/// reduce_l1(x) = reduce_sum(abs(x)).
struct DecomposeReduceL1 : OpRewritePattern<ReduceL1Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceL1Op op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInput();
    Builder b(rewriter, op.getLoc(), getElementTypeOrSelf(x.getType()));
    Value magnitude = b.unary<AbsOp>(x);
    rewriter.replaceOp(op,
                       reduceSumLike(rewriter, op, op.getType(), magnitude));
    return success();
  }
};

/// reduce_l2(x) = sqrt(reduce_sum(x * x)) (floats; an integer square root
/// has no core op).
struct DecomposeReduceL2 : OpRewritePattern<ReduceL2Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceL2Op op,
                                PatternRewriter &rewriter) const override {
    Type element = floatElement(op);
    if (!element)
      return failure();
    Builder b(rewriter, op.getLoc(), element);
    Value x = op.getInput();
    Value sum =
        reduceSumLike(rewriter, op, op.getType(), b.binary<MulOp>(x, x));
    rewriter.replaceOpWithNewOp<SqrtOp>(op, op.getType(), sum);
    return success();
  }
};

/// reduce_log_sum(x) = log(reduce_sum(x)).
struct DecomposeReduceLogSum : OpRewritePattern<ReduceLogSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceLogSumOp op,
                                PatternRewriter &rewriter) const override {
    if (!floatElement(op))
      return failure();
    Value sum = reduceSumLike(rewriter, op, op.getType(), op.getInput());
    rewriter.replaceOpWithNewOp<LogOp>(op, op.getType(), sum);
    return success();
  }
};

/// f16 and bf16: elu, selu and celu compute exp(x) - 1, which cancels near
/// 0 when every step is rounded to the narrow type (elu(-0.01) in bf16 came
/// out 18% off), and reduce_log_sum_exp adds log(sum) to the maximum, which
/// cancels when the two are close in size and opposite in sign (each rounded
/// to bf16 first: up to 1.7 bf16 ulps off, and 1% near 0). Such an op is
/// computed in f32 instead, as PyTorch does: a copy of it on the input cast
/// to f32 (decomposed in turn), its result rounded once.
bool isHalfFloat(Type type) { return type.isF16() || type.isBF16(); }

LogicalResult decomposeInF32(PatternRewriter &rewriter, Operation *op) {
  auto wide = [&](Type type) {
    return cast<TensorType>(type).clone(rewriter.getF32Type());
  };
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  Value wideX = CastOp::create(rewriter, loc, wide(x.getType()), x);
  Operation *copy = rewriter.clone(*op);
  rewriter.modifyOpInPlace(copy, [&] {
    copy->setOperand(0, wideX);
    copy->getResult(0).setType(wide(op->getResult(0).getType()));
  });
  rewriter.replaceOpWithNewOp<CastOp>(op, op->getResult(0).getType(),
                                      copy->getResult(0));
  return success();
}

/// reduce_log_sum_exp(x) = log(reduce_sum(exp(x - m))) + m with
/// m = reduce_max(x), so exp never overflows. m is computed twice, with
/// keepdims = 1 to broadcast against x and with the op's keepdims for the
/// final add, which avoids reshapes (and works for dynamic axes). Infinite
/// maxima are replaced by 0 (as PyTorch's logsumexp does): x - m would be
/// NaN for them, while the unshifted sum gives the right +-inf.
struct DecomposeReduceLogSumExp : OpRewritePattern<ReduceLogSumExpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceLogSumExpOp op,
                                PatternRewriter &rewriter) const override {
    Type element = floatElement(op);
    if (!element)
      return failure();
    if (isHalfFloat(element))
      return decomposeInF32(rewriter, op);
    Location loc = op.getLoc();
    Builder b(rewriter, loc, element);
    Value x = op.getInput();
    Value zero = b.constant(0.0);
    auto finiteMax = [&](IntegerAttr keepdims) {
      Value max = createInferred<ReduceMaxOp>(
          rewriter, loc, element, x, op.getDynamicAxes(), op.getAxesAttr(),
          keepdims, op.getNoopWithEmptyAxesAttr());
      Value isInf = createInferred<IsInfOp>(rewriter, loc, rewriter.getI1Type(),
                                            max, rewriter.getI64IntegerAttr(1),
                                            rewriter.getI64IntegerAttr(1));
      return b.select(isInf, zero, max);
    };
    Value shift = finiteMax(rewriter.getI64IntegerAttr(1));
    Value exp = b.unary<ExpOp>(b.binary<SubOp>(x, shift));
    Value sum = reduceSumLike(rewriter, op, op.getType(), exp);
    Value log = b.unary<LogOp>(sum);
    rewriter.replaceOpWithNewOp<AddOp>(op, op.getType(), log,
                                       finiteMax(op.getKeepdimsAttr()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

/// leaky_relu(x) = where(x >= 0, x, alpha * x) -- expressed as
/// max(x, 0) + alpha * min(x, 0), which needs no comparison mask.
struct DecomposeLeakyRelu : OpRewritePattern<LeakyReluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LeakyReluOp op,
                                PatternRewriter &rewriter) const override {
    Type element = floatElement(op);
    if (!element)
      return failure();
    Builder b(rewriter, op.getLoc(), element);
    Value x = op.getInput();
    Value zero = b.constant(0.0);
    Value pos = b.binary<MaxOp>(x, zero);
    Value neg = b.binary<MinOp>(x, zero);
    Value scaled =
        b.binary<MulOp>(neg, b.constant(op.getAlpha().convertToDouble()));
    rewriter.replaceOpWithNewOp<AddOp>(op, op.getType(), pos, scaled);
    return success();
  }
};

/// alpha * (exp(min(x, 0)) - 1): the negative branch of elu and selu, which
/// is 0 for x >= 0 (so no mask is needed).
Value expNegativePart(Builder &b, Value x, double alpha) {
  Value clamped = b.binary<MinOp>(x, b.constant(0.0));
  Value expm1 = b.binary<SubOp>(b.unary<ExpOp>(clamped), b.constant(1.0));
  return b.binary<MulOp>(expm1, b.constant(alpha));
}

/// elu(x) = max(x, 0) + alpha * (exp(min(x, 0)) - 1).
struct DecomposeElu : OpRewritePattern<EluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EluOp op,
                                PatternRewriter &rewriter) const override {
    Type element = floatElement(op);
    if (!element)
      return failure();
    if (isHalfFloat(element))
      return decomposeInF32(rewriter, op);
    Builder b(rewriter, op.getLoc(), element);
    Value x = op.getInput();
    Value pos = b.binary<MaxOp>(x, b.constant(0.0));
    Value neg = expNegativePart(b, x, op.getAlpha().convertToDouble());
    rewriter.replaceOpWithNewOp<AddOp>(op, op.getType(), pos, neg);
    return success();
  }
};

/// selu(x) = gamma * (max(x, 0) + alpha * (exp(min(x, 0)) - 1)).
struct DecomposeSelu : OpRewritePattern<SeluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SeluOp op,
                                PatternRewriter &rewriter) const override {
    Type element = floatElement(op);
    if (!element)
      return failure();
    if (isHalfFloat(element))
      return decomposeInF32(rewriter, op);
    Builder b(rewriter, op.getLoc(), element);
    Value x = op.getInput();
    Value pos = b.binary<MaxOp>(x, b.constant(0.0));
    Value neg = expNegativePart(b, x, op.getAlpha().convertToDouble());
    Value sum = b.binary<AddOp>(pos, neg);
    rewriter.replaceOpWithNewOp<MulOp>(
        op, op.getType(), sum, b.constant(op.getGamma().convertToDouble()));
    return success();
  }
};

/// celu(x) = max(x, 0) + min(0, alpha * (exp(x / alpha) - 1)).
struct DecomposeCelu : OpRewritePattern<CeluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CeluOp op,
                                PatternRewriter &rewriter) const override {
    Type element = floatElement(op);
    if (!element)
      return failure();
    if (isHalfFloat(element))
      return decomposeInF32(rewriter, op);
    Builder b(rewriter, op.getLoc(), element);
    Value x = op.getInput();
    double alpha = op.getAlpha().convertToDouble();
    Value zero = b.constant(0.0);
    Value pos = b.binary<MaxOp>(x, zero);
    Value scaled = b.binary<DivOp>(x, b.constant(alpha));
    Value expm1 = b.binary<SubOp>(b.unary<ExpOp>(scaled), b.constant(1.0));
    Value neg =
        b.binary<MinOp>(b.binary<MulOp>(expm1, b.constant(alpha)), zero);
    rewriter.replaceOpWithNewOp<AddOp>(op, op.getType(), pos, neg);
    return success();
  }
};

/// min(1, alpha * x + beta): hard_sigmoid before its lower clamp at 0.
Value hardSigmoidUpper(Builder &b, Value x, double alpha, double beta) {
  Value linear =
      b.binary<AddOp>(b.binary<MulOp>(x, b.constant(alpha)), b.constant(beta));
  return b.binary<MinOp>(linear, b.constant(1.0));
}

/// hard_sigmoid(x) = max(0, min(1, alpha * x + beta)).
struct DecomposeHardSigmoid : OpRewritePattern<HardSigmoidOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(HardSigmoidOp op,
                                PatternRewriter &rewriter) const override {
    Type element = floatElement(op);
    if (!element)
      return failure();
    Builder b(rewriter, op.getLoc(), element);
    Value upper =
        hardSigmoidUpper(b, op.getInput(), op.getAlpha().convertToDouble(),
                         op.getBeta().convertToDouble());
    rewriter.replaceOpWithNewOp<MaxOp>(op, op.getType(), upper,
                                       b.constant(0.0));
    return success();
  }
};

/// hard_swish(x) = x * hard_sigmoid(x) with alpha = 1/6, beta = 0.5.
struct DecomposeHardSwish : OpRewritePattern<HardSwishOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(HardSwishOp op,
                                PatternRewriter &rewriter) const override {
    Type element = floatElement(op);
    if (!element)
      return failure();
    Builder b(rewriter, op.getLoc(), element);
    Value x = op.getInput();
    Value gate = b.binary<MaxOp>(hardSigmoidUpper(b, x, 1.0 / 6.0, 0.5),
                                 b.constant(0.0));
    rewriter.replaceOpWithNewOp<MulOp>(op, op.getType(), x, gate);
    return success();
  }
};

/// thresholded_relu(x) = where(x > alpha, x, 0).
struct DecomposeThresholdedRelu : OpRewritePattern<ThresholdedReluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ThresholdedReluOp op,
                                PatternRewriter &rewriter) const override {
    Type element = floatElement(op);
    if (!element)
      return failure();
    Builder b(rewriter, op.getLoc(), element);
    Value x = op.getInput();
    Value above =
        b.compare<GreaterOp>(x, b.constant(op.getAlpha().convertToDouble()));
    rewriter.replaceOpWithNewOp<WhereOp>(op, op.getType(), above, x,
                                         b.constant(0.0));
    return success();
  }
};

/// softplus(x) = log(exp(x) + 1), evaluated as max(x, 0) + log(1 +
/// exp(-|x|)) so that exp never overflows for large x.
struct DecomposeSoftplus : OpRewritePattern<SoftplusOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftplusOp op,
                                PatternRewriter &rewriter) const override {
    Type element = floatElement(op);
    if (!element)
      return failure();
    Builder b(rewriter, op.getLoc(), element);
    Value x = op.getInput();
    Value pos = b.binary<MaxOp>(x, b.constant(0.0));
    Value decay = b.unary<ExpOp>(b.unary<NegOp>(b.unary<AbsOp>(x)));
    Value log = b.unary<LogOp>(b.binary<AddOp>(decay, b.constant(1.0)));
    rewriter.replaceOpWithNewOp<AddOp>(op, op.getType(), pos, log);
    return success();
  }
};

/// softsign(x) = x / (1 + |x|).
struct DecomposeSoftsign : OpRewritePattern<SoftsignOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftsignOp op,
                                PatternRewriter &rewriter) const override {
    Type element = floatElement(op);
    if (!element)
      return failure();
    Builder b(rewriter, op.getLoc(), element);
    Value x = op.getInput();
    Value denominator = b.binary<AddOp>(b.unary<AbsOp>(x), b.constant(1.0));
    rewriter.replaceOpWithNewOp<DivOp>(op, op.getType(), x, denominator);
    return success();
  }
};

/// shrink(x) = where(x < -lambd, x + bias, where(x > lambd, x - bias, 0)).
/// Floats only: for integer inputs the float lambd and bias would have to be
/// compared and added exactly as ONNX specifies, which integer constants
/// cannot express.
struct DecomposeShrink : OpRewritePattern<ShrinkOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ShrinkOp op,
                                PatternRewriter &rewriter) const override {
    Type element = floatElement(op);
    if (!element)
      return failure();
    Builder b(rewriter, op.getLoc(), element);
    Value x = op.getInput();
    double lambd = op.getLambd().convertToDouble();
    Value bias = b.constant(op.getBias().convertToDouble());
    Value above = b.compare<GreaterOp>(x, b.constant(lambd));
    Value inner = b.select(above, b.binary<SubOp>(x, bias), b.constant(0.0));
    Value below = b.compare<LessOp>(x, b.constant(-lambd));
    rewriter.replaceOpWithNewOp<WhereOp>(op, op.getType(), below,
                                         b.binary<AddOp>(x, bias), inner);
    return success();
  }
};

/// prelu(x, slope) = where(x < 0, x * slope, x). Works for integer inputs
/// too (ONNX allows them), since 0 is exact in every element type.
struct DecomposePRelu : OpRewritePattern<PReluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PReluOp op,
                                PatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    if (!isa<FloatType, IntegerType>(element))
      return failure();
    Builder b(rewriter, op.getLoc(), element);
    Value x = op.getLhs();
    Value negative = b.compare<LessOp>(x, b.constant(0.0));
    Value scaled = b.binary<MulOp>(x, op.getRhs());
    rewriter.replaceOpWithNewOp<WhereOp>(op, op.getType(), negative, scaled, x);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

/// True when `v` is a float constant whose elements all equal `expected`
/// (to the precision of its type: a bf16 model's sqrt(2) is 1.4140625) and
/// which cannot broadcast `like` to a larger shape: a single element of rank
/// 0, or of a rank no greater than `like`'s.
bool isScalarConstant(Value v, double expected, Value like) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()) || attr.getNumElements() != 1)
    return false;
  int64_t rank = attr.getType().getRank();
  auto likeType = cast<TensorType>(like.getType());
  if (rank > 0 && (!likeType.hasRank() || likeType.getRank() < rank))
    return false;
  double value = attr.getSplatValue<APFloat>().convertToDouble();
  // Half the type's relative spacing: the nearest value of the type.
  auto type = cast<FloatType>(attr.getElementType());
  double tolerance =
      type.getFPMantissaWidth() < 24
          ? std::ldexp(1.0, -static_cast<int>(type.getFPMantissaWidth()))
          : 1e-6;
  return std::fabs(value - expected) <= tolerance * std::fabs(expected);
}

/// The other operand of the binary op `op` when one of its operands is the
/// scalar constant `expected`.
template <typename Op> Value otherThanConstant(Op op, double expected) {
  if (!op)
    return {};
  if (isScalarConstant(op.getLhs(), expected, op.getRhs()))
    return op.getRhs();
  if (isScalarConstant(op.getRhs(), expected, op.getLhs()))
    return op.getLhs();
  return {};
}

/// Whether `v` is x * x * x, in either association.
bool isCube(Value v, Value x) {
  auto mul = v.getDefiningOp<MulOp>();
  if (!mul)
    return false;
  auto isSquare = [&](Value w) {
    auto square = w.getDefiningOp<MulOp>();
    return square && square.getLhs() == x && square.getRhs() == x;
  };
  return (mul.getLhs() == x && isSquare(mul.getRhs())) ||
         (mul.getRhs() == x && isSquare(mul.getLhs()));
}

/// Matches 1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)) -- GELU's tanh form
/// as GPT-2's code writes it, the cube as x * x * x -- and returns x,
/// recording the matched ops in `ops`.
Value matchTanhTerm(Value v, SmallVectorImpl<Operation *> &ops) {
  auto add = v.getDefiningOp<AddOp>();
  Value term = otherThanConstant(add, 1.0);
  auto tanh = term ? term.getDefiningOp<TanhOp>() : TanhOp();
  if (!tanh)
    return {};
  auto scaled = tanh.getInput().getDefiningOp<MulOp>();
  Value inner = otherThanConstant(scaled, std::sqrt(2.0 / M_PI));
  auto sum = inner ? inner.getDefiningOp<AddOp>() : AddOp();
  if (!sum)
    return {};
  for (auto [x, cubic] : {std::pair(sum.getLhs(), sum.getRhs()),
                          std::pair(sum.getRhs(), sum.getLhs())}) {
    auto times = cubic.getDefiningOp<MulOp>();
    Value cube = otherThanConstant(times, 0.044715);
    if (!cube || !isCube(cube, x))
      continue;
    Operation *outer = cube.getDefiningOp();
    Operation *square = outer->getOperand(0) == x
                            ? outer->getOperand(1).getDefiningOp()
                            : outer->getOperand(0).getDefiningOp();
    ops.append({add, tanh, scaled, sum, times, outer, square});
    return x;
  }
  return {};
}

/// Matches 1 + erf(x / sqrt(2)) -- the erf argument written as x / sqrt(2),
/// x * (1 / sqrt(2)) or (1 / sqrt(2)) * x -- and returns x, recording the
/// matched ops in `ops`.
Value matchErfTerm(Value v, SmallVectorImpl<Operation *> &ops) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add)
    return {};
  for (auto [term, one] : {std::pair(add.getLhs(), add.getRhs()),
                           std::pair(add.getRhs(), add.getLhs())}) {
    auto erf = term.getDefiningOp<ErfOp>();
    if (!erf || !isScalarConstant(one, 1.0, term))
      continue;
    Value arg = erf.getInput();
    Value x;
    if (auto div = arg.getDefiningOp<DivOp>()) {
      if (isScalarConstant(div.getRhs(), M_SQRT2, div.getLhs()))
        x = div.getLhs();
    } else {
      x = otherThanConstant(arg.getDefiningOp<MulOp>(), M_SQRT1_2);
    }
    if (!x)
      continue;
    ops.append({add, erf, arg.getDefiningOp()});
    return x;
  }
  return {};
}

/// x * 0.5 * (1 + erf(x / sqrt(2))) -> gelu(x), and x * 0.5 * (1 +
/// tanh(...)) -> gelu(x) {approximate = "tanh"}. The product of the three
/// factors is matched in every association and operand order: the root
/// multiplies one factor with the product of the other two.
struct FormGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(getElementTypeOrSelf(root.getType())))
      return failure();
    for (auto [product, single] : {std::pair(root.getLhs(), root.getRhs()),
                                   std::pair(root.getRhs(), root.getLhs())}) {
      auto inner = product.getDefiningOp<MulOp>();
      if (!inner)
        continue;
      std::array<Value, 3> factors = {inner.getLhs(), inner.getRhs(), single};
      // Try each factor as the erf term; the other two are x and 0.5.
      for (int i = 0; i < 3; ++i) {
        SmallVector<Operation *> ops = {root, inner};
        StringRef approximate = "none";
        Value x = matchErfTerm(factors[i], ops);
        if (!x) {
          x = matchTanhTerm(factors[i], ops);
          approximate = "tanh";
        }
        if (!x)
          continue;
        Value a = factors[(i + 1) % 3], b = factors[(i + 2) % 3];
        bool matched = (a == x && isScalarConstant(b, 0.5, x)) ||
                       (b == x && isScalarConstant(a, 0.5, x));
        // graph.gelu is a unary elementwise op: its operand and result must
        // agree in element type, shape and rankedness.
        auto xType = cast<TensorType>(x.getType());
        auto rootType = cast<TensorType>(root.getType());
        if (!matched || xType.hasRank() != rootType.hasRank() ||
            xType.getElementType() != rootType.getElementType() ||
            failed(verifyCompatibleShape(xType, rootType)))
          continue;
        // The GELU keeps the locations of every node it replaces, in
        // program order (the erf argument first, the root last).
        SmallVector<Location> locs;
        for (Operation *op : llvm::reverse(ops))
          locs.push_back(op->getLoc());
        auto gelu =
            GeluOp::create(rewriter, rewriter.getFusedLoc(locs), root.getType(),
                           x, rewriter.getStringAttr(approximate));
        rewriter.replaceOp(root, gelu);
        return success();
      }
    }
    return failure();
  }
};

struct GraphDecomposePass
    : strata::graph::impl::GraphDecomposePassBase<GraphDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeReduceSumSquare, DecomposeReduceL1, DecomposeReduceL2,
                 DecomposeReduceLogSum, DecomposeReduceLogSumExp,
                 DecomposeLeakyRelu, DecomposeElu, DecomposeSelu, DecomposeCelu,
                 DecomposeHardSigmoid, DecomposeHardSwish,
                 DecomposeThresholdedRelu, DecomposeSoftplus, DecomposeSoftsign,
                 DecomposeShrink, DecomposePRelu, FormGelu>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
