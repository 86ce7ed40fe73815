//===- CudaDriver.cpp - Loading the CUDA driver at run time -----*- C++ -*-===//
//
// dlopen("libcuda.so.1") on first use; every entry point is resolved with
// cuGetProcAddress for the CUDA version of the cuda.h the runtime was built
// with, which hands back the variant whose signature that header declares
// (the driver keeps old variants for old binaries). Drivers older than CUDA
// 12 lack cuGetProcAddress_v2; there dlsym of the versioned name the header
// maps to (cuMemAlloc_v2) gives the same ABI. The library handle is never
// closed: the driver must outlive every context and module of the process.
// Tests may name another library first (testing::useCudaDriver: the fake
// driver of the failure tests).
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include "strata/Runtime/Testing.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace strata::rt::cuda {

namespace {

// "cuMemAlloc" -> "cuMemAlloc_v2": the symbol the header's declaration
// names, for dlsym.
#define STRATA_CUDA_STR2(x) #x
#define STRATA_CUDA_STR(x) STRATA_CUDA_STR2(x)

constexpr const char *kNeedsGpu =
    "strata: --target=cuda needs an NVIDIA GPU and driver: ";

struct Loaded {
  Driver driver;
  /// Empty when the driver is usable; otherwise the message to throw.
  std::string error;
};

/// The library the driver is loaded from (testing::useCudaDriver), and
/// whether it was loaded (then the choice is final).
struct DriverLibrary {
  std::mutex mutex;
  std::string path = "libcuda.so.1";
  bool loaded = false;
};

DriverLibrary &driverLibrary() {
  static DriverLibrary library;
  return library;
}

using GetProcAddressFn = decltype(&::cuGetProcAddress);

void *resolve(void *library, GetProcAddressFn getProcAddress, const char *name,
              const char *exported) {
  if (getProcAddress) {
    void *fn = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    if (getProcAddress(name, &fn, CUDA_VERSION,
                       CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                       &status) == CUDA_SUCCESS &&
        status == CU_GET_PROC_ADDRESS_SUCCESS && fn)
      return fn;
  }
  return dlsym(library, exported);
}

Loaded load() {
  Loaded out;
  Driver &d = out.driver;
  std::string path;
  {
    DriverLibrary &chosen = driverLibrary();
    std::lock_guard<std::mutex> lock(chosen.mutex);
    chosen.loaded = true;
    path = chosen.path;
  }
  // Not RTLD_GLOBAL: nothing else in the process needs to see the driver's
  // symbols through us (a CUDA runtime in the process opens it itself).
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    out.error = std::string(kNeedsGpu) + path + " was not found (" +
                (why ? why : "dlopen failed") + ")";
    return out;
  }
  auto getProcAddress = reinterpret_cast<GetProcAddressFn>(
      dlsym(library, STRATA_CUDA_STR(cuGetProcAddress)));
  std::string missing;
#define STRATA_CUDA_RESOLVE(fn)                                                \
  d.fn = reinterpret_cast<decltype(d.fn)>(                                     \
      resolve(library, getProcAddress, #fn, STRATA_CUDA_STR(fn)));
#define STRATA_CUDA_REQUIRE(fn)                                                \
  STRATA_CUDA_RESOLVE(fn)                                                      \
  if (!d.fn)                                                                   \
    missing += (missing.empty() ? "" : ", ") + std::string(#fn);
  STRATA_CUDA_REQUIRED_FUNCTIONS(STRATA_CUDA_REQUIRE)
  STRATA_CUDA_OPTIONAL_FUNCTIONS(STRATA_CUDA_RESOLVE)
#undef STRATA_CUDA_REQUIRE
#undef STRATA_CUDA_RESOLVE
  if (d.cuDriverGetVersion)
    d.cuDriverGetVersion(&d.version);
  if (!missing.empty()) {
    out.error = std::string(kNeedsGpu) + "the NVIDIA driver in " + path +
                " (CUDA " + versionString(d.version) + ") lacks " + missing +
                "; strata's runtime was built for " + "CUDA " +
                versionString(CUDA_VERSION) +
                " and needs a driver for CUDA 12 or newer";
    return out;
  }
  if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
    out.error =
        std::string(kNeedsGpu) +
        (r == CUDA_ERROR_NO_DEVICE ? "the NVIDIA driver found no GPU"
                                   : "the NVIDIA driver did not initialize") +
        " (cuInit failed with " + errorText(d, r) + ")";
    return out;
  }
  if (CUresult r = d.cuDeviceGetCount(&d.deviceCount); r != CUDA_SUCCESS) {
    out.error = std::string(kNeedsGpu) + "cuDeviceGetCount failed with " +
                errorText(d, r);
    return out;
  }
  if (d.deviceCount < 1)
    out.error = std::string(kNeedsGpu) +
                "the NVIDIA driver is installed but found no GPU";
  return out;
}

} // namespace

const Driver &driver() {
  // Decided once per process: the driver cannot appear or disappear, and
  // cuInit must not run concurrently with itself.
  static const Loaded loaded = load();
  if (!loaded.error.empty())
    throw Error(loaded.error);
  return loaded.driver;
}

std::string versionString(int version) {
  if (version <= 0)
    return "unknown";
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

std::string errorText(const Driver &d, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (d.cuGetErrorName)
    d.cuGetErrorName(result, &name);
  if (d.cuGetErrorString)
    d.cuGetErrorString(result, &text);
  std::string out =
      name ? name : "CUDA error " + std::to_string(static_cast<int>(result));
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

void fail(const Driver &d, CUresult result, const char *call,
          const std::string &where) {
  std::string message =
      where + ": " + call + " failed with " + errorText(d, result);
  // As a failed allocation on the host: the caller may retry with less.
  if (result == CUDA_ERROR_OUT_OF_MEMORY)
    throw OutOfMemory(message);
  throw Error(message);
}

void *openCudaLibrary(const char *envVar,
                      std::initializer_list<const char *> sonames,
                      std::string &path, std::string &tried) {
  std::vector<std::string> candidates;
  if (const char *file = std::getenv(envVar); file && *file)
    candidates.push_back(file);
  candidates.insert(candidates.end(), sonames.begin(), sonames.end());
  for (const char *var : {"CUDA_PATH", "CUDA_HOME"})
    if (const char *dir = std::getenv(var); dir && *dir)
      for (const char *so : sonames)
        candidates.push_back(std::string(dir) + "/lib64/" + so);
  for (const char *so : sonames)
    candidates.push_back(std::string("/usr/local/cuda/lib64/") + so);
  path.clear();
  for (const std::string &candidate : candidates) {
    if (void *library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      path = candidate;
      return library;
    }
    const char *why = dlerror();
    tried += "\n  " + candidate + ": " + (why ? why : "dlopen failed");
  }
  return nullptr;
}

} // namespace strata::rt::cuda

namespace strata::rt {

void testing::useCudaDriver(const char *path) {
  std::string library = path ? path : "libcuda.so.1";
  cuda::DriverLibrary &chosen = cuda::driverLibrary();
  std::lock_guard<std::mutex> lock(chosen.mutex);
  if (chosen.loaded && library != chosen.path)
    throw Error("strata::rt::testing::useCudaDriver(\"" + library +
                "\"): this process loaded its CUDA driver from " + chosen.path +
                " already (the driver is loaded once per process, at the "
                "first CUDA use: choose it before)");
  chosen.path = library;
}

} // namespace strata::rt
