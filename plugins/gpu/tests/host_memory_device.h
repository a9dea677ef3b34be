// What the host-memory stand-ins for GPU runtimes share (the CUDA plugin's
// host_memory_cuda_driver.cc, the ROCm plugin's host_memory_hip_runtime.cc):
// device memory that is zero-filled host memory, streams and modules as
// live handles, the check every launch makes of its table of addresses, and
// the counts a test reads back. Each stand-in wraps it in its runtime's C
// entry points and error codes.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

namespace anvil::gpu::testing {

struct HostMemoryDevice {
  std::mutex mutex;
  std::map<uintptr_t, size_t> allocations;  // start -> bytes
  std::set<uintptr_t> streams;
  long launches = 0, bad_addresses = 0, bad_calls = 0, allocations_made = 0;
  // While held, the device is busy: a wait for a stream of the plugin's own
  // (not the default stream, which transfers use) blocks until released.
  // How a test sees who waits for the device.
  bool held = false;
  std::condition_variable released;
  long waiting = 0;  // waits blocked by the hold now

  // A stream synchronisation with `lock` (on `mutex`) held: returns at once
  // for the default stream or when nothing is held. A wait the test does not
  // release within a minute (one on the very thread that would release it)
  // ends, counted as a bad call, rather than hanging the test.
  void WaitWhileHeld(const void* stream, std::unique_lock<std::mutex>& lock) {
    if (!stream) return;
    ++waiting;
    if (!released.wait_for(lock, std::chrono::seconds(60), [&] { return !held; })) ++bad_calls;
    --waiting;
  }
  void Hold(bool on) {
    std::lock_guard<std::mutex> lock(mutex);
    held = on;
    if (!on) released.notify_all();
  }

  // Whether [p, p + bytes) lies inside one live allocation.
  bool Live(uintptr_t p, size_t bytes) const {
    auto it = allocations.upper_bound(p);
    if (it == allocations.begin()) return false;
    --it;
    return p >= it->first && p + bytes <= it->first + it->second;
  }
  // Null is the default stream.
  bool StreamOk(const void* s) const { return !s || streams.count(reinterpret_cast<uintptr_t>(s)); }
  // Counts a call made wrong, and returns its error code.
  template <typename Code>
  Code Bad(Code code) {
    ++bad_calls;
    return code;
  }

  void* Allocate(size_t bytes) {
    void* p = std::calloc(1, bytes);
    if (!p) return nullptr;
    allocations.emplace(reinterpret_cast<uintptr_t>(p), bytes);
    ++allocations_made;
    return p;
  }
  bool Free(uintptr_t p) {
    if (!allocations.erase(p)) return false;
    std::free(reinterpret_cast<void*>(p));
    return true;
  }

  void* NewStream() {
    auto* s = new int(0);
    streams.insert(reinterpret_cast<uintptr_t>(s));
    return s;
  }
  bool DestroyStream(void* s) {
    if (!s || !streams.erase(reinterpret_cast<uintptr_t>(s))) return false;
    delete static_cast<int*>(s);
    return true;
  }

  // A launch given the device address of its table: the table and those
  // after it, to the end of their allocation, hold 0 (an empty value) or
  // addresses inside live memory. Counts the launch, or the bad addresses.
  void CheckLaunch(uintptr_t table) {
    if (table % 8 != 0 || !Live(table, 8)) {
      ++bad_addresses;
      return;
    }
    auto it = --allocations.upper_bound(table);
    for (uintptr_t at = table; at + 8 <= it->first + it->second; at += 8) {
      uint64_t address;
      std::memcpy(&address, reinterpret_cast<const void*>(at), 8);
      if (address && !Live(address, 1)) ++bad_addresses;
    }
    ++launches;
  }
};

}  // namespace anvil::gpu::testing
