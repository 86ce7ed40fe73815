//===- Testing.h - Fault injection for the runtime's tests ------*- C++ -*-===//
//
// Test-only hooks into the runtime (docs/testing.md, "Failure injection").
// They are compiled into the library, where an unarmed hook costs one relaxed
// atomic load per allocation, and are not installed with the public headers:
// programs that embed the runtime have no use for them.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_TESTING_H
#define STRATA_RUNTIME_TESTING_H

#include <cstdint>

namespace strata::rt::testing {

/// Arms one allocation failure: the next `n` allocations the runtime makes
/// succeed, the one after fails as if the machine's memory were exhausted,
/// and the hook disarms itself, so every later allocation succeeds again.
/// Counted are the runtime's own allocation points: every 64-byte aligned
/// block (a module's bytes, a session's arena, a tensor's storage, its
/// copies, a run's outputs) and every table of strings (tensors of strings
/// and a module's string constants). The process-wide counter is shared by
/// all threads; tests arm it around single-threaded work.
void failAllocationAfter(uint64_t n);

/// Disarms a failure that has not happened yet. Returns true when one was
/// still pending (the work did not reach that many allocations), false when
/// it had fired or none was armed.
bool clearAllocationFailure();

/// Makes the CUDA executor load its driver from `path` instead of
/// libcuda.so.1: a shared library with the driver's entry points, such as
/// the fake driver of the failure tests (runtime/test/fakecuda). nullptr
/// stands for libcuda.so.1. The driver is loaded once per process, at the
/// first CUDA use (a CUDA session, cudaAvailable), and kept for its life:
/// call this before. Once the driver is loaded, naming the same library
/// again does nothing and naming another throws Error, as does a runtime
/// built without its CUDA executor.
void useCudaDriver(const char *path);

} // namespace strata::rt::testing

#endif // STRATA_RUNTIME_TESTING_H
