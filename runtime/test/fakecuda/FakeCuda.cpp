//===- FakeCuda.cpp - A CUDA driver for tests without a GPU -----*- C++ -*-===//
//
// A shared library that stands in for libcuda.so.1 in the CUDA executor's
// failure tests (test/FakeCudaTest.cpp; docs/testing.md, "Failure
// injection"), so that they run in CI, which has no GPU. It exports the
// driver entry points the runtime resolves (lib/cuda/CudaDriver.h), under
// the versioned names cuda.h maps them to (cuMemAlloc_v2) and through
// cuGetProcAddress_v2, with the signatures of the cuda.h it is compiled
// with. One device of compute capability 9.0, whose memory is the host's:
// allocations are malloc, copies memcpy, streams synchronous, and a kernel
// launch only counts the kernel (outputs keep the bytes they had). Module
// images are not read: any image loads, and every name is a kernel.
// cuFuncGetParamInfo is missing (as in drivers before 12.4), since the fake
// cannot know a kernel's parameters.
//
// It checks what a driver would refuse: calls before cuInit, context work
// without a current context, handles and device ranges that are not (or no
// longer) alive, stream synchronization during a capture. The functions of
// FakeCuda.h arm faults and report what is alive. Every call takes one
// process-wide lock.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <cuda.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

// The opaque handle types of cuda.h, defined here.
struct CUctx_st {
  int device = 0;
  long retains = 0;
};
struct CUfunc_st;
struct CUmod_st {
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;
};
struct CUfunc_st {
  CUmod_st *module = nullptr;
  int maxDynamicShared = 48 * 1024;
};
struct CUgraph_st {
  std::vector<CUfunction> kernels;
  /// A launch into the capture failed: ending it fails (as CUDA does).
  bool invalidated = false;
};
struct CUgraphExec_st {
  std::vector<CUfunction> kernels;
};
struct CUstream_st {
  /// The graph being captured, or nullptr.
  std::unique_ptr<CUgraph_st> capture;
};
struct CUevent_st {
  bool recorded = false;
  std::chrono::steady_clock::time_point at;
};

namespace {

constexpr int kMaxDevices = 8;
constexpr int kMaxOptInShared = 227 * 1024;

struct Fault {
  long after = 0;
  CUresult error = CUDA_SUCCESS;
  bool sticky = false;
};

struct State {
  std::mutex mutex;
  bool initialized = false;
  int deviceCount = 1;
  std::map<std::string, Fault> faults;
  std::map<std::string, long> calls;
  /// The context's sticky error (CUDA_SUCCESS: none).
  CUresult sticky = CUDA_SUCCESS;
  long kernelsRun = 0;
  CUctx_st contexts[kMaxDevices];
  /// Device allocations: base address -> bytes.
  std::map<uintptr_t, size_t> device;
  std::set<void *> host;
  std::set<CUstream> streams;
  std::set<CUmodule> modules;
  std::set<CUfunction> functions;
  std::set<CUevent> events;
  std::set<CUgraph> graphs;
  std::set<CUgraphExec> execs;
};

/// Never destroyed: the runtime may call in while the process exits.
State &state() {
  static State *s = new State;
  return *s;
}

/// The calling thread's context stack (cuCtxPushCurrent).
thread_local std::vector<CUctx_st *> current;

/// Whether an entry point works in a context: those fail without a current
/// context, and with the context's sticky error once there is one.
bool needsContext(const std::string &name);
bool knownEntryPoint(const std::string &name);

bool worksBeforeInit(const char *name) {
  for (const char *early :
       {"cuInit", "cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString"})
    if (std::strcmp(name, early) == 0)
      return true;
  return false;
}

/// One driver call: takes the lock, counts the call, fires an armed fault,
/// and checks initialization and the context.
class Call {
public:
  Call(const char *name) : s(state()), lock_(s.mutex) {
    ++s.calls[name];
    if (!s.initialized && !worksBeforeInit(name)) {
      result_ = CUDA_ERROR_NOT_INITIALIZED;
      return;
    }
    if (auto fault = s.faults.find(name); fault != s.faults.end()) {
      if (fault->second.after > 0) {
        --fault->second.after;
      } else {
        result_ = fault->second.error;
        injected_ = true;
        if (fault->second.sticky)
          s.sticky = result_;
        s.faults.erase(fault);
        return;
      }
    }
    if (needsContext(name)) {
      if (s.sticky != CUDA_SUCCESS)
        result_ = s.sticky;
      else if (current.empty() || current.back()->retains == 0)
        result_ = CUDA_ERROR_INVALID_CONTEXT;
    }
  }
  bool failed() const { return result_ != CUDA_SUCCESS; }
  CUresult result() const { return result_; }
  /// Whether the failure is an injected fault.
  bool injected() const { return injected_; }

