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
#include "strata/Compiler/Options.h"
#include "strata/Runtime/Runtime.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class Diagnostic;
class DialectRegistry;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace strata {

/// The compile path's named stages, in order (strata/Compiler/Pipeline.h).
/// Cpu and Gpu are the target stage of the cpu and cuda targets: a
/// compilation runs the one of its target.
enum class Stage {
  Import,
  Graph,
  Fused,
  Kernel,
  Cpu,
  Gpu,
  Llvm,
  Object,
  Module
};

/// The runtime's element type for an MLIR element type, if it has one.
std::optional<rt::DType> toRuntimeType(mlir::Type type);

/// The ONNX name of an entry function's argument `index` (`graph.name`), or
/// "input<N>" when it has none.
std::string getArgumentName(mlir::func::FuncOp func, unsigned index);

/// A diagnostic as strata reports it, one line per diagnostic and note:
/// "<file>: error: <message> (at node 'x')", or "<file>:<line>:<col>: ..."
/// for one in an MLIR source file. The CLI prints it; the Python package
/// raises it.
std::string formatDiagnostic(const mlir::Diagnostic &diag,
                             llvm::StringRef file);

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

/// Translates the kernels of a module at the llvm stage (`module @kernels` in
/// the LLVM dialect) to LLVM IR, optimizes it for options.cpu and links an
/// x86-64 shared object (its bytes in `sharedObject`; empty when the module
/// has no generated kernels).
mlir::LogicalResult generateKernelCode(mlir::ModuleOp module,
                                       const CompileOptions &options,
                                       std::vector<uint8_t> &sharedObject);

/// Checks the target and --cpu of `options` before anything is compiled:
/// returns an empty string when LLVM can generate code for them, else a
/// one-line message saying what is wrong and what is accepted.
std::string checkTargetOptions(const CompileOptions &options);

/// The message for an x86-64 --cpu LLVM does not know (empty when it does):
/// native, avx2, avx512 or an LLVM processor name such as x86-64-v3.
std::string checkHostCpu(llvm::StringRef cpu);

/// The message for an NVPTX processor LLVM does not know (empty when it
/// does), e.g. sm_90a, sm_90, sm_80.
std::string checkGpuArchitecture(llvm::StringRef arch);

/// The GPU a cuda compilation generates code for, from CompileOptions::cpu:
/// "native" (the default) means sm_90a, the H100/H200 with Hopper's
/// wgmma; otherwise an NVPTX processor name such as "sm_90" or "sm_80".
std::string gpuArchitecture(const CompileOptions &options);

/// The architecture of the portable PTX a module carries beside its cubin
/// when the two differ: "sm_90" for "native" (PTX for sm_90a runs on sm_90
/// only, PTX for sm_90 on every later GPU); empty when the cubin's
/// architecture is also the PTX's. A module without kernels that have an
/// sm_90a form is then compiled once, for this architecture.
std::string gpuPortableArchitecture(const CompileOptions &options);

/// The architectures of the cubin and of the PTX a cuda compilation of
/// `module` (at the fused stage or later) writes: with a portable
/// architecture, a module whose kernels have sm_90a forms (wgmma) gets its
/// cubin for gpuArchitecture and its PTX for the portable one, any other
/// module both for the portable one; else both for gpuArchitecture.
struct GpuArchitectures {
  std::string cubin, ptx;
};
GpuArchitectures gpuCodeArchitectures(mlir::ModuleOp module,
                                      const CompileOptions &options);

/// The GPU code of a module (the cuda target, docs/gpu.md).
struct GpuCode {
  std::string ptx;
  /// Empty when ptxas was not found (the runtime then JIT-compiles the PTX).
  std::vector<uint8_t> cubin;
  /// The architecture of the cubin ("sm_90a").
  std::string arch;
  /// The PTX's target: `arch`, or a portable one the module's PTX was
  /// generated for separately ("sm_90" beside an sm_90a cubin).
  std::string ptxArch;
};

/// The object stage for the cuda target: translates the kernels of a module
/// at the llvm stage to LLVM IR, links libdevice when they call it,
/// optimizes for the NVPTX target, writes PTX and, unless `ptxOnly`,
/// assembles it with ptxas.
mlir::LogicalResult generateGpuCode(mlir::ModuleOp module,
                                    const CompileOptions &options,
                                    GpuCode &code, bool ptxOnly = false);

/// Plans memory and writes the module file's bytes for a module at the
/// kernel stage or later whose kernels' code is `sharedObject`.
mlir::LogicalResult writeModule(mlir::ModuleOp module,
                                const CompileOptions &options,
                                const std::vector<uint8_t> &sharedObject,
                                std::vector<uint8_t> &moduleBytes);

/// Writes `op`, a module at stage `stage`, to <dir>/<NN>-<stage>.mlir and
/// each of its kernels to <dir>/kernels/<kernel>/<NN>-<stage>.mlir, and
/// updates <dir>/index.json and index.md, when a dump directory is set
/// (options.dumpDir, else $STRATA_DUMP_DIR).
void dumpStage(const CompileOptions &options, Stage stage, mlir::Operation *op);

/// All stages after `from` on a module at stage `from` (Import: as the
/// importer wrote it), through the module file's bytes.
mlir::LogicalResult compileModule(mlir::ModuleOp module,
                                  const CompileOptions &options,
                                  std::vector<uint8_t> &moduleBytes,
                                  Stage from = Stage::Import);

} // namespace strata

#endif // STRATA_COMPILER_COMPILER_H
