//===- CpuTarget.h - x86-64 ------------------------------------*- C++ -*-===//
//
// The cpu target: the kernels bufferized to loops (the cpu stage), lowered
// to the LLVM dialect with the CPU's libm for math functions, compiled by
// LLVM's x86-64 backend into one shared object; oneDNN takes matrix
// products and convolutions (docs/compiler.md).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_TARGET_CPU_CPUTARGET_H
#define STRATA_LIB_TARGET_CPU_CPUTARGET_H

#include "strata/Target/Target.h"

namespace strata {

class CpuTarget final : public Target {
public:
  llvm::StringRef name() const override { return "cpu"; }
  llvm::StringRef summary() const override {
    return "x86-64 CPUs (a shared object; oneDNN)";
  }
  std::string checkOptions(const CompileOptions &options) const override;
  TargetFacts facts(const CompileOptions &options) const override;
  Stage mappingStage() const override { return Stage::Cpu; }
  std::vector<PassEntry>
  afterPartition(const CompileOptions &options) const override;
  std::vector<PassEntry>
  mappingPipeline(const CompileOptions &options) const override;
  std::vector<PassEntry>
  llvmPipeline(const CompileOptions &options) const override;
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

#endif // STRATA_LIB_TARGET_CPU_CPUTARGET_H
