//===- PropagateShapes.cpp - fold shape arithmetic to a fixed point -------===//
//
// Exported models compute shapes from shapes: `view(B, S, heads, D // heads)`
// becomes Shape -> Gather -> Div -> Cast -> Unsqueeze -> Concat -> Reshape,
// and the Reshape's result feeds the next Shape. Folding such a chain needs
// the folders (which turn Shape of a static type into a constant) and the
// shape functions (which turn a Reshape with a constant target into a static
// type) to take turns, as many times as the chain is deep. This pass runs both
// in one greedy rewrite, so they meet at a fixed point in one pass however the
// exporter nested them: every canonicalization pattern of the context, and a
// pattern that joins an op's result types with what its shape function
// computes from the current operands.
//
// Inferred types only ever refine a result type (a join never loses a static
// dimension), so the rewrite terminates. A conflict between an inferred and a
// declared type is left for strata-graph-infer-shapes to report.
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata::graph {
#define GEN_PASS_DEF_GRAPHPROPAGATESHAPESPASS
#include "strata/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace strata::graph

using namespace mlir;
using namespace strata::graph;

namespace {

/// Joins each result type of an op with its shape function's result.
struct RefineResultTypes : RewritePattern {
  RefineResultTypes(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    auto shaped = dyn_cast<InferShapesOpInterface>(op);
    if (!shaped)
      return failure();
    SmallVector<Type> inferred;
    if (failed(shaped.inferResultTypes(inferred)) ||
        inferred.size() != op->getNumResults())
      return failure();
    SmallVector<Type> refined;
    bool changed = false;
    for (auto [result, type] : llvm::zip(op->getResults(), inferred)) {
      Type joined = joinTypes(result.getType(), type);
      if (!joined)
        return failure(); // strata-graph-infer-shapes reports the conflict
      changed |= joined != result.getType();
      refined.push_back(joined);
    }
    if (!changed)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      for (auto [result, type] : llvm::zip(op->getResults(), refined))
        result.setType(type);
    });
    // The users' shape functions and folders see the new type: revisit them.
    for (Operation *user : op->getUsers())
      rewriter.modifyOpInPlace(user, [] {});
    return success();
  }
};

struct GraphPropagateShapesPass
    : strata::graph::impl::GraphPropagateShapesPassBase<
          GraphPropagateShapesPass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(set);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(set, context);
    set.add<RefineResultTypes>(context);
    patterns = std::make_shared<FrozenRewritePatternSet>(std::move(set));
    return success();
  }

  void runOnOperation() override {
    GreedyRewriteConfig config;
    // Each round of the driver may uncover one more level of a shape chain;
    // refinement is monotone, so the rewrite ends without a cap.
    config.setMaxIterations(GreedyRewriteConfig::kNoLimit);
    if (failed(applyPatternsGreedily(getOperation(), *patterns, config)))
      return signalPassFailure();
    syncFunctionResultTypes(getOperation());
  }

  std::shared_ptr<const FrozenRewritePatternSet> patterns;
};

} // namespace

void strata::graph::syncFunctionResultTypes(ModuleOp module) {
  module.walk([](func::FuncOp func) {
    func.walk([&](func::ReturnOp ret) {
      if (ret->getParentOp() != func)
        return;
      auto type = func.getFunctionType();
      if (type.getNumResults() == ret.getNumOperands())
        func.setType(FunctionType::get(func.getContext(), type.getInputs(),
                                       ret.getOperandTypes()));
    });
  });
}
