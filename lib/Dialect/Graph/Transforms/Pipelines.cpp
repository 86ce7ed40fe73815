//===- Pipelines.cpp - the graph stage's pass pipeline ----------*- C++ -*-===//

#include "strata/Dialect/Graph/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void strata::graph::buildGraphPipeline(OpPassManager &pm) {
  pm.addPass(createGraphPropagateShapesPass());
  pm.addPass(createGraphLowerControlFlowPass());
  pm.addPass(createGraphDecomposePass());
  pm.addPass(createGraphPropagateShapesPass());
  pm.addPass(createGraphInferShapesPass());
  pm.addPass(createCSEPass());
}

void strata::graph::registerGraphPipelines() {
  registerGraphPasses();
  PassPipelineRegistration<>(
      "strata-graph-pipeline",
      "The graph stage: fold and propagate shapes, lower If and Scan, "
      "decompose to core ops, "
      "propagate again, check shapes, CSE",
      [](OpPassManager &pm) { buildGraphPipeline(pm); });
}
