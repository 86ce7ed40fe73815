//===- Compiler.h - ONNX graph to a runnable strata module ------*- C++ -*-===//
//
// The compile path after import: specialize the graph to static shapes,
// partition it into kernels (the graph layer's decisions, kept as attributes
// on outlined functions), lower the generated kernels through linalg and LLVM
// to machine code, plan the arena, and write the module file the runtime
// loads. The stages and their IR are described in docs/compiler.md.
//
// Errors are reported through the MLIRContext's diagnostic engine, located at
// the ONNX node concerned; the functions then return failure.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_COMPILER_H
#define STRATA_COMPILER_COMPILER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "strata/Runtime/Runtime.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace strata {

struct CompileOptions {
  /// "cpu" (the only target so far).
  std::string target = "cpu";
  /// The x86-64 CPU to generate code for: "native" (the host), "avx2"
  /// (x86-64-v3), "avx512" (x86-64-v4), or any LLVM CPU name.
  std::string cpu = "native";
  /// Shapes for inputs with dynamic dimensions, by input name. Every
  /// dynamic dimension must be bound before code generation.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Hand matmul and convolution to oneDNN where the partitioner chooses to.
  bool useLibraries = true;
  /// Report each stage's progress on stderr.
  bool verbose = false;
  /// When set, each stage writes its IR into this directory
  /// (NN-<stage>.mlir, and the optimized LLVM IR as .ll).
  std::string dumpDir;
};

/// The runtime's element type for an MLIR element type, if it has one.
std::optional<rt::DType> toRuntimeType(mlir::Type type);

/// The ONNX name of an entry function's argument `index` (`graph.name`), or
/// "input<N>" when it has none.
std::string getArgumentName(mlir::func::FuncOp func, unsigned index);

/// Registers every dialect, interface and translation the compile path uses.
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// Binds the entry function's dynamic input dimensions to
/// `options.inputShapes` and re-runs the graph stage so that every value has
/// a static type. Fails (naming the input or the node) when a dimension is
/// unbound, a bound shape contradicts the model, or an op's result shape
/// stays unknown (a shape that depends on tensor values).
mlir::LogicalResult specializeShapes(mlir::ModuleOp module,
                                     const CompileOptions &options);

/// The graph layer's decisions: groups the entry function's ops into kernels
/// and outlines each into a private function marked `strata.kernel` (with
/// `strata.kind` = "codegen" or "library" and, for library kernels,
/// `strata.library` = the runtime kernel's name); the entry function then
/// holds graph.constant ops, reshape-like ops (which become buffer views)
/// and calls. Fails, naming every unsupported node, when an op can be neither
/// generated nor handed to a library.
mlir::LogicalResult partitionIntoKernels(mlir::ModuleOp module,
                                         const CompileOptions &options);

/// Lowers the codegen kernels of a partitioned module to an x86-64 shared
/// object (its bytes in `sharedObject`).
mlir::LogicalResult generateKernelCode(mlir::ModuleOp module,
                                       const CompileOptions &options,
                                       std::vector<uint8_t> &sharedObject);

/// Plans memory and writes the module file's bytes for a partitioned module
/// whose kernels' code is `sharedObject`.
mlir::LogicalResult writeModule(mlir::ModuleOp module,
                                const CompileOptions &options,
                                const std::vector<uint8_t> &sharedObject,
                                std::vector<uint8_t> &moduleBytes);

/// Writes `op` to <dumpDir>/<NN>-<stage>.mlir when options.dumpDir is set
/// (NN counts the dumps of one compilation).
void dumpStage(const CompileOptions &options, llvm::StringRef stage,
               mlir::Operation *op);

/// All of the above on an imported module (the graph stage included).
mlir::LogicalResult compileModule(mlir::ModuleOp module,
                                  const CompileOptions &options,
                                  std::vector<uint8_t> &moduleBytes);

} // namespace strata

#endif // STRATA_COMPILER_COMPILER_H
