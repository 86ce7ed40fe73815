//===- CudaExecutor.h - The device side of a CUDA session -------*- C++ -*-===//
//
// Session (Session.cpp) hands modules whose target is "cuda" to a
// CudaExecutor and keeps only the host side: bound inputs and the outputs of
// the last run. This header does not need cuda.h, so Session.cpp compiles
// the same whether or not the CUDA executor is built: CudaSession.cpp
// implements createCudaExecutor when it is, CudaUnavailable.cpp (which says
// why it is not there) when it is not.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_LIB_CUDA_CUDAEXECUTOR_H
#define STRATA_RUNTIME_LIB_CUDA_CUDAEXECUTOR_H

#include "strata/Runtime/Cuda.h"
#include "strata/Runtime/Runtime.h"

#include <memory>
#include <vector>

namespace strata::rt::detail {

class CudaExecutor {
public:
  virtual ~CudaExecutor();
  /// One run: copies `inputs` (host tensors, one per input signature, shapes
  /// already checked by Session::setInput) to the device, runs the steps and
  /// replaces `outputs` with the module's outputs; an output whose entry of
  /// `targets` is not null is copied there instead (the caller's memory,
  /// Session::setOutputView) and its tensor left empty. An input whose
  /// entry of `deviceInputs` is not 0 is copied from that device address
  /// instead of its tensor (Session::setInputDevice), and an output whose
  /// entry of `deviceTargets` is not 0 to that device address
  /// (Session::setOutputDevice), device to device. With `stepTimes`, each
  /// step's seconds are added to it.
  virtual void run(const std::vector<Tensor> &inputs,
                   std::vector<Tensor> &outputs,
                   const std::vector<void *> &targets,
                   const std::vector<uint64_t> &deviceInputs,
                   const std::vector<uint64_t> &deviceTargets,
                   std::vector<double> *stepTimes) = 0;
  virtual CudaSessionInfo info() const = 0;
  /// cudaTimeRuns (Cuda.h): `runs` runs of the steps alone, milliseconds
  /// each.
  virtual std::vector<double> timeRuns(int runs) = 0;
};

/// The executor for `module` (whose target is "cuda"), with its GPU code
/// loaded, every kernel resolved and its device memory allocated; throws
/// Error naming the module and the step, or the reason no GPU can be used.
std::unique_ptr<CudaExecutor> createCudaExecutor(const Module &module,
                                                 const SessionOptions &options);

} // namespace strata::rt::detail

#endif // STRATA_RUNTIME_LIB_CUDA_CUDAEXECUTOR_H
