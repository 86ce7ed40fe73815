//===- Omp.h - The OpenMP runtime that oneDNN runs on -----------*- C++ -*-===//
//
// Debian's oneDNN runs its primitives on GCC's OpenMP runtime, libgomp, and
// the runtime's own parallel loops share its threads (ThreadPool.cpp says
// why). The runtime calls libgomp through its API (the omp_* functions of
// the OpenMP standard) and its ABI (GOMP_parallel, what GCC lowers
// `#pragma omp parallel` to, stable since GCC 4.9) instead of through
// pragmas: pragmas bind to the compiling compiler's runtime, and clang's is
// not libgomp. So any compiler builds the runtime, and every build has one
// OpenMP runtime in the process, oneDNN's.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_LIB_OMP_H
#define STRATA_RUNTIME_LIB_OMP_H

#include <cstdint>

extern "C" {
// The OpenMP API (libgomp's OMP_1.0 symbols).
int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
void omp_set_num_threads(int);
int omp_in_parallel(void);
// libgomp's entry for a parallel region: runs fn(data) on a team of
// numThreads threads (0: the default count), the calling thread among them,
// and returns when all have finished.
void GOMP_parallel(void (*fn)(void *), void *data, unsigned numThreads,
                   unsigned flags);
}

namespace strata::rt::omp {

/// Splits `chunks` chunks over a team of `team` OpenMP threads, the caller
/// among them: thread t of n runs `share(first, last)` on chunks
/// [chunks * t / n, chunks * (t + 1) / n), a contiguous run that depends on
/// t and n only, so that from one call to the next each thread touches the
/// rows it touched before, still in its caches. No exception may leave
/// `share`.
template <typename F> void forEachShare(int team, int64_t chunks, F &share) {
  struct Region {
    F &share;
    int64_t chunks;
  } region{share, chunks};
  GOMP_parallel(
      [](void *data) {
        auto &r = *static_cast<Region *>(data);
        int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
        r.share(r.chunks * t / n, r.chunks * (t + 1) / n);
      },
      &region, static_cast<unsigned>(team < 1 ? 1 : team), 0);
}

/// forEachShare over as many of the calling thread's OpenMP threads
/// (omp_get_max_threads) as there are chunks; inline, as share(0, chunks),
/// with one chunk or thread, or inside a parallel region already.
template <typename F> void shareOverThreads(int64_t chunks, F &share) {
  int64_t team =
      chunks < omp_get_max_threads() ? chunks : omp_get_max_threads();
  if (team <= 1 || omp_in_parallel()) {
    share(0, chunks);
    return;
  }
  forEachShare(static_cast<int>(team), chunks, share);
}

} // namespace strata::rt::omp

#endif // STRATA_RUNTIME_LIB_OMP_H
