//===- Cudnn.h - cuDNN convolutions, loaded at run time ---------*- C++ -*-===//
//
// The CUDA executor's second library kernel, "cudnn.conv" (docs/runtime.md,
// "cuDNN convolutions"): a convolution with its bias, a residual input and
// ReLU fused, run by cuDNN 9 through its backend (graph) API. Like cuBLASLt
// (CublasLt.h), the library is opened with dlopen when a module first needs
// it, so the runtime neither links it nor needs it for modules without such
// steps. Only the types and declarations of cudnn.h (cudnn_graph.h) are used
// at build time.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_LIB_CUDA_CUDNN_H
#define STRATA_RUNTIME_LIB_CUDA_CUDNN_H

#include "CudaDriver.h"

#include "strata/Runtime/Runtime.h"

#include <cuda.h>
#include <cudnn.h>

#include <string>
#include <vector>

namespace strata::rt::cuda {

#define STRATA_CUDNN_FUNCTIONS(X)                                              \
  X(cudnnGetVersion)                                                           \
  X(cudnnGetErrorString)                                                       \
  X(cudnnGetLastErrorString)                                                   \
  X(cudnnCreate)                                                               \
  X(cudnnDestroy)                                                              \
  X(cudnnSetStream)                                                            \
  X(cudnnBackendCreateDescriptor)                                              \
  X(cudnnBackendDestroyDescriptor)                                             \
  X(cudnnBackendSetAttribute)                                                  \
  X(cudnnBackendGetAttribute)                                                  \
  X(cudnnBackendFinalize)                                                      \
  X(cudnnBackendExecute)

/// cuDNN's entry points, resolved once per process.
struct Dnn {
#define STRATA_CUDNN_MEMBER(fn) decltype(&::fn) fn = nullptr;
  STRATA_CUDNN_FUNCTIONS(STRATA_CUDNN_MEMBER)
#undef STRATA_CUDNN_MEMBER
  /// The file that was opened, and cudnnGetVersion's value (91900 for
  /// 9.19.0).
  std::string path;
  size_t version = 0;
};

/// cuDNN, loaded on first use from $STRATA_CUDNN (a file), the loader's
/// search path (libcudnn.so.9), $CUDA_PATH/lib64, $CUDA_HOME/lib64 and
/// /usr/local/cuda/lib64. Throws Error naming every place tried when none
/// works, or when the library is older than 9.0; the outcome is decided
/// once.
const Dnn &dnn();

/// "CUDNN_STATUS_NOT_SUPPORTED_SHAPE", with cuDNN's last error message on
/// this thread when it has one: "... (cuDNN: <message>)".
std::string statusText(const Dnn &dnn, cudnnStatus_t status);

/// What a "cudnn.conv" step computes, read from the step and checked against
/// its buffers. Needs no library, so the session's plan checks call it on
/// any machine (a step that breaks the contract is named before the driver
/// is touched).
///
/// The step's contract: inputs X [N, S1..Sd, C] (channels-last, d = 1, 2 or
/// 3 spatial dimensions), W [F, K1..Kd, C/g] (for each filter its kernel
/// offsets row-major, the channels innermost), then the bias [F] when
/// has_bias = 1, then Z [N, O1..Od, F] when has_z = 1; one output
/// Y [N, O1..Od, F]. All of f32, f16 or bf16 alike. Attributes "strides"
/// (d ints), "dilations" (d ints), "pads" (2d: the d begin pads, then the d
/// end pads), "group" (g: C = g * W's last dimension, F % g = 0),
/// "has_bias" and "has_z" (0 or 1), "activation" ("" or "relu"); an absent
/// one takes ONNX's default (1, 1, 0, 1, 0, 0, ""). Cross-correlation, as
/// ONNX's Conv:
///   Y = activation(conv(X, W) + bias + Z)
/// with f32 accumulation, and
///   O = floor((S + pad_begin + pad_end - dilation (K - 1) - 1) / stride) + 1.
struct ConvShape {
  DType type = DType::F32;
  /// d, the spatial dimensions (1 to 3).
  size_t spatial = 2;
  int64_t n = 0, c = 0, f = 0, group = 1;
  /// Per spatial dimension.
  std::vector<int64_t> in, kernel, out, strides, dilations, padBegin, padEnd;
  bool hasBias = false, hasZ = false;
  std::string activation;

  /// Throws Error("<who>: <what is wrong>").
  static ConvShape read(const Module &module, const Step &step,
                        const std::string &who);
  /// 2 N P F K C/g (P output points, K kernel offsets per image): the
  /// nominal floating-point operations.
  double flops() const;
  /// "bf16 conv 32x56x56x64 -> 32x56x56x64, 3x3 stride 1 pad 1, groups 1,
  /// +bias+z+relu".
  std::string summary() const;
};

/// One "cudnn.conv" step: its cuDNN operation graph (the convolution, then
/// the pointwise additions of the bias and Z and the ReLU the step asks for,
/// chained through virtual f32 tensors, the last writing Y), its execution
/// plans (the heuristics' engine configs that finalize, best first) and a
/// variant pack per plan, all built once for the buffers the step runs on,
/// so that a run is one cudnnBackendExecute (inside the session's CUDA graph
/// capture too).
class DnnConv {
public:
  /// Plans kept at most: the candidates the session times.
  static constexpr size_t kMaxPlans = 8;

