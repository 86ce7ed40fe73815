//===- CompilerUtils.h - helpers shared by the compile stages ---*- C++ -*-===//
#ifndef STRATA_LIB_COMPILER_COMPILERUTILS_H
#define STRATA_LIB_COMPILER_COMPILERUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "strata/Runtime/Runtime.h"

#include <optional>
#include <string>

namespace strata {

/// The runtime's element type for an MLIR element type, if it has one.
std::optional<rt::DType> toRuntimeType(mlir::Type type);

/// The function strata runs: the public func.func (the importer makes one).
mlir::func::FuncOp getEntryFunction(mlir::ModuleOp module);

/// The ONNX name of the entry function's argument or result `index`
/// (`graph.name`), or "input<N>"/"output<N>" when it has none.
std::string getArgumentName(mlir::func::FuncOp func, unsigned index);
std::string getResultName(mlir::func::FuncOp func, unsigned index);

/// The ONNX node an op came from (its NameLoc), or "" when unknown.
std::string getNodeName(mlir::Operation *op);

} // namespace strata

#endif // STRATA_LIB_COMPILER_COMPILERUTILS_H
