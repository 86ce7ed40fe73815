//===- Decompose.cpp - rewrite composite ops into core ops ------*- C++ -*-===//
//
// Each pattern expresses one composite op with core ops, keeping the
// original op's location (its ONNX node name) on everything it creates.
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

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
  auto type = RankedTensorType::get({}, element);
  Attribute attr;
  if (isa<FloatType>(element))
    attr = DenseElementsAttr::get(type, rewriter.getFloatAttr(element, value));
  else
    attr = DenseElementsAttr::get(
        type, rewriter.getIntegerAttr(element, int64_t(value)));
  return ConstantOp::create(rewriter, loc, cast<ElementsAttr>(attr));
}

/// reduce_sum_square(x) = reduce_sum(x * x).
struct DecomposeReduceSumSquare : OpRewritePattern<ReduceSumSquareOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceSumSquareOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInput();
    Value square = MulOp::create(rewriter, op.getLoc(), x.getType(), x, x);
    rewriter.replaceOpWithNewOp<ReduceSumOp>(
        op, op.getType(), square, op.getAxesAttr(), op.getKeepdimsAttr(),
        op.getNoopWithEmptyAxesAttr());
    return success();
  }
};

/// leaky_relu(x) = where(x >= 0, x, alpha * x) -- expressed as
/// max(x, 0) + alpha * min(x, 0), which needs no comparison mask.
struct DecomposeLeakyRelu : OpRewritePattern<LeakyReluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LeakyReluOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getType();
    Type element = getElementTypeOrSelf(type);
    if (!isa<FloatType>(element))
      return failure();
    Value x = op.getInput();
    Value zero = scalarConstant(rewriter, loc, element, 0.0);
    Value alpha =
        scalarConstant(rewriter, loc, element, op.getAlpha().convertToDouble());
    Value pos = MaxOp::create(rewriter, loc, type, x, zero);
    Value neg = MinOp::create(rewriter, loc, type, x, zero);
    Value scaled = MulOp::create(rewriter, loc, type, neg, alpha);
    rewriter.replaceOpWithNewOp<AddOp>(op, type, pos, scaled);
    return success();
  }
};

struct GraphDecomposePass
    : strata::graph::impl::GraphDecomposePassBase<GraphDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeReduceSumSquare, DecomposeLeakyRelu>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
