//===- CudaSession.h - the CUDA executor's session --------------*- C++ -*-===//
//
// The class behind Session for CUDA modules and what it launches with
// (CudaSession.cpp; its cuBLASLt and cuDNN steps in CudaLibrarySteps.cpp).
// Private to runtime/lib/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_CUDA_CUDASESSION_H
#define STRATA_RUNTIME_CUDA_CUDASESSION_H

#include "../Branches.h"
#include "CudaDriver.h"
#include "CudaExecutor.h"
#if STRATA_HAVE_CUBLASLT
#include "CublasLt.h"
#endif
#if STRATA_HAVE_CUDNN
#include "Cudnn.h"
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
namespace strata::rt::cudasession {

using cuda::check;
using cuda::Driver;
using cuda::errorText;

/// Device allocations are 256-byte aligned; sub-allocations keep that.
constexpr uint64_t kDeviceAlign = 256;
/// Generated kernels may assume 64-byte aligned buffers, as on the CPU.
constexpr uint64_t kKernelAlign = 64;
/// cuBLASLt's workspace: NVIDIA recommends 32 MiB on Hopper.
constexpr uint64_t kLtWorkspaceBytes = 32ull << 20;
/// cuBLASLt candidates timed a second time, with more runs (tuneLibrarySteps).
constexpr size_t kFinalists = 4;
/// The library kernels the CUDA executor runs (CublasLt.h, Cudnn.h).
constexpr const char *kLtMatmul = "cublaslt.matmul";
constexpr const char *kDnnConv = "cudnn.conv";
/// The most workspace a cuDNN plan may need to be kept (DnnConv): the
/// session's one cuDNN workspace is then what the chosen plans need
/// (CudaLibrarySteps.cpp, fitConvWorkspace).
constexpr int64_t kDnnWorkspaceLimit = 256ll << 20;

inline uint64_t alignUp(uint64_t value, uint64_t align) {
  return (value + align - 1) / align * align;
}

/// Whether a failed cuModuleLoadData of the cubin means "this GPU cannot
/// run that image", which the PTX may still fix; other failures (out of
/// memory, a dead context) are reported as they are.
inline bool cubinDoesNotFit(CUresult r) {
  return r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE ||
         r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || r == CUDA_ERROR_INVALID_PTX;
}

/// Makes the session's context current on this thread for the scope.
class ContextScope {
public:
  ContextScope(const Driver &d, CUcontext context, const std::string &where)
      : d_(d) {
    check(d_, d_.cuCtxPushCurrent(context), "cuCtxPushCurrent", where);
  }
  ~ContextScope() {
    CUcontext popped;
    d_.cuCtxPopCurrent(&popped);
  }
  ContextScope(const ContextScope &) = delete;
  ContextScope &operator=(const ContextScope &) = delete;

private:
  const Driver &d_;
};

/// `count` CUDA events, destroyed with the object on every way out (a failed
/// check's exception included).
class EventSet {
public:
  EventSet(const Driver &d, size_t count, const std::string &where)
      : d_(d), events_(count, nullptr) {
    for (CUevent &e : events_)
      check(d_, d_.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate", where);
  }
  ~EventSet() {
    for (CUevent e : events_)
      if (e)
        d_.cuEventDestroy(e);
  }
  EventSet(const EventSet &) = delete;
  EventSet &operator=(const EventSet &) = delete;
  CUevent operator[](size_t i) const { return events_[i]; }

private:
  const Driver &d_;
  std::vector<CUevent> events_;
};

/// One step, ready to launch: a kernel (`function`), a cuBLASLt product
/// (`lt`) or a cuDNN convolution (`conv`).
struct Launch {
  CUfunction function = nullptr;
#if STRATA_HAVE_CUBLASLT
  std::unique_ptr<cuda::LtMatmul> lt;
#endif
#if STRATA_HAVE_CUDNN
  std::unique_ptr<cuda::DnnConv> conv;
#endif
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
  /// Launched with programmatic dependent launch: the kernel waits for the
  /// grids before it at its entry (its launch's waits_for_grids),
  /// so it may start while the kernel before it finishes.
  bool gridDependency = false;
  /// The device pointers of the step's inputs, then its outputs; `params`
  /// points at each (cuLaunchKernel's kernelParams).
  std::vector<CUdeviceptr> args;
  std::vector<void *> params;
};

/// A TMA tensor map of one of a step's operands (its `tensor_maps`
/// attribute, 7 integers a map; docs/runtime.md): a 2-D view of the
/// operand, `outer` rows of `inner` elements, rows `strideBytes` apart,
/// copied in boxes of `boxInner` x `boxOuter` with a `swizzle`-byte
/// shared-memory swizzle (0: none).
struct TensorMapSpec {
  uint32_t operand = 0;
  uint64_t inner = 0, outer = 0, strideBytes = 0;
  uint32_t boxInner = 0, boxOuter = 0, swizzle = 0;
};

/// One variant's launch (the cubin's or the portable PTX's): the step's
/// typed launch (format 1.6; the module outlives its sessions) and its
/// tensor maps, checked against the step's buffers without a device.
struct LaunchSpec {
  /// Null for the PTX of a step without a launch of the PTX's own.
  const KernelLaunch *launch = nullptr;
  /// Passed, encoded, after the outputs: one device pointer to them.
  std::vector<TensorMapSpec> tensorMaps;
};

/// A kernel step's launches: the cubin's, and the portable PTX's own where
/// it differs (the step's ptx_kernel and ptx_launch, docs/runtime.md),
/// taken when the session loads the PTX.
struct LaunchShape {
  LaunchSpec cubin, ptx;
  /// Whether the loaded image runs the PTX's own kernel (resolveKernels).
  bool ownPtx = false;
  const LaunchSpec &taken() const { return ownPtx ? ptx : cubin; }
};

class CudaSession final : public detail::CudaExecutor {
public:
  CudaSession(const Module &module, const SessionOptions &options);
  ~CudaSession() override { release(); }

