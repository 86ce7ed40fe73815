//===- InitAll.h - register strata's dialects and passes --------*- C++ -*-===//
//
// The one place tools register what strata provides, so strata-opt and the
// strata driver always agree.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_INITALL_H
#define STRATA_INITALL_H

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace strata {

inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, mlir::func::FuncDialect>();
}

inline void registerAllPasses() {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  graph::registerGraphPipelines();
}

} // namespace strata

#endif // STRATA_INITALL_H
