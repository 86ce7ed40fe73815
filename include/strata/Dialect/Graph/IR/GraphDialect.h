//===- GraphDialect.h - strata graph dialect --------------------*- C++ -*-===//
//
// The graph layer's dialect. See GraphBase.td for what it models.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_DIALECT_GRAPH_IR_GRAPHDIALECT_H
#define STRATA_DIALECT_GRAPH_IR_GRAPHDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "strata/Dialect/Graph/IR/GraphDialect.h.inc"

#endif // STRATA_DIALECT_GRAPH_IR_GRAPHDIALECT_H
