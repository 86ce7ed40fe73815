//===- CudaUnavailable.cpp - A runtime built without CUDA -------*- C++ -*-===//
//
// Built instead of CudaDriver.cpp and CudaSession.cpp when CMake found no
// cuda.h: the runtime then runs CPU modules only, and a session of a CUDA
// module is refused with the reason.
//
//===----------------------------------------------------------------------===//

#include "CudaExecutor.h"
#include "strata/Runtime/Testing.h"

namespace strata::rt {

namespace {
const char *const kNotBuilt =
    "this strata runtime was built without its CUDA executor (CMake found no "
    "cuda.h from the CUDA toolkit when it was configured)";
} // namespace

bool cudaBackendBuilt() { return false; }

bool cudaAvailable(std::string *why) {
  if (why)
    *why = std::string("strata: ") + kNotBuilt;
  return false;
}

std::unique_ptr<detail::CudaExecutor>
detail::createCudaExecutor(const Module &module, const SessionOptions &) {
  throw Error("strata module '" + module.name() + "' targets 'cuda', but " +
              kNotBuilt);
}

void testing::useCudaDriver(const char *path) {
  throw Error(std::string("strata::rt::testing::useCudaDriver(\"") +
              (path ? path : "libcuda.so.1") + "\"): " + kNotBuilt);
}

} // namespace strata::rt
