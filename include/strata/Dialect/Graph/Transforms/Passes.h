//===- Passes.h - graph layer passes ----------------------------*- C++ -*-===//

#ifndef STRATA_DIALECT_GRAPH_TRANSFORMS_PASSES_H
#define STRATA_DIALECT_GRAPH_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "strata/Dialect/Graph/IR/GraphDialect.h"

namespace strata::graph {

#define GEN_PASS_DECL
#include "strata/Dialect/Graph/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "strata/Dialect/Graph/Transforms/Passes.h.inc"

/// Sets each function's result types to what its return now returns (a
/// rewrite that refines a returned value's type calls it before the
/// verifier sees the function).
void syncFunctionResultTypes(mlir::ModuleOp module);

/// The `graph` stage: canonicalize (folding constants), decompose to the core
/// op set, infer shapes, CSE. Registered as `strata-graph-pipeline`.
void buildGraphPipeline(mlir::OpPassManager &pm);

/// Registers the graph passes and the graph pipeline with the global
/// registry (for strata-opt).
void registerGraphPipelines();

} // namespace strata::graph

#endif // STRATA_DIALECT_GRAPH_TRANSFORMS_PASSES_H
