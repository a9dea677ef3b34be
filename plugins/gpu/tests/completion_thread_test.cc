// The GPU layer's completion thread on its own: jobs run one at a time in
// the order handed over, a caller past the limit waits until a job is
// done, and the destructor runs what is still queued.
#include "plugins/gpu/completion_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace anvil::gpu {
namespace {

TEST(CompletionThread, JobsRunInTheOrderHandedOverOnOneThread) {
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  {
    CompletionThread completions;
    for (int k = 0; k < 100; ++k) {
      completions.Add([&, k] {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(k);
        threads.push_back(std::this_thread::get_id());
      });
    }
  }  // the destructor runs what is left
  ASSERT_EQ(order.size(), 100u);
  for (int k = 0; k < 100; ++k) EXPECT_EQ(order[k], k);
  for (const auto& id : threads) EXPECT_EQ(id, threads[0]);
  EXPECT_NE(threads[0], std::this_thread::get_id());
}

TEST(CompletionThread, ACallerPastTheLimitWaitsUntilAJobIsDone) {
  CompletionThread completions(2);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> ran{0};
  // One job running (blocked) and one queued: the limit of two is reached.
  completions.Add([released, &ran] {
    released.wait();
    ++ran;
  });
  completions.Add([&ran] { ++ran; });
  std::atomic<bool> added{false};
  std::thread third([&] {
    completions.Add([&ran] { ++ran; });
    added = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(added) << "a third job was queued past the limit";
  release.set_value();
  third.join();
  EXPECT_TRUE(added);
  while (ran < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(ran, 3);
}

}  // namespace
}  // namespace anvil::gpu
