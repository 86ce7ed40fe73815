//===- CudaTarget.h - NVIDIA GPUs ------------------------------*- C++ -*-===//
//
// The cuda target (docs/gpu.md): the kernels mapped onto grids of thread
// blocks (the gpu stage, strata-gpu-map), lowered to NVVM, compiled by
// LLVM's NVPTX backend to PTX and by ptxas to a cubin; cuBLASLt takes
// matrix products, and strata's own kernels take attention and GEMMs with
// epilogues on tensor cores. With --cpu=native a module carries a cubin
// for sm_90a and PTX for sm_90: the same kernel stage compiled twice where
// a kernel has a wgmma form.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_TARGET_CUDA_CUDATARGET_H
#define STRATA_LIB_TARGET_CUDA_CUDATARGET_H

#include "strata/Target/Target.h"

namespace strata {

class CudaTarget final : public Target {
public:
  llvm::StringRef name() const override { return "cuda"; }
  llvm::StringRef summary() const override {
    return "NVIDIA GPUs (PTX and cubins; cuBLASLt)";
  }
  std::string checkOptions(const CompileOptions &options) const override;
  TargetFacts facts(const CompileOptions &options) const override;
  Stage mappingStage() const override { return Stage::Gpu; }
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

} // namespace strata

#endif // STRATA_LIB_TARGET_CUDA_CUDATARGET_H
