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

/// The value of `v` when it is a constant of one element (constantScalar)
/// that cannot broadcast `like` to a larger shape: of rank 0, or of a rank
/// no greater than `like`'s.
std::optional<double> scalarConstant(Value v, Value like) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  auto likeType = cast<TensorType>(like.getType());
  if (!type || (type.getRank() > 0 &&
                (!likeType.hasRank() || likeType.getRank() < type.getRank())))
    return std::nullopt;
  return constantScalar(v);
}

/// The relative tolerance to which a constant of `v`'s float element type
/// equals a real number: half the type's relative spacing (a bf16 model's
/// sqrt(2) is 1.4140625), 1e-6 for float32 and wider.
double constantTolerance(Value v) {
  auto type = cast<FloatType>(getElementTypeOrSelf(v.getType()));
  return type.getFPMantissaWidth() < 24
             ? std::ldexp(1.0, -static_cast<int>(type.getFPMantissaWidth()))
             : 1e-6;
}

/// True when `v` is a float scalar constant (scalarConstant) equal to
/// `expected` to the precision of its type.
bool isScalarConstant(Value v, double expected, Value like) {
  if (!isa<FloatType>(getElementTypeOrSelf(v.getType())))
    return false;
  std::optional<double> value = scalarConstant(v, like);
  return value && std::fabs(*value - expected) <=
                      constantTolerance(v) * std::fabs(expected);
}

/// A polynomial of degree at most 3 in one value: the coefficients of x^0,
/// x^1, x^2 and x^3.
using Cubic = std::array<double, 4>;

/// `v` as a polynomial of degree at most 3 in `x`, when `v` is computed from
/// `x` and scalar constants by add, sub, mul, neg, division by a constant
/// and pow with a constant exponent of 1, 2 or 3, in any association and
/// operand order: GELU's tanh argument is sqrt(2/pi) * (x + 0.044715 *
/// pow(x, 3)) in HF's NewGELU, sqrt(2/pi) * x * (1 + 0.044715 * x * x) in
/// its FastGELU and BLOOM, with the cube as x * x * x elsewhere. Records
/// the ops it read in `ops`. Every step keeps x's shape (a constant that
/// would broadcast is not a scalar), so the polynomial is elementwise.
std::optional<Cubic> asCubic(Value v, Value x,
                             SmallVectorImpl<Operation *> &ops,
                             unsigned depth = 0) {
  if (v == x)
    return Cubic{0, 1, 0, 0};
  if (std::optional<double> c =
          isa<FloatType>(getElementTypeOrSelf(v.getType()))
              ? scalarConstant(v, x)
              : std::nullopt)
    return Cubic{*c, 0, 0, 0};
  Operation *op = v.getDefiningOp();
  // Deep enough for every form above; bounds the recursion on long chains.
  if (!op || depth > 8)
    return std::nullopt;
  auto operand = [&](Value w) { return asCubic(w, x, ops, depth + 1); };
  auto product = [](const Cubic &a, const Cubic &b) -> std::optional<Cubic> {
    Cubic r = {0, 0, 0, 0};
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        if (a[i] == 0 || b[j] == 0)
          continue;
        if (i + j > 3)
          return std::nullopt;
        r[i + j] += a[i] * b[j];
      }
    return r;
  };
  // a + s * b, and f * a.
  auto sum = [](const Cubic &a, const Cubic &b, double s) {
    return Cubic{a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2],
                 a[3] + s * b[3]};
  };
  auto scaled = [](const Cubic &a, double f) {
    return Cubic{f * a[0], f * a[1], f * a[2], f * a[3]};
  };
  std::optional<Cubic> result;
  if (isa<AddOp, SubOp, MulOp>(op)) {
    std::optional<Cubic> a = operand(op->getOperand(0)),
                         b = operand(op->getOperand(1));
    if (a && b)
      result = isa<AddOp>(op)   ? sum(*a, *b, 1)
               : isa<SubOp>(op) ? sum(*a, *b, -1)
                                : product(*a, *b);
  } else if (auto neg = dyn_cast<NegOp>(op)) {
    if (std::optional<Cubic> a = operand(neg.getInput()))
      result = scaled(*a, -1);
  } else if (auto div = dyn_cast<DivOp>(op)) {
    std::optional<double> c = scalarConstant(div.getRhs(), x);
    std::optional<Cubic> a = operand(div.getLhs());
    if (a && c && *c != 0 &&
        isa<FloatType>(getElementTypeOrSelf(div.getType())))
      result = scaled(*a, 1 / *c);
  } else if (auto pow = dyn_cast<PowOp>(op)) {
    std::optional<double> e = scalarConstant(pow.getRhs(), x);
    std::optional<Cubic> a = operand(pow.getLhs());
    if (a && e && (*e == 1 || *e == 2 || *e == 3)) {
      result = *a;
      for (int i = 1; result && i < static_cast<int>(*e); ++i)
        result = product(*result, *a);
    }
  }
  if (result)
    ops.push_back(op);
  return result;
}

