// One execution of a device program (device_program.h), in terms of what
// every GPU device does: the walker queues dispatches and copies in program
// order, and where the host must decide (a loop's condition, a
// conditional's branch) has the device finish what it queued and reads the
// one value it needs. The plugin implements DeviceQueue over its API
// (Vulkan command buffers, a CUDA or HIP stream).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "hlo/status.h"
#include "plugins/gpu/device_program.h"

namespace anvil::gpu {

// Every dispatch and copy queued before another is done before that one
// starts, and its writes are visible to it.
class DeviceQueue {
 public:
  virtual ~DeviceQueue() = default;
  // Queues `op`'s kernel over `op.groups` workgroups, reading the table
  // `table_address` points at (AddressTables::address of op.table).
  virtual hlo::Status Dispatch(const Op& op, uint64_t table_address) = 0;
  // Queues a copy of src.bytes from `src` to `dst`.
  virtual hlo::Status Copy(const Loc& src, const Loc& dst) = 0;
  // Waits for everything queued so far, then copies `bytes` at `at` to the
  // host.
  virtual hlo::Status Read(const Loc& at, void* host, size_t bytes) = 0;
};

// Queues the operations of `ops`, in order, running loops and conditionals
// on the host.
hlo::Status WalkProgram(const std::vector<Op>& ops, const std::vector<uint64_t>& table_addresses, DeviceQueue& queue);

// Every kernel's table of addresses laid out one after another in one
// buffer of `words`: table k starts at word first[k].
struct AddressTables {
  std::vector<uint64_t> words;
  std::vector<size_t> first;
  // The device addresses of the tables once `words` is at `base`.
  std::vector<uint64_t> Addresses(uint64_t base) const {
    std::vector<uint64_t> out;
    for (size_t f : first) out.push_back(base + f * sizeof(uint64_t));
    return out;
  }
};
// `address` gives a location's device address in this execution.
AddressTables LayOutAddressTables(const DeviceProgram& program, const std::function<uint64_t(const Loc&)>& address);

}  // namespace anvil::gpu
