//===- Passes.h - strata conversion passes ----------------------*- C++ -*-===//
//
// Passes that lower the graph dialect into upstream MLIR dialects (the kernel
// layer's input). Declared in Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_CONVERSION_PASSES_H
#define STRATA_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace strata {

#define GEN_PASS_DECL
#include "strata/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "strata/Conversion/Passes.h.inc"

} // namespace strata

#endif // STRATA_CONVERSION_PASSES_H
