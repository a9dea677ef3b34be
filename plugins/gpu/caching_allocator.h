// Device memory kept for reuse, for a GPU plugin's per-execution memory
// (the arena's chunks, the address tables): every execution of a program
// asks for the same sizes, and a device allocation (cuMemAlloc, hipMalloc)
// costs far more than a lookup, and may synchronise the device. Requests
// are rounded up to a size class (powers of two to 2 MiB, then multiples of
// 2 MiB); a released block waits on its class's free list for the next
// request of that class. At most `keep_bytes` wait at once: past that a
// released block goes back to the device. When the device is out of
// memory, every waiting block is freed and the allocation tried again.
// Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

#include "hlo/status.h"

namespace anvil::gpu {

class CachingAllocator {
 public:
  // `allocate` returns a device address (RESOURCE_EXHAUSTED when the device
  // is out of memory); `free` gives one back.
  using DeviceAllocate = std::function<hlo::StatusOr<uint64_t>(uint64_t bytes)>;
  using DeviceFree = std::function<void(uint64_t address)>;

  CachingAllocator(DeviceAllocate allocate, DeviceFree free, uint64_t keep_bytes);
  // Frees every waiting block; blocks still out are the caller's bug.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // At least `bytes` (at least 1) of device memory.
  hlo::StatusOr<uint64_t> Allocate(uint64_t bytes);
  // Gives back a block Allocate returned.
  void Release(uint64_t address);
  // Frees every waiting block.
  void Trim();

  static uint64_t SizeClass(uint64_t bytes);
  uint64_t waiting_bytes() const;

 private:
  DeviceAllocate allocate_;
  DeviceFree free_;
  const uint64_t keep_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, uint64_t> out_;  // address -> its class's bytes
  std::multimap<uint64_t, uint64_t> waiting_;   // class bytes -> address
  uint64_t waiting_bytes_ = 0;
};

}  // namespace anvil::gpu
