//===- Passes.td - graph layer passes ----------------------*- tablegen -*-===//

#ifndef STRATA_GRAPH_PASSES_TD
#define STRATA_GRAPH_PASSES_TD

include "mlir/Pass/PassBase.td"

def GraphDecomposePass : Pass<"strata-graph-decompose", "mlir::ModuleOp"> {
  let summary = "Rewrite ONNX-shaped ops into the core op set";
  let description = [{
    Expresses composite ops (variadic-free forms of losses, the reductions
    that are a reduce_sum plus elementwise ops, activation functions with
    parameters, ...) in terms of a smaller core set so that the fusion and
    kernel layers handle fewer ops. Ops that a later layer maps to a library
    call or a dedicated kernel (matmul, conv, softmax, layer_norm) stay.
  }];
  let dependentDialects = ["::strata::graph::GraphDialect"];
}

def GraphInferShapesPass : Pass<"strata-graph-infer-shapes", "mlir::ModuleOp"> {
  let summary = "Refine result types with the ops' shape functions";
  let description = [{
    Walks every function in order, joining each result type with what the
    op's InferShapesOpInterface computes from its operands, and updates
    function signatures' results. Fails with a diagnostic when an inferred
    type conflicts with a declared one.
  }];
  let dependentDialects = ["::strata::graph::GraphDialect"];
}

#endif // STRATA_GRAPH_PASSES_TD
