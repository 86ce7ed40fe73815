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

#include "CudaDriver.h"

#include "strata/Runtime/Runtime.h"

#include <cublasLt.h>
#include <cuda.h>

#include <map>
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
  X(cublasLtMatmulAlgoCheck)                                                   \
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

/// One "cublaslt.matmul" step, its descriptors built and its algorithms
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
///
/// A step is one cuBLASLt call, or several ("parts") when D's rows are not a
/// multiple of 16 bytes (GPT-2's 50257 logits): cuBLASLt's fast kernels (TMA)
/// need 16-byte aligned rows, and without them the product runs several times
/// slower. Rows r = j, j + u, j + 2u, ... (u = 16 bytes / element size) start
/// at the same offset from a 16-byte boundary, so each such class of rows is
/// one product whose output rows are u rows of D apart (aligned), begin at
/// the class's first aligned column and span a multiple of 16 bytes; two
/// more products write the columns before and after those (fewer than u on
/// each side), for every row.
/// What SessionOptions::Cuda says of a product's algorithms and parts.
struct LtOptions {
  /// Candidates asked of the heuristic (1 to LtMatmul::kMaxCandidates).
  int candidates = 32;
  /// Products of rows not 16-byte aligned split from this many operations.
  double splitMinFlops = 4e9;
  /// A split's classes of rows as one batched call.
  bool classBatch = true;
};

class LtMatmul {
public:
  /// Checks the step against its buffers and prepares it; `pointers` are the
  /// device addresses of the step's inputs, then its output (their
  /// alignment narrows the algorithms); `workspaceBytes` is what the
  /// session's workspace holds. Throws Error prefixed with `who`.
  LtMatmul(const BlasLt &lt, const Driver &driver, cublasLtHandle_t handle,
           const Module &module, const Step &step,
           const std::vector<CUdeviceptr> &pointers, size_t workspaceBytes,
           const LtOptions &options, const std::string &who);
  ~LtMatmul();
  LtMatmul(const LtMatmul &) = delete;
  LtMatmul &operator=(const LtMatmul &) = delete;

  /// Enqueues the product (the bias copies, then every part, in order) on
  /// `stream`; returns what failed ("cublasLtMatmul (bf16 ...) failed with
  /// ..."), or "".
  std::string run(CUdeviceptr workspace, size_t workspaceBytes,
                  CUstream stream) const;
  /// "bf16 8 x 512x768x3072, bias+gelu_tanh", for messages and profiles;
  /// a product run in parts says so ("..., as 10 products: rows of 100514
  /// bytes").
  const std::string &summary() const { return summary_; }

