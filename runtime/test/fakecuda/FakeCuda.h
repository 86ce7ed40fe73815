//===- FakeCuda.h - Controlling the fake CUDA driver ------------*- C++ -*-===//
//
// The test-only CUDA driver of FakeCuda.cpp (docs/testing.md, "Failure
// injection") exports, besides the driver entry points the runtime calls,
// these C functions, with which a test injects faults and inspects what the
// runtime left behind. Tests resolve them with dlsym on the library the
// runtime loads (strata::rt::testing::useCudaDriver); the types below are
// theirs.
//
// Entry points are named as the runtime's messages name them, without the
// ABI suffix of cuda.h's macros: "cuMemAlloc", not "cuMemAlloc_v2".
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_TEST_FAKECUDA_FAKECUDA_H
#define STRATA_RUNTIME_TEST_FAKECUDA_FAKECUDA_H

#ifdef __cplusplus
extern "C" {
#endif

/// Arms a fault: the next `after` calls of `entryPoint` succeed, the one
/// after returns `error` (a CUresult) without doing anything, and the fault
/// disarms itself. A `sticky` fault then poisons the context, as a kernel's
/// illegal address does on a GPU: every later call that works in a context
/// returns `error` too, until fakecuda_reset. One fault per entry point;
/// arming one again replaces it. Returns 0, or -1 when the driver has no
/// such entry point.
int fakecuda_fail(const char *entryPoint, long after, int error, int sticky);
typedef int (*fakecuda_fail_fn)(const char *, long, int, int);

/// How many armed faults have not fired yet.
int fakecuda_pending(void);
typedef int (*fakecuda_pending_fn)(void);

/// As a fresh process would find the driver: no faults armed, no sticky
/// error, no calls counted, and every object still alive (allocations,
/// streams, modules, events, graphs) forgotten and freed. Primary context
/// retains and threads' current contexts are kept: call it when no session
/// is alive.
void fakecuda_reset(void);
typedef void (*fakecuda_reset_fn)(void);

/// Calls of `entryPoint` since the last reset (failed ones included); -1
/// for an unknown entry point.
long fakecuda_calls(const char *entryPoint);
typedef long (*fakecuda_calls_fn)(const char *);

/// Objects alive now: "device_memory", "host_memory", "streams",
/// "modules", "events", "graphs", "graph_execs" (each a count), or
/// "context_retains" (primary context retains not released yet); -1 for
/// another name.
long fakecuda_live(const char *what);
typedef long (*fakecuda_live_fn)(const char *);

/// Kernels "run" since the last reset: direct launches, and each kernel of
/// a launched graph. (A kernel does nothing; its outputs keep their bytes.)
long fakecuda_kernels_run(void);
typedef long (*fakecuda_kernels_run_fn)(void);

/// How many contexts the calling thread has pushed and not popped.
int fakecuda_context_depth(void);
typedef int (*fakecuda_context_depth_fn)(void);

/// The devices cuDeviceGetCount reports from now on (1 at first).
void fakecuda_set_device_count(int count);
typedef void (*fakecuda_set_device_count_fn)(int);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // STRATA_RUNTIME_TEST_FAKECUDA_FAKECUDA_H
