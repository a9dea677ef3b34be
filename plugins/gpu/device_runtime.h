// What the GPU layer asks of a GPU plugin's runtime (the CUDA driver API,
// HIP): its devices, device memory, streams, loaded code objects and kernel
// launches. A plugin implements this over its runtime's C API (a few lines
// a call: CUDA's and HIP's are nearly the same API), and the layer does the
// rest: executables (gpu_executable.h) and the plugin ABI's entry points
// (gpu_plugin.h).
//
// Memory, stream, module and launch calls act on the device current on the
// calling thread (DeviceScope). Addresses are device addresses as integers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hlo/status.h"

namespace anvil::gpu {

class DeviceRuntime {
 public:
  using Stream = void*;
  using Module = void*;
  using Function = void*;

  struct Device {
    std::string name;
    uint64_t memory_bytes = 0;
  };

  virtual ~DeviceRuntime() = default;

  virtual size_t DeviceCount() const = 0;
  virtual const Device& DeviceAt(size_t device) const = 0;
  // Why there are no devices ("no driver", the runtime's error), in words a
  // person can act on; empty when there are.
  virtual const std::string& NoDeviceReason() const = 0;

  // Makes `device` current on the calling thread and returns what was
  // current before, for Leave (CUDA: the device's primary context pushed,
  // retained on first use; HIP: hipSetDevice). The application's own
  // current device survives every entry point.
  virtual hlo::StatusOr<uintptr_t> Enter(size_t device) = 0;
  virtual void Leave(uintptr_t previous) = 0;

  // Device memory; an out-of-memory failure is RESOURCE_EXHAUSTED.
  virtual hlo::StatusOr<uint64_t> Allocate(uint64_t bytes) = 0;
  virtual void Free(uint64_t address) = 0;

  // A stream whose work runs in order and apart from other streams' (and
  // from the legacy default stream's).
  virtual hlo::StatusOr<Stream> CreateStream() = 0;
  virtual void DestroyStream(Stream stream) = 0;
  virtual hlo::Status Synchronize(Stream stream) = 0;  // null: the default stream
  virtual hlo::Status CopyToDevice(uint64_t destination, const void* source, size_t bytes, Stream stream) = 0;
  virtual hlo::Status CopyToHost(void* destination, uint64_t source, size_t bytes, Stream stream) = 0;
  virtual hlo::Status CopyOnDevice(uint64_t destination, uint64_t source, size_t bytes, Stream stream) = 0;

  // A code object (a cubin, an AMD GPU ELF) loaded for the current device.
  virtual hlo::StatusOr<Module> LoadModule(const std::string& image) = 0;
  virtual void UnloadModule(Module module) = 0;
  virtual hlo::StatusOr<Function> GetFunction(Module module, const std::string& entry) = 0;
  // `groups` blocks of `block` threads, the kernel's one argument the
  // address of its table of buffer addresses.
  virtual hlo::Status Launch(Function function, uint32_t groups, uint32_t block, Stream stream, uint64_t table) = 0;
};

// `device` current on this thread while it lives (DeviceRuntime::Enter),
// what was current before restored after.
class DeviceScope {
 public:
  DeviceScope(DeviceRuntime& runtime, size_t device) : runtime_(runtime) {
    auto previous = runtime.Enter(device);
    if (previous.ok()) {
      previous_ = *previous;
    } else {
      status_ = previous.status();
    }
  }
  ~DeviceScope() {
    if (status_.ok()) runtime_.Leave(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  const hlo::Status& status() const { return status_; }

 private:
  DeviceRuntime& runtime_;
  uintptr_t previous_ = 0;
  hlo::Status status_;
};

}  // namespace anvil::gpu
