//===- ThreadPool.cpp - The kernels' thread pool ----------------*- C++ -*-===//
//
// parallelFor runs on OpenMP's threads. oneDNN (Debian's build) runs its
// primitives on OpenMP too; with a pool of strata's own beside it, a
// session of N threads had 2N - 1 threads wanting N cores: OpenMP's workers
// spin for a while after each oneDNN step, and strata's workers, asleep on
// a condition variable, woke late into a core that was busy: a memory-bound
// SiLU ran slower on 2 threads than on 1 (bench/RESULTS.md, 2026-12-03).
// One set of threads for both removes the fight, and
// OpenMP's short spin between regions keeps the threads awake from one step
// to the next of a run while letting them sleep between requests.
//
// The chunk boundaries do not depend on the thread count: each thread runs
// a contiguous share of the chunks, the same share on every call.
//
//===----------------------------------------------------------------------===//

#include "strata/Runtime/Runtime.h"

#include "Omp.h"

#include <algorithm>

namespace strata::rt {

namespace {
/// Set while a thread runs chunks, so that a parallelFor inside a chunk
/// runs inline.
thread_local bool insideParallelFor = false;
} // namespace

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads_ = threads;
}

void ThreadPool::parallelFor(int64_t begin, int64_t end, int64_t grain,
                             const std::function<void(int64_t, int64_t)> &fn) {
  if (end <= begin)
    return;
  if (grain < 1)
    grain = 1;
  int64_t numChunks = (end - begin - 1) / grain + 1;
  if (threads_ == 1 || numChunks == 1 || insideParallelFor ||
      omp_in_parallel()) {
    // Inline, in chunks all the same, so that kernels see one behaviour.
    for (int64_t b = begin; b < end; b += grain)
      fn(b, std::min(end, b + grain));
    return;
  }

  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  std::exception_ptr error;
  int team = static_cast<int>(std::min<int64_t>(threads_, numChunks));
  // Thread t always takes the same contiguous run of chunks (forEachShare).
  auto share = [&](int64_t first, int64_t last) {
    insideParallelFor = true;
    for (int64_t chunk = first;
         chunk < last && !failed.load(std::memory_order_relaxed); ++chunk) {
      int64_t b = begin + chunk * grain;
      int64_t e = std::min(end, b + grain);
      // No exception may leave an OpenMP region.
      try {
        fn(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (!error)
          error = std::current_exception();
        // Skip the chunks nobody has started.
        failed.store(true, std::memory_order_relaxed);
      }
    }
    insideParallelFor = false;
  };
  omp::forEachShare(team, numChunks, share);
  if (error)
    std::rethrow_exception(error);
}

} // namespace strata::rt
