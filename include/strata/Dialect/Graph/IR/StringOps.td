//===- StringOps.td - string graph ops -------------------------*- tablegen -*-===//

#ifndef STRATA_GRAPH_STRING_OPS_TD
#define STRATA_GRAPH_STRING_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"

#endif // STRATA_GRAPH_STRING_OPS_TD