  State &s;

private:
  std::unique_lock<std::mutex> lock_;
  CUresult result_ = CUDA_SUCCESS;
  bool injected_ = false;
};

/// Whether [address, address + bytes) lies in one live device allocation.
bool deviceRange(const State &s, CUdeviceptr address, size_t bytes) {
  auto a = static_cast<uintptr_t>(address);
  auto it = s.device.upper_bound(a);
  if (it == s.device.begin())
    return false;
  --it;
  return a >= it->first && a - it->first <= it->second &&
         bytes <= it->second - (a - it->first);
}

bool liveStream(const State &s, CUstream stream) {
  return !stream || s.streams.count(stream);
}

/// Runs or captures one kernel on `stream`.
CUresult launchOn(State &s, CUfunction f, CUstream stream, unsigned gridX,
                  unsigned gridY, unsigned gridZ, unsigned blockX,
                  unsigned blockY, unsigned blockZ, unsigned shared) {
  if (!s.functions.count(f) || !liveStream(s, stream))
    return CUDA_ERROR_INVALID_HANDLE;
  if (!gridX || !gridY || !gridZ || !blockX || !blockY || !blockZ ||
      uint64_t(blockX) * blockY * blockZ > 1024 ||
      shared > unsigned(f->maxDynamicShared))
    return CUDA_ERROR_INVALID_VALUE;
  if (stream && stream->capture)
    stream->capture->kernels.push_back(f);
  else
    ++s.kernelsRun;
  return CUDA_SUCCESS;
}

/// A failed launch into a stream under capture invalidates the capture.
void invalidateCapture(State &s, CUstream stream) {
  if (stream && s.streams.count(stream) && stream->capture)
    stream->capture->invalidated = true;
}

struct ErrorText {
  CUresult code;
  const char *name;
  const char *text;
};

const ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
     "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation cannot be performed in the present state"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED",
     "unspecified launch failure"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
     "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText *findError(CUresult code) {
  for (const ErrorText &e : kErrors)
    if (e.code == code)
      return &e;
  return nullptr;
}

} // namespace