  void run(const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs,
           const std::vector<void *> &targets,
           const std::vector<uint64_t> &deviceInputs,
           const std::vector<uint64_t> &deviceTargets,
           std::vector<double> *stepTimes) override;
  CudaSessionInfo info() const override { return info_; }
  std::vector<double> timeRuns(int runs) override;

private:
  [[noreturn]] void failPlan(const std::string &what) const {
    throw Error(prefix_ + ": " + what);
  }
  std::string stepWhere(size_t index) const {
    return prefix_ + ": " + module_.steps()[index].describe(index);
  }
  void checkPlan();
  void initialize();
  void loadImage();
  void resolveKernels();
  void tuneLibrarySteps();
  std::pair<size_t, float>
  fastestCandidate(size_t count, const std::function<bool(size_t)> &runOnce,
                   const std::string &what, const EventSet &events);
  void pinLibrarySteps(const std::string &file);
  std::string libraryChoicesText() const;
  void fillForTuning(CUdeviceptr base, uint64_t bytes);
  void allocate();
  void prepareLibrarySteps();
  void prepareLtSteps();
  void prepareConvSteps();
  void bindConvWorkspace(uint64_t bytes);
  void fitConvWorkspace();
  void release() noexcept;

  /// Enqueues step `index`; "" on success, else "<call> failed with ...".
  std::string launch(size_t index) const;
  void launchAll(std::vector<double> *stepTimes);
  void launchTimed(size_t index, std::vector<double> *stepTimes);
  void createEvents();
  void launchSteps(std::vector<double> *stepTimes);
  bool captureGraph();
  void prepareHostSteps();
  void runWithHostSteps(std::vector<double> *stepTimes);
  void runHostStep(size_t index);

  const Module &module_;
  SessionOptions::Cuda options_;
  std::string prefix_;
  const Driver *d_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUmodule image_ = nullptr;
  CUdeviceptr arena_ = 0, constants_ = 0, inputs_ = 0;
  /// The steps' TMA tensor maps (allocate()), or 0.
  CUdeviceptr tensorMaps_ = 0;
  uint64_t inputBytes_ = 0;
  /// Page-locked staging for inputs and outputs, or nullptr.
  uint8_t *staging_ = nullptr;
  std::vector<uint64_t> inputStaging_, outputStaging_;
  /// Device address of every buffer of the module.
  std::vector<CUdeviceptr> address_;
  std::vector<LaunchShape> shapes_;
  /// Per step.
  std::vector<Launch> launches_;
  /// cuBLASLt's handle and workspace, when the plan has cublaslt.matmul
  /// steps.
  void *ltHandle_ = nullptr;
  CUdeviceptr ltWorkspace_ = 0;
  /// cuDNN's handle (its stream the session's) and the workspace that every
  /// cudnn.conv step's variant packs point at, when the plan has such steps.
  void *dnnHandle_ = nullptr;
  CUdeviceptr dnnWorkspace_ = 0;
  uint64_t dnnWorkspaceBytes_ = 0;
  bool useGraph_ = true;
  /// Whether kernels that wait for the grids before them are launched
  /// with programmatic dependent launch (initialize()).
  bool gridDependency_ = false;
  CUgraph graph_ = nullptr;
  CUgraphExec graphExec_ = nullptr;
  /// Profiling: one start and one end event per step, created on demand.
  std::vector<CUevent> events_;
  CudaSessionInfo info_;

  /// Host steps (the runtime's host kernels: the ops on shapes known only
  /// at run time, docs/runtime.md) run on the CPU between the GPU's steps.
  /// The buffers they write live on the host only (onHost_), and GPU steps
  /// never read them (checkPlan); the device buffers they read are copied
  /// to the host before they run.
  bool hasHostSteps_ = false;
  std::vector<uint8_t> onHost_;
  /// Per step: the host kernel, or null; its state.
  std::vector<KernelFn> hostKernels_;
  std::vector<std::unique_ptr<KernelState>> hostStates_;
  /// Per buffer: the host tensor of a buffer on the host, or the host copy
  /// of a device buffer a host step reads; empty for the others.
  std::vector<Tensor> hostTensors_;
  /// Per buffer, during a run: skipped with a branch (Branches.h).
  std::vector<uint8_t> skipped_;
  std::unique_ptr<ThreadPool> pool_;
};

} // namespace strata::rt::cudasession

#endif // STRATA_RUNTIME_CUDA_CUDASESSION_H
