//===- InitAll.h - register strata's dialects and passes --------*- C++ -*-===//
//
// The one place tools register what strata provides, so strata-opt and the
// strata driver always agree. The definitions live in lib/InitAll.cpp so the
// heavy dialect headers are compiled once.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_INITALL_H
#define STRATA_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace strata {

/// strata's dialects and the upstream ones its pipelines produce.
void registerAllDialects(mlir::DialectRegistry &registry);

/// strata's passes and pipelines, and the upstream passes they use.
void registerAllPasses();

} // namespace strata

#endif // STRATA_INITALL_H
