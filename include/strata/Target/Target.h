//===- Target.h - what strata compiles for ----------------------*- C++ -*-===//
//
// A target is what the stages below the graph ask about the processor a
// compile is for: which vendor library takes matrix products, whether
// kernels run on a GPU and with which instructions, which passes map and
// lower the kernels, and how the result becomes a module. The pipelines
// and the partitioner read a target's facts; none compares a target's
// name.
//
// The targets (lib/Target):
//
//   cpu    x86-64 shared objects through LLVM; oneDNN for products and
//          convolutions
//   cuda   NVIDIA GPUs: PTX and cubins through LLVM's NVPTX backend and
//          ptxas; cuBLASLt for products; strata's tensor-core kernels
//   rocm   AMD GPUs, compile-only: HSA code objects through LLVM's AMDGPU
//          backend and ld.lld, for the generated kernels
//
// Adding a target: a class deriving from Target in lib/Target/<Name>/, its
// instance in lib/Target/Target.cpp's list, and its stage pipelines. See
// docs/targets.md.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_TARGET_TARGET_H
#define STRATA_TARGET_TARGET_H

#include "strata/Compiler/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

/// What the pipelines need to know about the processor of a compile.
struct TargetFacts {
  /// The vendor library that takes matrix products (and on the CPU,
  /// convolutions) where the partitioner chooses it.
  enum class Library { None, OneDnn, CublasLt };
  Library library = Library::None;
  /// Kernels run on a GPU: each is launched over a grid of thread blocks,
  /// mapped by the gpu stage.
  bool gpu = false;
  /// Tensor-core products with mma.sync (NVIDIA sm_80 on): the
  /// flash-attention kernel.
  bool tensorCores = false;
  /// Hopper's warpgroup products (sm_90a): the GEMM kernel, and the
  /// attention kernel's wgmma form.
  bool wgmma = false;
  /// Programmatic dependent launch: a kernel may start while the one
  /// before it ends, and waits for it at its entry.
  bool gridDependency = false;
  /// The most dynamic shared memory the gpu stage gives a block (0: static
  /// shared memory only), and the most a block may opt in to (0: unknown).
  int64_t dynamicSharedLimit = 0;
  int64_t blockSharedLimit = 0;
};

class Target {
public:
  virtual ~Target();

  /// --target's value ("cpu").
  virtual llvm::StringRef name() const = 0;
  /// What it compiles for, in a few words, for messages and --help.
  virtual llvm::StringRef summary() const = 0;
  /// --cpu checked for this target: "" when valid, else the one-line error.
  virtual std::string checkOptions(const CompileOptions &options) const = 0;
  /// The facts for the processor `options` name.
  virtual TargetFacts facts(const CompileOptions &options) const = 0;
  /// The stage that maps kernels onto the processor: Stage::Cpu or
  /// Stage::Gpu.
  virtual Stage mappingStage() const = 0;

  /// Why no runtime here runs the target's code, in one line; "" when one
  /// does. A compile-only target's `compile` gives its code object.
  virtual std::string compileOnlyReason() const { return ""; }

  /// Registers the target's own passes (once; strata-opt lists them).
  virtual void registerPasses() const {}

  /// The target's own passes in the fused stage, before the partitioner
  /// and after it (and after strata-lower-precision).
  virtual std::vector<PassEntry>
  beforePartition(const CompileOptions &options) const;
  virtual std::vector<PassEntry>
  afterPartition(const CompileOptions &options) const;
  /// The mapping stage's and the llvm stage's pipelines.
  virtual std::vector<PassEntry>
  mappingPipeline(const CompileOptions &options) const = 0;
  virtual std::vector<PassEntry>
  llvmPipeline(const CompileOptions &options) const = 0;

  /// The code a compile of `module` (at the fused stage or later) would
  /// generate, in words for `strata explain`, and as key/value pairs for
  /// its JSON; "" when there is nothing to say beyond the target.
  virtual std::string
  describeCode(mlir::ModuleOp module, const CompileOptions &options,
               std::vector<std::pair<std::string, std::string>> &fields) const;

  /// The object stage: the kernels of a module at the llvm stage as the
  /// target's code (a shared object, PTX, a code object), and what it is
  /// in words ("the kernels' PTX").
  virtual mlir::LogicalResult generateObject(mlir::ModuleOp module,
                                             const CompileOptions &options,
                                             std::vector<uint8_t> &object,
                                             std::string &what) const = 0;
  /// The stages from `from` (at most the llvm stage) to the module file's
  /// bytes (a compile-only target: to its code object's).
  virtual mlir::LogicalResult compile(mlir::ModuleOp module,
                                      const CompileOptions &options,
                                      std::vector<uint8_t> &moduleBytes,
                                      Stage from) const = 0;
};

/// Every target, in the order messages list them.
llvm::ArrayRef<const Target *> allTargets();
/// The target named `name`, or null.
const Target *lookupTarget(llvm::StringRef name);
/// options.target's target, or null when there is none of that name.
const Target *lookupTarget(const CompileOptions &options);
/// "cpu, cuda, rocm".
std::string targetNameList();
/// The error for an unknown --target, one line.
std::string unknownTargetMessage(llvm::StringRef name);

} // namespace strata

#endif // STRATA_TARGET_TARGET_H
