//===- ThreadPoolTest.cpp - Tests of the thread pool ------------*- C++ -*-===//
//
// parallelFor must cover every index exactly once whatever the thread count
// and grain, propagate a chunk's exception, and run nested loops inline
// rather than deadlock.
//
//===----------------------------------------------------------------------===//

#include "strata/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

using namespace strata::rt;

namespace {
void expectEachIndexOnce(ThreadPool &pool, int64_t begin, int64_t end,
                         int64_t grain) {
  int64_t n = end - begin;
  auto counts = std::make_unique<std::atomic<int>[]>(n > 0 ? n : 1);
  for (int64_t i = 0; i < n; ++i)
    counts[i] = 0;
  std::atomic<int64_t> maxChunk{0};
  pool.parallelFor(begin, end, grain, [&](int64_t b, int64_t e) {
    ASSERT_LE(begin, b);
    ASSERT_LT(b, e);
    ASSERT_LE(e, end);
    int64_t len = e - b, prev = maxChunk.load();
    while (len > prev && !maxChunk.compare_exchange_weak(prev, len)) {
    }
    for (int64_t i = b; i < e; ++i)
      counts[i - begin]++;
  });
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(counts[i].load(), 1)
        << "index " << begin + i << " with grain " << grain;
  EXPECT_LE(maxChunk.load(), std::max<int64_t>(grain, 1));
}
} // namespace

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (unsigned threads : {1u, 4u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.numThreads(), threads);
    for (int64_t grain : {1, 3, 64, 1000, 0})
      for (auto [b, e] : {std::pair<int64_t, int64_t>{0, 0},
                          {0, 1},
                          {5, 6},
                          {0, 1000},
                          {-37, 2048},
                          {10, 9}})
        expectEachIndexOnce(pool, b, e, grain);
  }
}

TEST(ThreadPool, ManyCallsInARow) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  for (int round = 0; round < 500; ++round)
    pool.parallelFor(0, 100, 7, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        sum += i;
    });
  EXPECT_EQ(sum.load(), 500 * 4950);
}

TEST(ThreadPool, RunsInlineWithOneThread) {
  ThreadPool pool(1);
  std::thread::id caller = std::this_thread::get_id();
  pool.parallelFor(0, 100, 10, [&](int64_t, int64_t) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
  });
}

TEST(ThreadPool, UsesSeveralThreads) {
  ThreadPool pool(4);
  std::mutex mutex;
  std::set<std::thread::id> seen;
  std::atomic<int> arrived{0};
  // Each of the first four chunks waits (bounded) for the others so that
  // the chunks cannot all land on one thread.
  pool.parallelFor(0, 4, 1, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      seen.insert(std::this_thread::get_id());
    }
    ++arrived;
    for (int i = 0; i < 2000 && arrived.load() < 4; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  EXPECT_GT(seen.size(), 1u);
}

TEST(ThreadPool, PropagatesExceptions) {
  for (unsigned threads : {1u, 4u}) {
    ThreadPool pool(threads);
    EXPECT_THROW(pool.parallelFor(0, 1000, 10,
                                  [&](int64_t b, int64_t) {
                                    if (b == 500)
                                      throw Error("chunk 500 failed");
                                  }),
                 Error);
    // The pool still works afterwards.
    expectEachIndexOnce(pool, 0, 100, 3);
  }
}

TEST(ThreadPool, NestedLoopsRunInline) {
  ThreadPool pool(4);
  std::atomic<int64_t> count{0};
  pool.parallelFor(0, 8, 1, [&](int64_t, int64_t) {
    pool.parallelFor(0, 10, 2, [&](int64_t b, int64_t e) { count += e - b; });
  });
  EXPECT_EQ(count.load(), 80);
}