  /// Checks the step against its buffers and builds its plans; `pointers`
  /// are the device addresses of the step's inputs, then its output (their
  /// alignment is the tensors' byte alignment); plans that need more than
  /// `workspaceLimit` bytes of workspace are skipped, and at most
  /// `maxPlans` (1 to kMaxPlans) are kept. `handle` is the session's, its
  /// stream set once (cudnnSetStream). Throws Error prefixed with `who`.
  /// run() needs setWorkspace() first.
  DnnConv(const Dnn &dnn, cudnnHandle_t handle, const Module &module,
          const Step &step, const std::vector<CUdeviceptr> &pointers,
          int64_t workspaceLimit, size_t maxPlans, const std::string &who);
  ~DnnConv();
  DnnConv(const DnnConv &) = delete;
  DnnConv &operator=(const DnnConv &) = delete;

  /// (Re)builds every plan's variant pack with `workspace`, which holds
  /// `bytes`: the plans that need more get none, and run() refuses them.
  /// Throws Error.
  void setWorkspace(CUdeviceptr workspace, int64_t bytes);

  /// Enqueues the chosen plan on the handle's stream, which must be
  /// `stream` (it was set once; setting it here again would not be
  /// captured); returns what failed ("cudnnBackendExecute (bf16 conv ...)
  /// failed with ..."), or "".
  std::string run(CUstream stream) const;

  /// The plans kept, the heuristics' best first; run() uses the chosen one,
  /// the first until choose(). The session times them on the step's own
  /// buffers (CudaLibrarySteps.cpp, tuneLibrarySteps).
  size_t candidates() const { return plans_.size(); }
  /// `ms`: what one run of the chosen plan took when it was timed.
  void choose(size_t c, float ms = -1) {
    chosen_ = c;
    tunedMs_ = ms;
  }
  size_t chosen() const { return chosen_; }
  /// The time choose() was given, or -1.
  float tunedMs() const { return tunedMs_; }
  /// The workspace plan `c` needs, and the most any plan needs.
  int64_t workspaceBytes(size_t c) const { return plans_[c].workspace; }
  int64_t maxWorkspaceBytes() const;
  /// 2 N P F K C/g (ConvShape::flops).
  double flops() const { return shape_.flops(); }
  /// "bf16 conv 2x14x14x32 -> 2x14x14x64, 3x3 stride 1 pad 1, groups 1,
  /// +bias+relu", for messages and profiles.
  const std::string &summary() const { return summary_; }
  /// The chosen plan's engine: "engine 12" (CUDNN_ATTR_ENGINE_GLOBAL_INDEX),
  /// with ", runtime-compiled" for an engine that NVRTC compiled for this
  /// graph (CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) and ", TF32" for one
  /// that rounds f32 inputs to TF32 (CUDNN_NUMERICAL_NOTE_TENSOR_CORE on f32
  /// data), which is taken only when no engine keeps f32.
  std::string engine() const;

private:
  /// One execution plan and what the session reports of it.
  struct Plan {
    cudnnBackendDescriptor_t plan = nullptr, pack = nullptr;
    int64_t workspace = 0;
    int64_t engine = -1;
    bool runtimeCompiled = false;
    /// Whether the engine rounds f32 inputs to TF32 on the tensor cores.
    bool tf32 = false;
  };
  /// Why the heuristics' engine configs were not kept, for the error when
  /// none is (`tf32`: left for the TF32 pass).
  struct Skipped {
    size_t configs = 0, converted = 0, tf32 = 0, unfinalized = 0, workspace = 0;
  };

  /// The constructor's work (it gives back what was made when this throws).
  void prepare(const Module &module, const Step &step,
               const std::vector<CUdeviceptr> &pointers);
  /// Keeps the plans of `graph`'s engine configs from heuristics `mode`:
  /// those that keep f32 data in f32, or with `tf32` those that round it to
  /// TF32 (never those that convert the inputs to a narrower type).
  void addPlans(cudnnBackendDescriptor_t graph, cudnnBackendHeurMode_t mode,
                bool tf32, Skipped &skipped);
  /// A new descriptor of `type`, destroyed by release().
  cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type);
  /// Destroys the descriptor make() returned last.
  void dropLast() noexcept;
  void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
           cudnnBackendAttributeType_t type, int64_t count, const void *values,
           const char *what);
  void finalize(cudnnBackendDescriptor_t d, const char *what);
  /// A finalized tensor descriptor: dimensions in cuDNN's order (N, C,
  /// spatial), strides of the channels-last layout.
  cudnnBackendDescriptor_t tensor(int64_t uid, cudnnDataType_t type,
                                  const std::vector<int64_t> &dims,
                                  const std::vector<int64_t> &strides,
                                  int64_t alignment, bool isVirtual);
  /// Throws Error("<who>: <what>").
  [[noreturn]] void fail(const std::string &what) const;
  /// Fails naming `call` (and what it was for) unless it succeeded.
  void check(cudnnStatus_t s, const std::string &call) const;
  void releasePacks() noexcept;
  /// Destroys every descriptor, the newest first (a descriptor goes before
  /// those it refers to).
  void release() noexcept;

  const Dnn &dnn_;
  cudnnHandle_t handle_;
  size_t maxPlans_;
  int64_t workspaceLimit_;
  /// What errors are prefixed with (the step, as the session names it).
  std::string who_;
  ConvShape shape_;
  std::string summary_;
  /// Every descriptor but the variant packs, in the order made.
  std::vector<cudnnBackendDescriptor_t> owned_;
  std::vector<Plan> plans_;
  /// The variant packs' tensors: unique ids and device addresses.
  std::vector<int64_t> uids_;
  std::vector<void *> addresses_;
  size_t chosen_ = 0;
  float tunedMs_ = -1;
};

} // namespace strata::rt::cuda

#endif // STRATA_RUNTIME_LIB_CUDA_CUDNN_H
