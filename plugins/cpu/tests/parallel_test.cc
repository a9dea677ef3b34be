// Parallel::For (parallel.h) on threads of its own: every index runs once;
// a body that throws reaches the caller as its exception, from the caller's
// chunk or a helper's, and no chunk starts after For has returned (the body
// lives in For's caller, which unwinds then).
#include "plugins/cpu/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "plugins/cpu/tests/thread_executor.h"

namespace anvil::cpu {
namespace {

TEST(CpuParallel, EveryIndexRunsOnce) {
  ThreadExecutor executor;
  const Parallel parallel(executor.api());
  std::vector<std::atomic<int>> runs(1000);
  parallel.For(1000, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) ++runs[k];
  });
  for (size_t k = 0; k < runs.size(); ++k) ASSERT_EQ(runs[k].load(), 1) << "index " << k;
}

TEST(CpuParallel, AThrowingBodyReachesTheCallerAndNoChunkStartsAfterward) {
  if (Parallel::Threads() < 2) GTEST_SKIP() << "one CPU: For runs inline, with no helper to outlive it";
  std::atomic<bool> returned{false};
  std::atomic<int> late_starts{0};
  {
    ThreadExecutor executor;  // joins its threads when the test is done with them
    const Parallel parallel(executor.api());
    // Every chunk throws, after a pause that lets the helpers start theirs:
    // whichever thread throws first, the rest must not run on.
    EXPECT_THROW(parallel.For(64, 1,
                              [&](int64_t, int64_t) {
                                if (returned) ++late_starts;
                                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                                throw std::runtime_error("chunk failed");
                              }),
                 std::runtime_error);
    returned = true;
  }
  EXPECT_EQ(late_starts.load(), 0);
}

}  // namespace
}  // namespace anvil::cpu
