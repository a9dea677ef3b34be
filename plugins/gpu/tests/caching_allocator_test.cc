// The GPU layer's caching allocator over a stand-in device that counts
// what it allocates and frees.
#include "plugins/gpu/caching_allocator.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace anvil::gpu {
namespace {

struct CountingDevice {
  std::set<uint64_t> live;
  uint64_t next = 0x1000, allocations = 0, frees = 0, capacity = ~uint64_t{0}, used = 0;
  std::mutex mutex;
  CachingAllocator::DeviceAllocate Allocate() {
    return [this](uint64_t bytes) -> hlo::StatusOr<uint64_t> {
      std::lock_guard<std::mutex> lock(mutex);
      if (used + bytes > capacity) return hlo::ResourceExhausted("out of device memory");
      used += bytes;
      ++allocations;
      const uint64_t a = next;
      next += bytes;
      live.insert(a);
      sizes[a] = bytes;
      return a;
    };
  }
  CachingAllocator::DeviceFree Free() {
    return [this](uint64_t address) {
      std::lock_guard<std::mutex> lock(mutex);
      ASSERT_EQ(live.erase(address), 1u) << "freed twice or never allocated";
      used -= sizes[address];
      ++frees;
    };
  }
  std::map<uint64_t, uint64_t> sizes;
};

TEST(CachingAllocator, SizeClassesArePowersOfTwoThenMultiplesOfTwoMebibytes) {
  EXPECT_EQ(CachingAllocator::SizeClass(1), 256u);
  EXPECT_EQ(CachingAllocator::SizeClass(256), 256u);
  EXPECT_EQ(CachingAllocator::SizeClass(257), 512u);
  EXPECT_EQ(CachingAllocator::SizeClass(1000000), 1u << 20);
  EXPECT_EQ(CachingAllocator::SizeClass((2u << 20) + 1), 4u << 20);
  EXPECT_EQ(CachingAllocator::SizeClass((6u << 20) + 1), 8u << 20);
}

TEST(CachingAllocator, ARepeatedExecutionAllocatesNothingNew) {
  CountingDevice device;
  {
    CachingAllocator cache(device.Allocate(), device.Free(), uint64_t{1} << 30);
    for (int run = 0; run < 5; ++run) {
      std::vector<uint64_t> blocks;
      for (uint64_t bytes : {100u, 5000u, 3u << 20}) {
        auto a = cache.Allocate(bytes);
        ASSERT_TRUE(a.ok());
        blocks.push_back(*a);
      }
      EXPECT_EQ(std::set<uint64_t>(blocks.begin(), blocks.end()).size(), 3u);  // distinct while out
      for (uint64_t b : blocks) cache.Release(b);
    }
    EXPECT_EQ(device.allocations, 3u);
    EXPECT_EQ(device.frees, 0u);
    EXPECT_EQ(cache.waiting_bytes(), 256u + 8192u + (4u << 20));
  }
  EXPECT_EQ(device.frees, 3u);  // the destructor gives everything back
  EXPECT_TRUE(device.live.empty());
}

TEST(CachingAllocator, PastTheLimitReleasedBlocksGoBackToTheDevice) {
  CountingDevice device;
  CachingAllocator cache(device.Allocate(), device.Free(), 1024);
  auto a = cache.Allocate(1024), b = cache.Allocate(1024);
  ASSERT_TRUE(a.ok() && b.ok());
  cache.Release(*a);  // waits: 1024 of 1024
  cache.Release(*b);  // over the limit: freed
  EXPECT_EQ(device.frees, 1u);
  EXPECT_EQ(cache.waiting_bytes(), 1024u);
}

TEST(CachingAllocator, OutOfMemoryFreesWhatWaitsAndTriesAgain) {
  CountingDevice device;
  device.capacity = 8192;
  CachingAllocator cache(device.Allocate(), device.Free(), uint64_t{1} << 30);
  auto small = cache.Allocate(4096);
  ASSERT_TRUE(small.ok());
  cache.Release(*small);  // 4096 wait
  auto big = cache.Allocate(8192);  // needs the waiting block's memory back
  ASSERT_TRUE(big.ok()) << big.status().message();
  EXPECT_EQ(cache.waiting_bytes(), 0u);
  auto more = cache.Allocate(4096);  // nothing left to give back
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().code(), hlo::StatusCode::kResourceExhausted);
  cache.Release(*big);
}

TEST(CachingAllocator, ThreadsShareItSafely) {
  CountingDevice device;
  {
    CachingAllocator cache(device.Allocate(), device.Free(), uint64_t{1} << 30);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&cache, t] {
        for (int k = 0; k < 200; ++k) {
          auto a = cache.Allocate(256u << (k % 6));
          ASSERT_TRUE(a.ok());
          auto b = cache.Allocate(1000u + t);
          ASSERT_TRUE(b.ok());
          EXPECT_NE(*a, *b);
          cache.Release(*b);
          cache.Release(*a);
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  EXPECT_TRUE(device.live.empty());
  EXPECT_EQ(device.allocations, device.frees);
}

}  // namespace
}  // namespace anvil::gpu
