//===- GpuArch.cpp - what strata knows of each NVIDIA GPU -----------------===//
//
// The facts of an NVIDIA GPU architecture ("sm_90a", "sm_80", ...) that the
// cuda target's passes decide by (Gpu.h): the shared memory a block may
// have, whether it has wgmma, mma.sync tensor cores and programmatic
// dependent launch. Architectures strata does not know get the
// conservative answers (no opt-in shared memory, no tensor cores).
//
//===----------------------------------------------------------------------===//

#include "Gpu.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
namespace kernel = strata::kernel;

namespace {
/// Shared memory a block of the GPU `arch` may opt in to (CUDA's "maximum
/// shared memory per block (opt-in)"), and what strata-gpu-map gives a
/// kernel's dynamic shared memory in general: that less room for static
/// shared memory and the driver's own. Zeros for GPUs it does not know
/// (static shared memory only).
struct SharedLimits {
  int64_t block = 0, dynamic = 0;
};
SharedLimits sharedLimits(llvm::StringRef arch) {
  // The family: sm_90a and sm_100f are sm_90 and sm_100.
  llvm::StringRef family = arch.take_while([](char c) { return c != 'a'; });
  family = family.take_while([](char c) { return c != 'f'; });
  if (family == "sm_90" || family == "sm_100" || family == "sm_103")
    return {227 * 1024, 200 * 1024};
  if (family == "sm_80" || family == "sm_87")
    return {163 * 1024, 144 * 1024};
  if (family == "sm_86" || family == "sm_89" || family == "sm_120" ||
      family == "sm_121")
    return {99 * 1024, 88 * 1024};
  return {};
}
} // namespace

int64_t strata::gpuBlockSharedLimit(llvm::StringRef arch) {
  return sharedLimits(arch).block;
}

int64_t strata::gpuDynamicSharedLimit(llvm::StringRef arch) {
  return sharedLimits(arch).dynamic;
}

bool strata::gpuHasWgmma(llvm::StringRef arch) { return arch == "sm_90a"; }

/// The NN of "sm_NN" (and of "sm_NNa"), or 0.
static unsigned smVersion(llvm::StringRef arch) {
  unsigned version = 0;
  if (!arch.consume_front("sm_") ||
      arch.take_while(llvm::isDigit).getAsInteger(10, version))
    return 0;
  return version;
}

bool strata::gpuHasGridDependency(llvm::StringRef arch) {
  return smVersion(arch) >= 90;
}

bool strata::gpuHasTensorCores(llvm::StringRef arch) {
  return smVersion(arch) >= 80;
}

bool strata::gpuHasWgmmaForms(ModuleOp module) {
  return llvm::any_of(module.getOps<func::FuncOp>(), [](func::FuncOp f) {
    return kernel::has<kernel::Template>(f);
  });
}
