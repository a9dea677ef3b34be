#include "plugins/gpu/caching_allocator.h"

#include <utility>

namespace anvil::gpu {

namespace {
constexpr uint64_t kLargeStep = uint64_t{2} << 20;
}  // namespace

CachingAllocator::CachingAllocator(DeviceAllocate allocate, DeviceFree free, uint64_t keep_bytes)
    : allocate_(std::move(allocate)), free_(std::move(free)), keep_bytes_(keep_bytes) {}

CachingAllocator::~CachingAllocator() { Trim(); }

uint64_t CachingAllocator::SizeClass(uint64_t bytes) {
  if (bytes <= 256) return 256;
  if (bytes >= kLargeStep) return (bytes + kLargeStep - 1) / kLargeStep * kLargeStep;
  uint64_t c = 256;
  while (c < bytes) c <<= 1;
  return c;
}

hlo::StatusOr<uint64_t> CachingAllocator::Allocate(uint64_t bytes) {
  const uint64_t size = SizeClass(bytes);
  std::unique_lock<std::mutex> lock(mutex_);
  if (auto it = waiting_.find(size); it != waiting_.end()) {
    const uint64_t address = it->second;
    waiting_.erase(it);
    waiting_bytes_ -= size;
    out_.emplace(address, size);
    return address;
  }
  // The device allocates outside the lock; on out of memory what waits is
  // freed and the allocation tried once more.
  lock.unlock();
  hlo::StatusOr<uint64_t> address = allocate_(size);
  if (!address.ok() && address.status().code() == hlo::StatusCode::kResourceExhausted) {
    Trim();
    address = allocate_(size);
  }
  if (!address.ok()) return address.status();
  lock.lock();
  out_.emplace(*address, size);
  return *address;
}

void CachingAllocator::Release(uint64_t address) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = out_.find(address);
  if (it == out_.end()) return;  // not ours: nothing to do safely
  const uint64_t size = it->second;
  out_.erase(it);
  if (waiting_bytes_ + size <= keep_bytes_) {
    waiting_.emplace(size, address);
    waiting_bytes_ += size;
    return;
  }
  lock.unlock();
  free_(address);
}

void CachingAllocator::Trim() {
  std::multimap<uint64_t, uint64_t> waiting;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting.swap(waiting_);
    waiting_bytes_ = 0;
  }
  for (const auto& [size, address] : waiting) free_(address);
}

uint64_t CachingAllocator::waiting_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waiting_bytes_;
}

}  // namespace anvil::gpu
