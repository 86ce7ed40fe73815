//===- Passes.td - the rocm target's own passes ------------*- tablegen -*-===//
//
// The passes that turn the mapped GPU kernels into AMDGPU kernels; the rocm
// target's llvm stage runs them (RocmTarget.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_TARGET_ROCM_PASSES_TD
#define STRATA_TARGET_ROCM_PASSES_TD

include "mlir/Pass/PassBase.td"

def GpuToRocdlPass : Pass<"strata-gpu-to-rocdl", "mlir::ModuleOp"> {
  let summary = "Lower math functions to arithmetic and gpu dialect ops to "
                "ROCDL";
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::ROCDL::ROCDLDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"chipset", "chipset", "std::string", /*default=*/"\"gfx942\"",
           "the AMD GPU (gfx942, gfx1100)">
  ];
}

def RocdlKernelsPass : Pass<"strata-rocdl-kernels", "mlir::ModuleOp"> {
  let summary = "Make the mapped kernel bodies (strata.max_threads) AMDGPU "
                "kernels with that many threads at most";
  let dependentDialects = ["::mlir::ROCDL::ROCDLDialect"];
}

#endif // STRATA_TARGET_ROCM_PASSES_TD
