//===- Passes.td - graph layer passes ----------------------*- tablegen -*-===//

#ifndef STRATA_GRAPH_PASSES_TD
#define STRATA_GRAPH_PASSES_TD

include "mlir/Pass/PassBase.td"

def GraphDecomposePass : Pass<"strata-graph-decompose", "mlir::ModuleOp"> {
  let summary = "Rewrite ONNX-shaped ops into the core op set";
  let description = [{
    Expresses composite ops in terms of a smaller core set so that the
    fusion and kernel layers handle fewer ops:

    - reduce_sum_square, reduce_l1, reduce_l2, reduce_log_sum become
      reduce_sum plus elementwise ops; reduce_log_sum_exp becomes the
      max-shifted (overflow-free) form log(sum(exp(x - max))) + max.
    - leaky_relu, elu, selu, celu, hard_sigmoid, hard_swish, softplus
      (overflow-free form) and softsign become max/min and arithmetic;
      thresholded_relu, shrink and prelu become comparisons and where.
    - The erf form of GELU that exporters write,
      x * 0.5 * (1 + erf(x / sqrt(2))) in any association order, becomes
      graph.gelu, which fusion and the libraries know.

    Everything created keeps the location of the op it replaces (the fused
    locations of the matched ops for GELU). Activations decompose for
    floating-point element types only. Ops that a later layer maps to a
    library call or a dedicated kernel (matmul, conv, softmax, log_softmax,
    layer_norm) stay.
  }];
  let dependentDialects = ["::strata::graph::GraphDialect"];
}

def GraphLowerControlFlowPass
    : Pass<"strata-graph-lower-control-flow", "mlir::ModuleOp"> {
  let summary = "Rewrite If and Scan that need no run-time control flow";
  let description = [{
    - An If whose condition is known only at run time, whose branches yield
      tensors of one static type each and have no side effects, computes
      both branches and selects the results with graph.where (a constant
      condition inlines the branch it takes).
    - A Scan whose trip count is a static dimension of its scan inputs is
      unrolled (at most 16384 ops added): each copy of the body reads its
      slice of every scan input through graph.gather and the scan outputs
      are stacked with graph.unsqueeze and graph.concat, in the Scan's
      directions.
    - A Loop with a constant trip count whose condition is absent or
      constant true, and whose body passes the condition on unchanged (or
      yields a constant true), is unrolled the same way; each copy gets its
      iteration number as a constant and the scan outputs are stacked along
      a new leading axis.
    Anything else stays for the target to report.
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

def GraphPropagateShapesPass
    : Pass<"strata-graph-propagate-shapes", "mlir::ModuleOp"> {
  let summary = "Fold shape arithmetic and refine result types to a fixed point";
  let description = [{
    Runs every canonicalization pattern of the context together with a
    pattern that joins each op's result types with its shape function, in one
    greedy rewrite without an iteration cap. Shape chains of any depth
    (Shape -> Gather -> Div -> Concat -> Reshape -> Shape -> ...) fold in one
    pass once the inputs' shapes are known. Updates function signatures'
    results. Conflicts between inferred and declared types are left for
    strata-graph-infer-shapes to report.
  }];
  let dependentDialects = ["::strata::graph::GraphDialect"];
}

#endif // STRATA_GRAPH_PASSES_TD
