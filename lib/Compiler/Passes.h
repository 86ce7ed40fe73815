//===- Passes.h - the compile stages' own passes ----------------*- C++ -*-===//
#ifndef STRATA_LIB_COMPILER_PASSES_H
#define STRATA_LIB_COMPILER_PASSES_H

#include "Gpu.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Types.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata {

/// Input shapes as the strata-bind-input-shapes option: "x:3x8;y:".
std::string
encodeInputShapes(const std::map<std::string, std::vector<int64_t>> &shapes);
mlir::LogicalResult
decodeInputShapes(llvm::StringRef text,
                  std::map<std::string, std::vector<int64_t>> &shapes,
                  std::string &error);

/// Input values as the strata-specialize-input-values option:
/// "n:4;limits:0.5,2".
std::string
encodeInputValues(const std::map<std::string, std::vector<double>> &values);
mlir::LogicalResult
decodeInputValues(llvm::StringRef text,
                  std::map<std::string, std::vector<double>> &values,
                  std::string &error);

// The passes' declarations (Passes.td): create<Name>(), their options and
// register<Name>().
#define GEN_PASS_DECL
#include "Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "Passes.h.inc"

/// Registers every pass of Passes.td but the GPU ones (registerGpuPasses,
/// Gpu.h), once per process.
void registerCompilerPasses();

/// Cuts the body of a kernel whose row split is over its channels-last rows
/// (strata.channels_last_rows) to one block of `block` rows, and returns the
/// bytes from one block to the next, per argument then per result (0 for
/// what every block reads whole) (Layouts.cpp).
llvm::SmallVector<int64_t> applyChannelsLastRows(mlir::func::FuncOp kernel,
                                                 int64_t block);
/// Whether the runtime's library kernel `library` ("dnnl.matmul",
/// "cublaslt.matmul", ...) reads and writes tensors of `elementType`
/// (Precision.cpp: which steps strata-lower-precision may retype).
bool libraryTakes(llvm::StringRef library, mlir::Type elementType);

} // namespace strata

#endif // STRATA_LIB_COMPILER_PASSES_H