/// Whether `p` is k * x + k * cube * x^3 (cube 0 for the erf argument),
/// each coefficient to the precision of x's element type: a product of two
/// rounded constants is off by up to twice the tolerance of one.
bool isGeluArgument(const Cubic &p, double k, double cube, Value x) {
  double tolerance = 2 * constantTolerance(x);
  auto near = [&](double value, double expected) {
    return std::fabs(value - expected) <= tolerance * std::fabs(k);
  };
  return near(p[0], 0) && near(p[1], k) && near(p[2], 0) &&
         near(p[3], k * cube);
}

/// Matches 1 + f(arg) (either order), f the unary op `Op`, and returns its
/// argument, recording the add and f in `ops`.
template <typename Op>
Value onePlus(Value v, Value like, SmallVectorImpl<Operation *> &ops) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add)
    return {};
  for (auto [term, one] : {std::pair(add.getLhs(), add.getRhs()),
                           std::pair(add.getRhs(), add.getLhs())}) {
    auto f = term.getDefiningOp<Op>();
    if (!f || !isScalarConstant(one, 1.0, like))
      continue;
    ops.append({add, f});
    return f.getInput();
  }
  return {};
}

/// Whether `v` is 1 + erf(x / sqrt(2)) (approximate "none") or 1 +
/// tanh(sqrt(2/pi) * (x + 0.044715 * x^3)) ("tanh"), the arguments written
/// any way asCubic reads; records the matched ops in `ops`.
std::optional<StringRef> matchGeluTerm(Value v, Value x,
                                       SmallVectorImpl<Operation *> &ops) {
  SmallVector<Operation *> matched;
  StringRef approximate = "none";
  Value arg = onePlus<ErfOp>(v, x, matched);
  double k = M_SQRT1_2, cube = 0;
  if (!arg) {
    arg = onePlus<TanhOp>(v, x, matched);
    approximate = "tanh";
    k = std::sqrt(2.0 / M_PI);
    cube = 0.044715;
  }
  if (!arg)
    return std::nullopt;
  std::optional<Cubic> p = asCubic(arg, x, matched);
  if (!p || !isGeluArgument(*p, k, cube, x))
    return std::nullopt;
  ops.append(matched.begin(), matched.end());
  return approximate;
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
      // Each factor in turn as the 1 + erf or 1 + tanh term, each of the
      // other two as x and the last as 0.5.
      for (int i = 0; i < 3; ++i) {
        for (int j : {(i + 1) % 3, (i + 2) % 3}) {
          Value x = factors[j], half = factors[3 - i - j];
          if (!isScalarConstant(half, 0.5, x))
            continue;
          SmallVector<Operation *> ops = {root, inner};
          std::optional<StringRef> approximate =
              matchGeluTerm(factors[i], x, ops);
          // graph.gelu is a unary elementwise op: its operand and result
          // must agree in element type, shape and rankedness.
          auto xType = cast<TensorType>(x.getType());
          auto rootType = cast<TensorType>(root.getType());
          if (!approximate || xType.hasRank() != rootType.hasRank() ||
              xType.getElementType() != rootType.getElementType() ||
              failed(verifyCompatibleShape(xType, rootType)))
            continue;
          // The GELU keeps the locations of every node it replaces, in
          // program order (the argument's first, the root last).
          SmallVector<Operation *> inOrder(ops.begin(), ops.end());
          llvm::sort(inOrder, [](Operation *a, Operation *b) {
            if (a->getBlock() != b->getBlock())
              return a->getBlock() < b->getBlock();
            return a != b && a->isBeforeInBlock(b);
          });
          inOrder.erase(llvm::unique(inOrder), inOrder.end());
          SmallVector<Location> locs;
          for (Operation *op : inOrder)
            locs.push_back(op->getLoc());
          auto gelu = GeluOp::create(rewriter, rewriter.getFusedLoc(locs),
                                     root.getType(), x,
                                     rewriter.getStringAttr(*approximate));
          rewriter.replaceOp(root, gelu);
          return success();
        }
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
