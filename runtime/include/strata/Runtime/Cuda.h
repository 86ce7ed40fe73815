//===- Cuda.h - The strata runtime's CUDA executor --------------*- C++ -*-===//
//
// Modules whose target is "cuda" run through the ordinary Session API
// (Runtime.h): a session of such a module loads the module's GPU code into
// the device's primary context, keeps the arena and the constants on the
// device and copies inputs and outputs at the run boundaries. This header
// adds what only the CUDA side has: whether it can run here at all, and
// what a session did (which image it loaded, graph captures and replays).
//
// The runtime never links libcuda: the driver is opened with dlopen on first
// use, so the library loads (and runs CPU modules) on machines without a GPU.
// Design and ABI: docs/runtime.md, "The CUDA executor".
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_CUDA_H
#define STRATA_RUNTIME_CUDA_H

#include "strata/Runtime/Runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata::rt {

/// Whether this runtime was built with the CUDA executor (it needs the CUDA
/// toolkit's cuda.h at configure time, nothing at link time).
bool cudaBackendBuilt();

/// Whether a CUDA module can run here: the executor is built, libcuda.so.1
/// loads, the driver initializes and has at least one device. When it
/// cannot, `why` (if given) receives the message a Session would throw.
bool cudaAvailable(std::string *why = nullptr);

/// What a CUDA session has done so far.
struct CudaSessionInfo {
  /// The device's name and architecture ("NVIDIA H200", "sm_90").
  std::string deviceName;
  std::string deviceArch;
  /// "cubin" when the module's cubin was loaded, "ptx" when the driver
  /// JIT-compiled its PTX.
  std::string loadedImage;
  /// Why the cubin was not used (empty when it was).
  std::string cubinRejected;
  /// Runs that launched the captured CUDA graph, runs that launched the
  /// kernels one by one, and graphs captured.
  uint64_t graphRuns = 0;
  uint64_t directRuns = 0;
  uint64_t graphCaptures = 0;
  /// Why graphs are not used: the capture failure, or empty.
  std::string graphFallback;
  /// Kernel steps launched with programmatic dependent launch (each may
  /// start while the kernel before it finishes, and waits for it at its
  /// entry; docs/runtime.md): those whose kernel waits so, on a GPU of
  /// sm_90 or later, unless STRATA_CUDA_PDL=0.
  size_t programmaticLaunches = 0;
  /// Kernel steps launched as the portable PTX's own kernel, grid and block
  /// (the step's ptx_kernel and ptx_launch, taken when the PTX was loaded).
  size_t ownPtxLaunches = 0;
  /// What each library step computes and how, in plan order: "step 88
  /// (MatMul_3): cuBLASLt bf16 8192x768x50257, as 10 products: rows of
  /// 100514 bytes; parts 8192x768x7 (0.019 ms), ..." (a product whose output
  /// rows are not 16-byte aligned runs in parts, each timed when the session
  /// chose its algorithm; docs/gpu.md, "Transposed weights"); "step 3
  /// (Conv_0): cuDNN bf16 conv 32x56x56x64 -> 32x56x56x64, 3x3 stride 1 pad
  /// 1, groups 1, +bias+relu; engine 12 (plan 2 of 8, 0.041 ms)" for a
  /// cuDNN convolution (docs/runtime.md, "cuDNN convolutions").
  std::vector<std::string> libraryCalls;
  /// The cuBLASLt algorithm of every cuBLASLt call, timed, pinned or the
  /// heuristic's, as the text that SessionOptions::Cuda::libraryChoices
  /// reads back (docs/runtime.md, "Pinning cuBLASLt's choices"); empty
  /// without cuBLASLt steps (cuDNN's plans are not in it).
  std::string libraryChoices;
};

/// The CUDA side of `session`; throws Error when its module is not a CUDA
/// module.
CudaSessionInfo cudaSessionInfo(const Session &session);

/// The device time of `runs` more runs of `session`'s steps, in
/// milliseconds each: what Session::run launches (its CUDA graph of every
/// kernel and library call, or the steps one by one when graphs are off),
/// each between two CUDA events, the runs enqueued back to back and
/// synchronized once, on the inputs of its last run and without the copies
/// between host and device around it. For benchmarks
/// (tools/strata-bench-gpu), timed as the peers' device work is. Throws
/// Error when the module is not a CUDA module or the session has not run.
std::vector<double> cudaTimeRuns(Session &session, int runs);

} // namespace strata::rt

#endif // STRATA_RUNTIME_CUDA_H
