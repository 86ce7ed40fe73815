//===- CublasLt.h - cuBLASLt matrix products, loaded at run time -*- C++
//-*-===//
//
// The CUDA executor's one library kernel, "cublaslt.matmul" (docs/runtime.md,
// "Library kernels on the GPU"): a matrix product with cuBLASLt's fused
// epilogues (bias, ReLU, GELU) and a residual input. Like the driver, the
// library is opened with dlopen when a module first needs it, so the runtime
// neither links it nor needs it for modules without such steps. Only the
// types and declarations of the toolkit's cublasLt.h are used at build time.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_LIB_CUDA_CUBLASLT_H
#define STRATA_RUNTIME_LIB_CUDA_CUBLASLT_H

#include "strata/Runtime/Runtime.h"

#include <cublasLt.h>
#include <cuda.h>

#include <string>
#include <vector>

namespace strata::rt::cuda {

#define STRATA_CUBLASLT_FUNCTIONS(X)                                           \
  X(cublasLtGetVersion)                                                        \
  X(cublasLtGetStatusName)                                                     \
  X(cublasLtGetStatusString)                                                   \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmul)

/// cuBLASLt's entry points, resolved once per process.
struct BlasLt {
#define STRATA_CUBLASLT_MEMBER(fn) decltype(&::fn) fn = nullptr;
  STRATA_CUBLASLT_FUNCTIONS(STRATA_CUBLASLT_MEMBER)
#undef STRATA_CUBLASLT_MEMBER
  /// The file that was opened, and cublasLtGetVersion's value (130000...).
  std::string path;
  size_t version = 0;
};

/// cuBLASLt, loaded on first use from $STRATA_CUBLASLT (a file), the
/// loader's search path (libcublasLt.so.13, then .so.12), $CUDA_PATH/lib64,
/// $CUDA_HOME/lib64 and /usr/local/cuda/lib64. Throws Error naming every
/// place tried when none works; the outcome is decided once.
const BlasLt &blasLt();

/// "CUBLAS_STATUS_NOT_SUPPORTED (the functionality requested is not
/// supported)".
std::string statusText(const BlasLt &lt, cublasStatus_t status);

/// One "cublaslt.matmul" step, its descriptors built and its algorithm
/// chosen for the buffers it will run on.
///
/// The step's contract (the compiler's side is lib/Compiler/Library.cpp):
/// inputs A [..., M, K] (or [..., K, M] with trans_a = 1), B [..., K, N] (or
/// [..., N, K] with trans_b = 1), then the bias [N] when has_bias = 1, then
/// C [..., M, N] when has_c = 1; one output D [..., M, N]. All of f32, f16 or
/// bf16 alike; the products accumulate in f32. Batch dimensions of A, B and
/// C are either D's or absent (all 1: the same matrix for every batch).
///   D = activation(alpha * op(A) op(B) + beta * C + bias)
/// with `activation` "" , "relu" or "gelu_tanh" (cuBLASLt's GELU is the tanh
/// approximation).
class LtMatmul {
public:
  /// Checks the step against its buffers and prepares it; `pointers` are the
  /// device addresses of the step's inputs, then its output (their
  /// alignment narrows the algorithms); `workspaceBytes` is what the
  /// session's workspace holds. Throws Error prefixed with `who`.
  LtMatmul(const BlasLt &lt, cublasLtHandle_t handle, const Module &module,
           const Step &step, const std::vector<CUdeviceptr> &pointers,
           size_t workspaceBytes, const std::string &who);
  ~LtMatmul();
  LtMatmul(const LtMatmul &) = delete;
  LtMatmul &operator=(const LtMatmul &) = delete;

  /// Enqueues the product on `stream`.
  cublasStatus_t run(CUdeviceptr workspace, size_t workspaceBytes,
                     CUstream stream) const;

  /// "bf16 8 x 512x768x3072, bias+gelu_tanh", for messages and profiles.
  const std::string &summary() const { return summary_; }

  /// The heuristic's algorithms for this product, best first (at most
  /// kCandidates); run() uses the chosen one, the first until choose().
  /// The session times them on the step's own buffers (CudaSession.cpp,
  /// tuneLibrarySteps): the heuristic's first pick is not always the
  /// fastest.
  static constexpr int kCandidates = 6;
  size_t candidates() const { return algos_.size(); }
  void choose(size_t index) { chosen_ = index; }
  size_t chosen() const { return chosen_; }
  /// 2 M N K per batch: the product's nominal floating-point operations.
  double flops() const { return flops_; }

private:
  const BlasLt &lt_;
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layoutA_ = nullptr, layoutB_ = nullptr,
                         layoutC_ = nullptr, layoutD_ = nullptr;
  std::vector<cublasLtMatmulAlgo_t> algos_;
  size_t chosen_ = 0;
  double flops_ = 0;
  float alpha_ = 1, beta_ = 0;
  /// cuBLASLt's A is the step's B and its B the step's A (see the .cpp).
  CUdeviceptr a_ = 0, b_ = 0, c_ = 0, d_ = 0;
  std::string summary_;
};

} // namespace strata::rt::cuda

#endif // STRATA_RUNTIME_LIB_CUDA_CUBLASLT_H
