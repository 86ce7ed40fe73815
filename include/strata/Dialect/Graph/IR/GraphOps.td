//===- GraphOps.td - strata graph dialect ops --------------*- tablegen -*-===//
//
// The op families live in their own files; this one only gathers them so a
// single TableGen run produces the dialect.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_GRAPH_OPS_TD
#define STRATA_GRAPH_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"
include "strata/Dialect/Graph/IR/ElementwiseOps.td"
include "strata/Dialect/Graph/IR/ReductionOps.td"
include "strata/Dialect/Graph/IR/TensorOps.td"
include "strata/Dialect/Graph/IR/NNOps.td"
include "strata/Dialect/Graph/IR/ControlFlowOps.td"
include "strata/Dialect/Graph/IR/SequenceOps.td"
include "strata/Dialect/Graph/IR/StringOps.td"
include "strata/Dialect/Graph/IR/TrainingOps.td"

#endif // STRATA_GRAPH_OPS_TD
