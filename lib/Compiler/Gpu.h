//===- Gpu.h - the cuda target's stages -------------------------*- C++ -*-===//
//
// The compile path for --target=cuda (docs/gpu.md) shares the graph, fused
// and kernel stages with the CPU and then has its own:
//
//   gpu     the kernels bufferized like the cpu stage's, then mapped onto a
//           grid of thread blocks (strata-gpu-map): each kernel's launch
//           geometry and the reason for it are attributes of its top-level
//           declaration (strata.launch, strata.gpu_reason)
//   llvm    the kernels in the LLVM dialect with NVVM intrinsics
//           (strata-gpu-to-nvvm for the gpu ops and the math library)
//   object  LLVM IR linked with libdevice, optimized for the NVPTX target,
//           PTX text, and a cubin from ptxas
//   module  the plan with one Kernel step per kernel and its launch geometry
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_COMPILER_GPU_H
#define STRATA_LIB_COMPILER_GPU_H

#include "strata/Compiler/Compiler.h"
#include "strata/Compiler/Pipeline.h"
#include "strata/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

/// The gpu stage's passes for a GPU with `facts`, and the llvm stage's for
/// the cuda target.
std::vector<PassEntry> gpuStagePipeline(const TargetFacts &facts);
std::vector<PassEntry> gpuLlvmPipeline(const CompileOptions &options);

/// Registers strata-gpu-pull-fusion, strata-gpu-map and strata-gpu-to-nvvm.
void registerGpuPasses();

/// `values` (at least one) combined pairwise: a tree of depth log2(n)
/// instead of a chain of n - 1 dependent ops, whose latency a warp with
/// little other work cannot hide (strata-gpu-map's lane groups, the
/// flash-attention kernel's row max and sum).
mlir::Value combinePairwise(
    llvm::SmallVector<mlir::Value> values,
    llvm::function_ref<mlir::Value(mlir::Value, mlir::Value)> combine);

/// The most dynamic shared memory strata-gpu-map gives a block on the GPU
/// `arch` (its dynamic-shared-limit option): what a block may opt in to
/// there, less room for static shared memory; 0 (static shared memory only)
/// for GPUs it does not know.
int64_t gpuDynamicSharedLimit(llvm::StringRef arch);

/// The most shared memory a block may opt in to on the GPU `arch` (CUDA's
/// "maximum shared memory per block (opt-in)"), for kernels with no static
/// shared memory (the GEMM kernel; its block-shared-limit option); 0 for
/// GPUs strata does not know.
int64_t gpuBlockSharedLimit(llvm::StringRef arch);

/// Generates the body of a flash-attention kernel (GpuAttention.cpp) in
/// place of `body`'s generic one, and records its launch on `decl`, the
/// kernel's declaration carrying strata.attention (Attention.h). `wgmma`:
/// its products are Hopper's warpgroup instructions (sm_90a only), else
/// mma.sync (sm_80 on).
mlir::LogicalResult emitFlashAttention(mlir::func::FuncOp decl,
                                       mlir::func::FuncOp body,
                                       mlir::ModuleOp kernels,
                                       int64_t dynamicSharedLimit, bool wgmma);

/// Generates the body of a GEMM kernel with its epilogue (GpuGemm.cpp) in
/// place of `body`'s generic one, and records its launch on `decl`, the
/// kernel's declaration carrying strata.gemm (Gemm.h). `wgmma`: Hopper's
/// warpgroup products (sm_90a only), else mma.sync (sm_80 on). It has no
/// static shared memory, so it may use all of `blockSharedLimit`
/// (gpuBlockSharedLimit).
mlir::LogicalResult emitGemm(mlir::func::FuncOp decl, mlir::func::FuncOp body,
                             mlir::ModuleOp kernels, int64_t blockSharedLimit,
                             bool wgmma);

/// Whether strata-gpu-map may use wgmma on the GPU `arch`: Hopper's
/// architecture-specific sm_90a (PTX for plain sm_90 has no wgmma, and
/// later GPUs have other tensor-core instructions).
bool gpuHasWgmma(llvm::StringRef arch);

/// Whether the GPU `arch` has programmatic dependent launch (sm_90 on): a
/// kernel may start while the kernel before it on the stream finishes, and
/// waits for it with `griddepcontrol.wait` (strata-gpu-map's grid-dependency
/// option).
bool gpuHasGridDependency(llvm::StringRef arch);

/// Whether the GPU `arch` multiplies on tensor cores with mma.sync (sm_80
/// on): the flash-attention kernel.
bool gpuHasTensorCores(llvm::StringRef arch);
/// Whether strata-gpu-map would emit any kernel of `module` (at the kernel
/// stage) differently with wgmma: its templates (flash attention, the GEMM
/// kernel).
bool gpuHasWgmmaForms(mlir::ModuleOp module);

/// The name of the kernel that copies `bytes` bytes (the plan copies model
/// inputs that views read; see ModuleWriter.cpp).
std::string gpuCopyKernelName(uint64_t bytes);

/// The module stage for the cuda target (writeModule's counterpart).
mlir::LogicalResult writeGpuModule(mlir::ModuleOp module,
                                   const CompileOptions &options,
                                   const GpuCode &code,
                                   std::vector<uint8_t> &moduleBytes);

} // namespace strata

#endif // STRATA_LIB_COMPILER_GPU_H