extern "C" {

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr) {
  Call c("cuGetErrorName");
  if (c.failed())
    return c.result();
  const ErrorText *e = findError(error);
  if (!pStr)
    return CUDA_ERROR_INVALID_VALUE;
  *pStr = e ? e->name : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr) {
  Call c("cuGetErrorString");
  if (c.failed())
    return c.result();
  const ErrorText *e = findError(error);
  if (!pStr)
    return CUDA_ERROR_INVALID_VALUE;
  *pStr = e ? e->text : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuInit(unsigned int Flags) {
  Call c("cuInit");
  if (c.failed())
    return c.result();
  if (Flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  c.s.initialized = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion) {
  Call c("cuDriverGetVersion");
  if (c.failed())
    return c.result();
  if (!driverVersion)
    return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
  Call c("cuDeviceGetCount");
  if (c.failed())
    return c.result();
  if (!count)
    return CUDA_ERROR_INVALID_VALUE;
  *count = c.s.deviceCount;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  Call c("cuDeviceGet");
  if (c.failed())
    return c.result();
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  if (ordinal < 0 || ordinal >= c.s.deviceCount)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
  Call c("cuDeviceGetName");
  if (c.failed())
    return c.result();
  if (dev < 0 || dev >= c.s.deviceCount)
    return CUDA_ERROR_INVALID_DEVICE;
  if (!name || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, size_t(len), "Fake CUDA GPU %d", dev);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib,
                                      CUdevice dev) {
  Call c("cuDeviceGetAttribute");
  if (c.failed())
    return c.result();
  if (dev < 0 || dev >= c.s.deviceCount)
    return CUDA_ERROR_INVALID_DEVICE;
  if (!pi)
    return CUDA_ERROR_INVALID_VALUE;
  switch (attrib) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *pi = 9;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *pi = 0;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
    *pi = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    *pi = 64;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
    *pi = 2147483647;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
    *pi = 65535;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *pi = kMaxOptInShared;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *pi = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    *pi = 32;
    break;
  default:
    *pi = 0;
    break;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  Call c("cuDevicePrimaryCtxRetain");
  if (c.failed())
    return c.result();
  if (dev < 0 || dev >= c.s.deviceCount || dev >= kMaxDevices)
    return CUDA_ERROR_INVALID_DEVICE;
  if (!pctx)
    return CUDA_ERROR_INVALID_VALUE;
  CUctx_st &ctx = c.s.contexts[dev];
  ctx.device = dev;
  ++ctx.retains;
  *pctx = &ctx;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
  Call c("cuDevicePrimaryCtxRelease");
  if (c.failed())
    return c.result();
  if (dev < 0 || dev >= c.s.deviceCount || dev >= kMaxDevices)
    return CUDA_ERROR_INVALID_DEVICE;
  if (c.s.contexts[dev].retains == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  --c.s.contexts[dev].retains;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {
  Call c("cuCtxPushCurrent");
  if (c.failed())
    return c.result();
  bool known = false;
  for (CUctx_st &own : c.s.contexts)
    known |= ctx == &own;
  if (!known || ctx->retains == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  current.push_back(ctx);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx) {
  Call c("cuCtxPopCurrent");
  if (c.failed())
    return c.result();
  if (current.empty())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx)
    *pctx = current.back();
  current.pop_back();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
  Call c("cuModuleLoadData");
  if (c.failed())
    return c.result();
  if (!module || !image)
    return CUDA_ERROR_INVALID_VALUE;
  *module = new CUmod_st;
  c.s.modules.insert(*module);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
                                    unsigned int numOptions,
                                    CUjit_option *options,
                                    void **optionValues) {
  Call c("cuModuleLoadDataEx");
  if (c.failed()) {
    if (c.injected()) {
      // What ptxas would leave in the error log.
      char *log = nullptr;
      size_t size = 0;
      for (unsigned i = 0; options && optionValues && i < numOptions; ++i) {
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
          log = static_cast<char *>(optionValues[i]);
        else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
          size = reinterpret_cast<uintptr_t>(optionValues[i]);
      }
      if (log && size)
        std::snprintf(log, size,
                      "fake ptxas: error: the fault injected into "
                      "cuModuleLoadDataEx");
    }
    return c.result();
  }
  if (!module || !image || (numOptions && (!options || !optionValues)))
    return CUDA_ERROR_INVALID_VALUE;
  *module = new CUmod_st;
  c.s.modules.insert(*module);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  Call c("cuModuleUnload");
  if (c.failed())
    return c.result();
  if (!c.s.modules.erase(hmod))
    return CUDA_ERROR_INVALID_HANDLE;
  for (auto &f : hmod->functions)
    c.s.functions.erase(f.second.get());
  delete hmod;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
                                     const char *name) {
  Call c("cuModuleGetFunction");
  if (c.failed())
    return c.result();
  if (!hfunc || !name)
    return CUDA_ERROR_INVALID_VALUE;
  if (!c.s.modules.count(hmod))
    return CUDA_ERROR_INVALID_HANDLE;
  std::unique_ptr<CUfunc_st> &f = hmod->functions[name];
  if (!f) {
    f = std::make_unique<CUfunc_st>();
    f->module = hmod;
    c.s.functions.insert(f.get());
  }
  *hfunc = f.get();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib,
                                    CUfunction hfunc) {
  Call c("cuFuncGetAttribute");
  if (c.failed())
    return c.result();
  if (!pi)
    return CUDA_ERROR_INVALID_VALUE;
  if (!c.s.functions.count(hfunc))
    return CUDA_ERROR_INVALID_HANDLE;
  switch (attrib) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *pi = 1024;
    break;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    *pi = hfunc->maxDynamicShared;
    break;
  default:
    *pi = 0;
    break;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc,
                                    CUfunction_attribute attrib, int value) {
  Call c("cuFuncSetAttribute");
  if (c.failed())
    return c.result();
  if (!c.s.functions.count(hfunc))
    return CUDA_ERROR_INVALID_HANDLE;
  if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (value < 0 || value > kMaxOptInShared)
      return CUDA_ERROR_INVALID_VALUE;
    hfunc->maxDynamicShared = value;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize) {
  Call c("cuMemAlloc");
  if (c.failed())
    return c.result();
  if (!dptr || !bytesize)
    return CUDA_ERROR_INVALID_VALUE;
  // 256-byte aligned, as the driver's.
  size_t bytes = (bytesize + 255) / 256 * 256;
  void *p = std::aligned_alloc(256, bytes);
  if (!p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  std::memset(p, 0, bytes); // Not the driver's promise, but deterministic.
  c.s.device[reinterpret_cast<uintptr_t>(p)] = bytesize;
  *dptr = reinterpret_cast<uintptr_t>(p);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {
  Call c("cuMemFree");
  if (c.failed())
    return c.result();
  auto it = c.s.device.find(static_cast<uintptr_t>(dptr));
  if (it == c.s.device.end())
    return CUDA_ERROR_INVALID_VALUE;
  std::free(reinterpret_cast<void *>(it->first));
  c.s.device.erase(it);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytesize) {
  Call c("cuMemAllocHost");
  if (c.failed())
    return c.result();
  if (!pp || !bytesize)
    return CUDA_ERROR_INVALID_VALUE;
  void *p = std::aligned_alloc(64, (bytesize + 63) / 64 * 64);
  if (!p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  c.s.host.insert(p);
  *pp = p;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFreeHost(void *p) {
  Call c("cuMemFreeHost");
  if (c.failed())
    return c.result();
  if (!c.s.host.erase(p))
    return CUDA_ERROR_INVALID_VALUE;
  std::free(p);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost,
                                   size_t ByteCount, CUstream hStream) {
  Call c("cuMemcpyHtoDAsync");
  if (c.failed())
    return c.result();
  if (!liveStream(c.s, hStream))
    return CUDA_ERROR_INVALID_HANDLE;
  if (!ByteCount)
    return CUDA_SUCCESS;
  if (!srcHost || !deviceRange(c.s, dstDevice, ByteCount))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void *>(dstDevice), srcHost, ByteCount);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr srcDevice,
                                   size_t ByteCount, CUstream hStream) {
  Call c("cuMemcpyDtoHAsync");
  if (c.failed())
    return c.result();
  if (!liveStream(c.s, hStream))
    return CUDA_ERROR_INVALID_HANDLE;
  if (!ByteCount)
    return CUDA_SUCCESS;
  if (!dstHost || !deviceRange(c.s, srcDevice, ByteCount))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(dstHost, reinterpret_cast<const void *>(srcDevice), ByteCount);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                   size_t ByteCount, CUstream hStream) {
  Call c("cuMemcpyDtoDAsync");
  if (c.failed())
    return c.result();
  if (!liveStream(c.s, hStream))
    return CUDA_ERROR_INVALID_HANDLE;
  if (!ByteCount)
    return CUDA_SUCCESS;
  if (!deviceRange(c.s, dstDevice, ByteCount) ||
      !deviceRange(c.s, srcDevice, ByteCount))
    return CUDA_ERROR_INVALID_VALUE;
  std::memmove(reinterpret_cast<void *>(dstDevice),
               reinterpret_cast<const void *>(srcDevice), ByteCount);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags) {
  Call c("cuStreamCreate");
  if (c.failed())
    return c.result();
  if (!phStream || (Flags & ~unsigned(CU_STREAM_NON_BLOCKING)))
    return CUDA_ERROR_INVALID_VALUE;
  *phStream = new CUstream_st;
  c.s.streams.insert(*phStream);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream) {
  Call c("cuStreamDestroy");
  if (c.failed())
    return c.result();
  if (!c.s.streams.erase(hStream))
    return CUDA_ERROR_INVALID_HANDLE;
  delete hStream;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  Call c("cuStreamSynchronize");
  if (c.failed())
    return c.result();
  if (!liveStream(c.s, hStream))
    return CUDA_ERROR_INVALID_HANDLE;
  if (hStream && hStream->capture)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX,
                                unsigned int gridDimY, unsigned int gridDimZ,
                                unsigned int blockDimX, unsigned int blockDimY,
                                unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream,
                                void **kernelParams, void **extra) {
  Call c("cuLaunchKernel");
  if (c.failed()) {
    invalidateCapture(c.s, hStream);
    return c.result();
  }
  if (extra)
    return CUDA_ERROR_INVALID_VALUE;
  (void)kernelParams;
  return launchOn(c.s, f, hStream, gridDimX, gridDimY, gridDimZ, blockDimX,
                  blockDimY, blockDimZ, sharedMemBytes);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                  void **kernelParams, void **extra) {
  Call c("cuLaunchKernelEx");
  if (c.failed()) {
    if (config)
      invalidateCapture(c.s, config->hStream);
    return c.result();
  }
  if (!config || extra || (config->numAttrs && !config->attrs))
    return CUDA_ERROR_INVALID_VALUE;
  (void)kernelParams;
  return launchOn(c.s, f, config->hStream, config->gridDimX, config->gridDimY,
                  config->gridDimZ, config->blockDimX, config->blockDimY,
                  config->blockDimZ, config->sharedMemBytes);
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream,
                                      CUstreamCaptureMode mode) {
  Call c("cuStreamBeginCapture");
  if (c.failed())
    return c.result();
  (void)mode;
  if (!hStream)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (!c.s.streams.count(hStream))
    return CUDA_ERROR_INVALID_HANDLE;
  if (hStream->capture)
    return CUDA_ERROR_ILLEGAL_STATE;
  hStream->capture = std::make_unique<CUgraph_st>();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) {
  Call c("cuStreamEndCapture");
  if (phGraph)
    *phGraph = nullptr;
  if (!hStream || !c.s.streams.count(hStream))
    return c.failed() ? c.result() : CUDA_ERROR_INVALID_HANDLE;
  // The capture ends whatever the outcome, as in CUDA.
  std::unique_ptr<CUgraph_st> graph = std::move(hStream->capture);
  if (c.failed())
    return c.result();
  if (!graph)
    return CUDA_ERROR_ILLEGAL_STATE;
  if (graph->invalidated)
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  if (!phGraph)
    return CUDA_ERROR_INVALID_VALUE;
  *phGraph = graph.release();
  c.s.graphs.insert(*phGraph);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec,
                                             CUgraph hGraph,
                                             unsigned long long flags) {
  Call c("cuGraphInstantiateWithFlags");
  if (c.failed())
    return c.result();
  (void)flags;
  if (!phGraphExec)
    return CUDA_ERROR_INVALID_VALUE;
  if (!c.s.graphs.count(hGraph))
    return CUDA_ERROR_INVALID_HANDLE;
  auto *exec = new CUgraphExec_st;
  exec->kernels = hGraph->kernels;
  c.s.execs.insert(exec);
  *phGraphExec = exec;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  Call c("cuGraphLaunch");
  if (c.failed())
    return c.result();
  if (!c.s.execs.count(hGraphExec) || !liveStream(c.s, hStream))
    return CUDA_ERROR_INVALID_HANDLE;
  for (CUfunction f : hGraphExec->kernels)
    if (!c.s.functions.count(f))
      return CUDA_ERROR_INVALID_HANDLE; // its module was unloaded
  c.s.kernelsRun += long(hGraphExec->kernels.size());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec) {
  Call c("cuGraphExecDestroy");
  if (c.failed())
    return c.result();
  if (!c.s.execs.erase(hGraphExec))
    return CUDA_ERROR_INVALID_HANDLE;
  delete hGraphExec;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph) {
  Call c("cuGraphDestroy");
  if (c.failed())
    return c.result();
  if (!c.s.graphs.erase(hGraph))
    return CUDA_ERROR_INVALID_HANDLE;
  delete hGraph;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags) {
  Call c("cuEventCreate");
  if (c.failed())
    return c.result();
  (void)Flags;
  if (!phEvent)
    return CUDA_ERROR_INVALID_VALUE;
  *phEvent = new CUevent_st;
  c.s.events.insert(*phEvent);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent hEvent) {
  Call c("cuEventDestroy");
  if (c.failed())
    return c.result();
  if (!c.s.events.erase(hEvent))
    return CUDA_ERROR_INVALID_HANDLE;
  delete hEvent;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
  Call c("cuEventRecord");
  if (c.failed())
    return c.result();
  if (!c.s.events.count(hEvent) || !liveStream(c.s, hStream))
    return CUDA_ERROR_INVALID_HANDLE;
  hEvent->recorded = true;
  hEvent->at = std::chrono::steady_clock::now();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
  Call c("cuEventSynchronize");
  if (c.failed())
    return c.result();
  if (!c.s.events.count(hEvent))
    return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart,
                                    CUevent hEnd) {
  Call c("cuEventElapsedTime");
  if (c.failed())
    return c.result();
  if (!pMilliseconds)
    return CUDA_ERROR_INVALID_VALUE;
  if (!c.s.events.count(hStart) || !c.s.events.count(hEnd) ||
      !hStart->recorded || !hEnd->recorded)
    return CUDA_ERROR_INVALID_HANDLE;
  *pMilliseconds =
      std::chrono::duration<float, std::milli>(hEnd->at - hStart->at).count();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuTensorMapEncodeTiled(
    CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
    cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
    const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill) {
  Call c("cuTensorMapEncodeTiled");
  if (c.failed())
    return c.result();
  (void)tensorDataType, (void)interleave, (void)swizzle, (void)l2Promotion,
      (void)oobFill;
  if (!tensorMap || tensorRank < 1 || tensorRank > 5 || !globalDim ||
      (tensorRank > 1 && !globalStrides) || !boxDim || !elementStrides)
    return CUDA_ERROR_INVALID_VALUE;
  auto address = reinterpret_cast<uintptr_t>(globalAddress);
  if (address % 16 != 0 || !deviceRange(c.s, address, 1))
    return CUDA_ERROR_INVALID_VALUE;
  for (cuuint32_t i = 0; i < tensorRank; ++i)
    if (!globalDim[i] || !boxDim[i] || boxDim[i] > 256 ||
        (i + 1 < tensorRank && globalStrides[i] % 16 != 0))
      return CUDA_ERROR_INVALID_VALUE;
  // The map holds the address; what else it holds is the driver's.
  std::memset(tensorMap, 0, sizeof(*tensorMap));
  tensorMap->opaque[0] = address;
  return CUDA_SUCCESS;
}

} // extern "C"

namespace {

struct EntryPoint {
  const char *name;
  void *function;
  bool context;
};

// Named as the runtime asks for them; the address is that of the variant
// cuda.h declares (cuMemAlloc -> cuMemAlloc_v2).
#define FAKE_ENTRY(fn, context)                                                \
  { #fn, reinterpret_cast < void *>(&fn), context }
const EntryPoint kEntryPoints[] = {
    FAKE_ENTRY(cuGetErrorName, false),
    FAKE_ENTRY(cuGetErrorString, false),
    FAKE_ENTRY(cuInit, false),
    FAKE_ENTRY(cuDriverGetVersion, false),
    FAKE_ENTRY(cuDeviceGetCount, false),
    FAKE_ENTRY(cuDeviceGet, false),
    FAKE_ENTRY(cuDeviceGetName, false),
    FAKE_ENTRY(cuDeviceGetAttribute, false),
    FAKE_ENTRY(cuDevicePrimaryCtxRetain, false),
    FAKE_ENTRY(cuDevicePrimaryCtxRelease, false),
    FAKE_ENTRY(cuCtxPushCurrent, false),
    FAKE_ENTRY(cuCtxPopCurrent, false),
    FAKE_ENTRY(cuModuleLoadData, true),
    FAKE_ENTRY(cuModuleLoadDataEx, true),
    FAKE_ENTRY(cuModuleUnload, true),
    FAKE_ENTRY(cuModuleGetFunction, true),
    FAKE_ENTRY(cuFuncGetAttribute, true),
    FAKE_ENTRY(cuFuncSetAttribute, true),
    FAKE_ENTRY(cuMemAlloc, true),
    FAKE_ENTRY(cuMemFree, true),
    FAKE_ENTRY(cuMemAllocHost, true),
    FAKE_ENTRY(cuMemFreeHost, true),
    FAKE_ENTRY(cuMemcpyHtoDAsync, true),
    FAKE_ENTRY(cuMemcpyDtoHAsync, true),
    FAKE_ENTRY(cuMemcpyDtoDAsync, true),
    FAKE_ENTRY(cuStreamCreate, true),
    FAKE_ENTRY(cuStreamDestroy, true),
    FAKE_ENTRY(cuStreamSynchronize, true),
    FAKE_ENTRY(cuLaunchKernel, true),
    FAKE_ENTRY(cuLaunchKernelEx, true),
    FAKE_ENTRY(cuStreamBeginCapture, true),
    FAKE_ENTRY(cuStreamEndCapture, true),
    FAKE_ENTRY(cuGraphInstantiateWithFlags, true),
    FAKE_ENTRY(cuGraphLaunch, true),
    FAKE_ENTRY(cuGraphExecDestroy, true),
    FAKE_ENTRY(cuGraphDestroy, true),
    FAKE_ENTRY(cuEventCreate, true),
    FAKE_ENTRY(cuEventDestroy, true),
    FAKE_ENTRY(cuEventRecord, true),
    FAKE_ENTRY(cuEventSynchronize, true),
    FAKE_ENTRY(cuEventElapsedTime, true),
    FAKE_ENTRY(cuTensorMapEncodeTiled, false),
};
#undef FAKE_ENTRY

const EntryPoint *findEntryPoint(const std::string &name) {
  for (const EntryPoint &e : kEntryPoints)
    if (name == e.name)
      return &e;
  return nullptr;
}

bool needsContext(const std::string &name) {
  const EntryPoint *e = findEntryPoint(name);
  return e && e->context;
}

bool knownEntryPoint(const std::string &name) {
  return findEntryPoint(name) != nullptr;
}

} // namespace

extern "C" {

// cuFuncGetParamInfo (whose answers would need the kernels' real
// parameters) and everything else are "not found", as in an older driver.
CUresult CUDAAPI cuGetProcAddress(
    const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
    CUdriverProcAddressQueryResult *symbolStatus) {
  (void)cudaVersion;
  (void)flags;
  if (!symbol || !pfn)
    return CUDA_ERROR_INVALID_VALUE;
  const EntryPoint *e = findEntryPoint(symbol);
  *pfn = e ? e->function : nullptr;
  if (symbolStatus)
    *symbolStatus =
        e ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return e ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

int fakecuda_fail(const char *entryPoint, long after, int error, int sticky) {
  if (!entryPoint || !knownEntryPoint(entryPoint) || after < 0)
    return -1;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.faults[entryPoint] = {after, static_cast<CUresult>(error), sticky != 0};
  return 0;
}

int fakecuda_pending(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return static_cast<int>(s.faults.size());
}

void fakecuda_reset(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.faults.clear();
  s.calls.clear();
  s.sticky = CUDA_SUCCESS;
  s.kernelsRun = 0;
  for (auto &d : s.device)
    std::free(reinterpret_cast<void *>(d.first));
  s.device.clear();
  for (void *p : s.host)
    std::free(p);
  s.host.clear();
  for (CUstream stream : s.streams)
    delete stream;
  s.streams.clear();
  for (CUmodule m : s.modules)
    delete m;
  s.modules.clear();
  s.functions.clear();
  for (CUevent e : s.events)
    delete e;
  s.events.clear();
  for (CUgraph g : s.graphs)
    delete g;
  s.graphs.clear();
  for (CUgraphExec e : s.execs)
    delete e;
  s.execs.clear();
}

long fakecuda_calls(const char *entryPoint) {
  if (!entryPoint || !knownEntryPoint(entryPoint))
    return -1;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.calls.find(entryPoint);
  return it == s.calls.end() ? 0 : it->second;
}

long fakecuda_live(const char *what) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::string w = what ? what : "";
  if (w == "device_memory")
    return long(s.device.size());
  if (w == "host_memory")
    return long(s.host.size());
  if (w == "streams")
    return long(s.streams.size());
  if (w == "modules")
    return long(s.modules.size());
  if (w == "events")
    return long(s.events.size());
  if (w == "graphs")
    return long(s.graphs.size());
  if (w == "graph_execs")
    return long(s.execs.size());
  if (w == "context_retains") {
    long retains = 0;
    for (const CUctx_st &ctx : s.contexts)
      retains += ctx.retains;
    return retains;
  }
  return -1;
}

long fakecuda_kernels_run(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.kernelsRun;
}

int fakecuda_context_depth(void) { return static_cast<int>(current.size()); }

void fakecuda_set_device_count(int count) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.deviceCount = count < 0 ? 0 : count > kMaxDevices ? kMaxDevices : count;
}

} // extern "C"
