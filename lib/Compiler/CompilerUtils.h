//===- CompilerUtils.h - helpers shared by the compile stages ---*- C++ -*-===//
#ifndef STRATA_LIB_COMPILER_COMPILERUTILS_H
#define STRATA_LIB_COMPILER_COMPILERUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "strata/Compiler/Compiler.h"

#include <optional>
#include <string>

namespace strata {

/// The function strata runs: the public func.func (the importer makes one).
mlir::func::FuncOp getEntryFunction(mlir::ModuleOp module);

/// The ONNX name of the entry function's result `index` (`graph.name`), or
/// "output<N>" when it has none (getArgumentName: Compiler.h).
std::string getResultName(mlir::func::FuncOp func, unsigned index);

/// Ops whose result is their operand's bytes under another static shape
/// (reshape, flatten, squeeze, unsqueeze, identity): the partitioner leaves
/// them outside kernels and the plan makes them buffer views.
bool isViewOp(mlir::Operation *op);

/// The ONNX node an op came from (its NameLoc), or "" when unknown.
std::string getNodeName(mlir::Operation *op);

} // namespace strata

#endif // STRATA_LIB_COMPILER_COMPILERUTILS_H
