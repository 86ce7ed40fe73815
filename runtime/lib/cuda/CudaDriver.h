//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// The runtime must load on machines without an NVIDIA driver, so it never
// links libcuda: driver() opens libcuda.so.1 with dlopen on first use and
// resolves each entry point the executor calls through cuGetProcAddress
// (asking for the ABI of the cuda.h the runtime was compiled with), or dlsym
// of the header's versioned name when the driver predates cuGetProcAddress.
// Only cuda.h's types and declarations are used; nothing of the toolkit is
// needed at run time. Tests may load another library in its place
// (testing::useCudaDriver, strata/Runtime/Testing.h).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_LIB_CUDA_CUDADRIVER_H
#define STRATA_RUNTIME_LIB_CUDA_CUDADRIVER_H

#include "strata/Runtime/Runtime.h"

#include <cuda.h>

#include <initializer_list>
#include <string>

namespace strata::rt::cuda {

// The entry points the executor needs. cuda.h maps several names to
// versioned symbols (cuMemAlloc -> cuMemAlloc_v2); the members below carry
// the mapped names, and so do the calls, through the same macros.
#define STRATA_CUDA_REQUIRED_FUNCTIONS(X)                                      \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxPushCurrent)                                                          \
  X(cuCtxPopCurrent)                                                           \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncGetAttribute)                                                        \
  X(cuFuncSetAttribute)                                                        \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemAllocHost)                                                            \
  X(cuMemFreeHost)                                                             \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuLaunchKernel)                                                            \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuGraphInstantiateWithFlags)                                               \
  X(cuGraphLaunch)                                                             \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphDestroy)                                                            \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)

// Entry points the executor can do without (nullptr when the driver lacks
// them): cuFuncGetParamInfo (CUDA 12.4) checks a kernel's parameters
// against its step; cuLaunchKernelEx launches kernels with programmatic
// dependent launch (CudaSession.cpp); cuTensorMapEncodeTiled (CUDA 12.0)
// encodes the TMA tensor maps of the steps that have them.
#define STRATA_CUDA_OPTIONAL_FUNCTIONS(X)                                      \
  X(cuFuncGetParamInfo)                                                        \
  X(cuLaunchKernelEx)                                                          \
  X(cuTensorMapEncodeTiled)

/// The driver's entry points, resolved once per process.
struct Driver {
#define STRATA_CUDA_MEMBER(fn) decltype(&::fn) fn = nullptr;
  STRATA_CUDA_REQUIRED_FUNCTIONS(STRATA_CUDA_MEMBER)
  STRATA_CUDA_OPTIONAL_FUNCTIONS(STRATA_CUDA_MEMBER)
#undef STRATA_CUDA_MEMBER
  /// cuDriverGetVersion's value (e.g. 13000 for CUDA 13.0).
  int version = 0;
  /// Devices the driver sees (at least one once driver() returns).
  int deviceCount = 0;
};

/// The driver, loaded and initialized (cuInit) on first use. Throws Error
/// "strata: --target=cuda needs an NVIDIA GPU and driver: ..." when
/// libcuda.so.1 is missing or unusable or there is no device; the outcome
/// is decided once and every later call reports the same.
const Driver &driver();

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string errorText(const Driver &d, CUresult result);

/// "<where>: <call> failed with <errorText>" as an Error (an OutOfMemory
/// for CUDA_ERROR_OUT_OF_MEMORY), for a failing call; `where` names the
/// module and the step or the phase.
[[noreturn]] void fail(const Driver &d, CUresult result, const char *call,
                       const std::string &where);
inline void check(const Driver &d, CUresult result, const char *call,
                  const std::string &where) {
  if (result != CUDA_SUCCESS)
    fail(d, result, call, where);
}

/// "13.0" for 13000.
std::string versionString(int version);

/// A CUDA library opened with dlopen, as the executor opens cuBLASLt and
/// cuDNN: the file `$envVar` names, then each of `sonames` on the loader's
/// path, in $CUDA_PATH/lib64, in $CUDA_HOME/lib64 and in
/// /usr/local/cuda/lib64, the first that opens. Null when none does; `path`
/// is then empty and `tried` lists every place with dlopen's reason
/// ("\n  <place>: <why>" each).
void *openCudaLibrary(const char *envVar,
                      std::initializer_list<const char *> sonames,
                      std::string &path, std::string &tried);

} // namespace strata::rt::cuda

#endif // STRATA_RUNTIME_LIB_CUDA_CUDADRIVER_H
