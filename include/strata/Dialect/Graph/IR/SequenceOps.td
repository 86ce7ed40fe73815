//===- SequenceOps.td - sequence graph ops -------------------------*- tablegen -*-===//

#ifndef STRATA_GRAPH_SEQUENCE_OPS_TD
#define STRATA_GRAPH_SEQUENCE_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"

#endif // STRATA_GRAPH_SEQUENCE_OPS_TD