  /// The cuBLASLt calls the step makes, and each one's algorithms: the
  /// heuristic's, best first (at most the number asked for). run() uses each
  /// part's chosen one, the first until choose(). The session times them on the
  /// step's own buffers (CudaSession.cpp, tuneLibrarySteps): the heuristic's
  /// first pick is not always the fastest. LtOptions::candidates
  /// (1 to kMaxCandidates) asks the heuristic for another number. cuBLASLt
  /// 13 returns 8 for the benchmarks' products on the H200 (6 were asked
  /// for before): bench/RESULTS.md, 2026-11-30 10:22.
  static constexpr int kCandidates = 32;
  static constexpr int kMaxCandidates = 64;
  size_t parts() const { return parts_.size(); }
  size_t candidates(size_t part) const { return parts_[part].algos.size(); }
  /// `ms`: what one run of the chosen algorithm took when it was timed.
  void choose(size_t part, size_t index, float ms = -1) {
    parts_[part].chosen = index;
    parts_[part].tunedMs = ms;
  }
  /// The time choose() was given for the part, or -1.
  float tunedMs(size_t part) const { return parts_[part].tunedMs; }
  size_t chosen(size_t part) const { return parts_[part].chosen; }
  /// The algorithm the part runs; cuBLASLt documents the structure as
  /// serializable and valid again with the same library version.
  const cublasLtMatmulAlgo_t &chosenAlgo(size_t part) const {
    return parts_[part].algos[parts_[part].chosen];
  }
  /// Runs `algo` for the part from now on, when cuBLASLt confirms that it
  /// computes this product (cublasLtMatmulAlgoCheck); otherwise returns why
  /// not and changes nothing.
  std::string pin(size_t part, const cublasLtMatmulAlgo_t &algo);
  bool pinned(size_t part) const { return parts_[part].pinned; }
  /// 2 M N K of one part: its nominal floating-point operations.
  double flops(size_t part) const {
    return 2.0 * double(parts_[part].m) * double(parts_[part].n) * double(k_);
  }
  /// Enqueues one part alone (for timing its candidates).
  cublasStatus_t runPart(size_t part, CUdeviceptr workspace,
                         size_t workspaceBytes, CUstream stream) const;
  /// "1024x768x50250", the part's M x K x N as the step sees it.
  std::string partShape(size_t part) const;

private:
  /// One cuBLASLt call: its operands as cuBLASLt sees them (its A is the
  /// step's B and its B the step's A, see the .cpp) and its algorithms.
  struct Part {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t layoutA = nullptr, layoutB = nullptr,
                           layoutC = nullptr, layoutD = nullptr;
    CUdeviceptr a = 0, b = 0, c = 0, d = 0;
    std::vector<cublasLtMatmulAlgo_t> algos;
    size_t chosen = 0;
    int64_t m = 0, n = 0; // of the step's product: D's rows and columns
    /// Batched classes of rows (CublasLt.cpp): `classes` products of
    /// m / classes rows each in one call; 1 otherwise.
    int64_t classes = 1;
    float tunedMs = -1;
    bool pinned = false;
  };

  /// What the step asks for (CublasLt.cpp).
  struct Product;
  /// One matrix as cuBLASLt sees it: column-major, `rows` x `cols` with
  /// columns `ld` elements apart, `stride` elements between batches.
  struct Operand {
    CUdeviceptr p;
    int64_t rows, cols, ld, stride;
  };

  /// The constructor's work (it gives back what was made when this throws):
  /// the step read and checked, then its parts.
  void prepare(const Module &module, const Step &step,
               const std::vector<CUdeviceptr> &pointers);
  Product readStep(const Module &module, const Step &step,
                   const std::vector<CUdeviceptr> &pointers);
  bool splitRows(const Product &x);
  std::map<int64_t, CUdeviceptr> copyBias(const Product &x,
                                          const std::vector<int64_t> &shifts);
  void addPart(const Product &x, const Operand &a, const Operand &b,
               const Operand &c, const Operand &d, int64_t count,
               CUdeviceptr biasPointer);
  void chooseAlgorithms(Part &p, const uint32_t (&alignments)[4],
                        const std::string &what);
  /// Throws Error("<who>: <what>").
  [[noreturn]] void fail(const std::string &what) const;
  /// Fails naming `call` and the status unless it succeeded.
  void check(cublasStatus_t s, const char *call) const;
  /// Destroys the descriptors and frees the bias copies' memory.
  void release() noexcept;

  /// A part's bias that starts off a 16-byte boundary is read from a copy
  /// that does not: cuBLASLt's fast kernels need the bias aligned too (on
  /// the H200, 0.22 ms against 0.077 for a 1024x768x30520 part). The copies
  /// are made by each run, before the parts (the bias may be computed).
  struct BiasCopy {
    CUdeviceptr to, from;
    size_t bytes;
  };

  const BlasLt &lt_;
  const Driver &driver_;
  cublasLtHandle_t handle_;
  LtOptions options_;
  size_t workspaceBytes_ = 0;
  /// What errors are prefixed with (the step, as the session names it).
  std::string who_;
  std::vector<BiasCopy> biasCopies_;
  CUdeviceptr biasCopyMemory_ = 0;
  std::vector<Part> parts_;
  float alpha_ = 1, beta_ = 0;
  int64_t k_ = 0;
  std::string summary_;
};

} // namespace strata::rt::cuda

#endif // STRATA_RUNTIME_LIB_CUDA_CUBLASLT_H
