//===- Passes.h - the compile stages' own passes ----------------*- C++ -*-===//
#ifndef STRATA_LIB_COMPILER_PASSES_H
#define STRATA_LIB_COMPILER_PASSES_H

#include "Gpu.h"

#include "strata/Compiler/Options.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Types.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata {

/// Input shapes as pass options give them (strata-compile-options,
/// strata-bind-input-shapes): "x:3x8;y:". They replace what `shapes` held.
mlir::LogicalResult
decodeInputShapes(llvm::StringRef text,
                  std::map<std::string, std::vector<int64_t>> &shapes,
                  std::string &error);

/// Input values as pass options give them (strata-compile-options,
/// strata-specialize-input-values): "n:4;limits:0.5,2". They replace what
/// `values` held.
mlir::LogicalResult
decodeInputValues(llvm::StringRef text,
                  std::map<std::string, std::vector<double>> &values,
                  std::string &error);

/// The compile's options as the module's #strata.compile
/// (CompileOptionsAttr.cpp); null, after `emitError`, when they are not
/// valid options.
kernel::CompileAttr
compileOptionsAttr(mlir::MLIRContext *context, const CompileOptions &options,
                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError);
/// Sets the module's #strata.compile to `options`, which the stages'
/// passes read; failure (an error on the module) when they are not valid.
mlir::LogicalResult recordCompileOptions(mlir::ModuleOp module,
                                         const CompileOptions &options);
/// The options recorded on `module`; CompileOptions' defaults where none
/// were recorded. Only the fields #strata.compile holds are set.
CompileOptions recordedCompileOptions(mlir::ModuleOp module);

/// Sets `field` to a pass option's value when the option was given: how a
/// pass option overrides the module's #strata.compile for its pass.
template <typename Option, typename T>
void overrideIfGiven(const Option &option, T &field) {
  if (option.hasValue())
    field = option;
}

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
