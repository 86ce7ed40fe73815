//===- Library.h - which ops go to vendor libraries -------------*- C++ -*-===//
#ifndef STRATA_LIB_COMPILER_LIBRARY_H
#define STRATA_LIB_COMPILER_LIBRARY_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"

#include <optional>
#include <string>

namespace strata {

/// A library step: the ops it replaces (the anchor first, then its fused
/// epilogue in order), its operands in the library kernel's order, and its
/// attributes. Operands are kept as the ops' OpOperands, not Values: the
/// values they read are replaced while earlier kernels are outlined.
struct LibraryMatch {
  std::string library;
  llvm::SmallVector<mlir::Operation *> ops;
  llvm::SmallVector<mlir::OpOperand *> inputs;
  mlir::NamedAttrList attrs;
  /// Why the library was chosen (kept in the IR for `strata explain`).
  std::string reason;
};

/// The library step anchored at `op`, if `op` is a matmul, gemm or
/// convolution a library handles better than generated code.
std::optional<LibraryMatch> matchLibraryKernel(mlir::Operation *op);

} // namespace strata

#endif // STRATA_LIB_COMPILER_LIBRARY_H
