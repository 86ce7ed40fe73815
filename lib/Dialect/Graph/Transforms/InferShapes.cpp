//===- InferShapes.cpp - refine result types from shape functions -*- C++
//-*-===//

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "strata-graph-infer-shapes"

namespace strata::graph {
#define GEN_PASS_DEF_GRAPHINFERSHAPESPASS
#include "strata/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace strata::graph

using namespace mlir;
using namespace strata::graph;

namespace {

struct GraphInferShapesPass
    : strata::graph::impl::GraphInferShapesPassBase<GraphInferShapesPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](func::FuncOp func) {
      func.walk([&](InferShapesOpInterface op) {
        SmallVector<Type> inferred;
        if (failed(op.inferResultTypes(inferred)))
          return;
        for (auto [result, type] : llvm::zip(op->getResults(), inferred)) {
          Type joined = joinTypes(result.getType(), type);
          if (!joined) {
            op->emitError("inferred type ")
                << type << " conflicts with the declared type "
                << result.getType();
            failedAny = true;
            continue;
          }
          result.setType(joined);
        }
      });
      // Keep the signature in step with what the body now returns.
      func.walk([&](func::ReturnOp ret) {
        auto type = func.getFunctionType();
        if (type.getNumResults() != ret.getNumOperands())
          return;
        func.setType(FunctionType::get(func.getContext(), type.getInputs(),
                                       ret.getOperandTypes()));
      });
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
