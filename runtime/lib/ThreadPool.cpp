//===- ThreadPool.cpp - The kernels' thread pool ----------------*- C++ -*-===//
//
// A fixed set of workers that run the chunks of one parallelFor at a time.
// The caller publishes a job and bumps a generation counter; every worker
// wakes, takes chunks from a shared atomic counter until none are left, and
// reports back. The caller takes chunks too, so a pool of N threads has N-1
// workers. Idle workers block on a condition variable: a runtime that is
// embedded in a server must not burn cores between requests.
//
//===----------------------------------------------------------------------===//

#include "strata/Runtime/Runtime.h"

#include <algorithm>

namespace strata::rt {

namespace {
/// Set on the pool's workers and while a caller runs chunks, so that a
/// parallelFor inside a chunk runs inline instead of waiting for workers
/// that are busy running the outer loop (a deadlock).
thread_local bool insideParallelFor = false;
} // namespace

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  numWorkers_ = threads - 1;
  workers_.reserve(numWorkers_);
  for (unsigned i = 0; i < numWorkers_; ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &worker : workers_)
    worker.join();
}

void ThreadPool::runChunks() {
  bool wasInside = insideParallelFor;
  insideParallelFor = true;
  for (;;) {
    int64_t chunk = next_->fetch_add(1, std::memory_order_relaxed);
    if (chunk >= numChunks_)
      break;
    int64_t b = begin_ + chunk * grain_;
    int64_t e = std::min(end_, b + grain_);
    try {
      (*fn_)(b, e);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_)
        error_ = std::current_exception();
      // Skip the chunks nobody has started.
      next_->store(numChunks_, std::memory_order_relaxed);
    }
  }
  insideParallelFor = wasInside;
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
    }
    runChunks();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--active_ == 0)
        finished_.notify_one();
    }
  }
}

void ThreadPool::parallelFor(int64_t begin, int64_t end, int64_t grain,
                             const std::function<void(int64_t, int64_t)> &fn) {
  if (end <= begin)
    return;
  if (grain < 1)
    grain = 1;
  int64_t numChunks = (end - begin - 1) / grain + 1;
  if (numWorkers_ == 0 || numChunks == 1 || insideParallelFor) {
    // Inline, in chunks all the same, so that kernels see one behaviour.
    for (int64_t b = begin; b < end; b += grain)
      fn(b, std::min(end, b + grain));
    return;
  }

  std::lock_guard<std::mutex> call(callMutex_);
  std::atomic<int64_t> next{0};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    begin_ = begin;
    end_ = end;
    grain_ = grain;
    numChunks_ = numChunks;
    next_ = &next;
    error_ = nullptr;
    active_ = numWorkers_;
    ++generation_;
  }
  wake_.notify_all();
  runChunks();
  std::exception_ptr error;
  {
    // Every worker must be done with this job before `next` and `fn` go
    // out of scope.
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return active_ == 0; });
    error = error_;
    error_ = nullptr;
  }
  if (error)
    std::rethrow_exception(error);
}

} // namespace strata::rt
