//===- RocmTarget.h - AMD GPUs, compile-only --------------------*- C++ -*-===//
//
// The rocm target: the generated kernels for AMD GPUs (CDNA and RDNA),
// compile-only. The gpu stage maps them as for NVIDIA GPUs, with the facts
// of an AMD GPU (no tensor-core templates, no dynamic shared memory, no
// programmatic dependent launch); strata-gpu-to-rocdl lowers the gpu ops to
// ROCDL and the math functions to polynomial approximations (ROCm's device
// libraries are not a Debian package strata can use); LLVM's AMDGPU backend
// writes an object, which ld.lld links into an HSA code object.
//
// There is no runtime for AMD GPUs here, and no AMD GPU to run one on:
// `--compile-to=object` gives the code object, and a whole compile says so.
// Library calls are refused: the target has no vendor library yet.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_TARGET_ROCM_ROCMTARGET_H
#define STRATA_LIB_TARGET_ROCM_ROCMTARGET_H

#include "strata/Target/Target.h"

namespace strata {

class RocmTarget final : public Target {
public:
  llvm::StringRef name() const override { return "rocm"; }
  llvm::StringRef summary() const override {
    return "AMD GPUs, compile-only (HSA code objects)";
  }
  std::string checkOptions(const CompileOptions &options) const override;
  TargetFacts facts(const CompileOptions &options) const override;
  Stage mappingStage() const override { return Stage::Gpu; }
  std::string compileOnlyReason() const override;
  void registerPasses() const override;
  std::vector<PassEntry>
  beforePartition(const CompileOptions &options) const override;
  std::vector<PassEntry>
  mappingPipeline(const CompileOptions &options) const override;
  std::vector<PassEntry>
  llvmPipeline(const CompileOptions &options) const override;
  std::string describeCode(
      mlir::ModuleOp module, const CompileOptions &options,
      std::vector<std::pair<std::string, std::string>> &fields) const override;
  mlir::LogicalResult generateObject(mlir::ModuleOp module,
                                     const CompileOptions &options,
                                     std::vector<uint8_t> &object,
                                     std::string &what) const override;
  mlir::LogicalResult compile(mlir::ModuleOp module,
                              const CompileOptions &options,
                              std::vector<uint8_t> &moduleBytes,
                              Stage from) const override;
};

/// The AMD GPU that --cpu names ("native": gfx942, the MI300).
std::string rocmArchitecture(const CompileOptions &options);

/// Registers strata-gpu-to-rocdl.
void registerRocmPasses();

} // namespace strata

#endif // STRATA_LIB_TARGET_ROCM_ROCMTARGET_H
