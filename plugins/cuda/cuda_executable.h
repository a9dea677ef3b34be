// A program compiled for one CUDA device: the GPU layer's device program,
// whose kernels are functions of cubins NVRTC compiled for the device's
// compute capability, and its constants in device memory. Running it
// (RunCudaExecutable) walks the program on a stream of its own.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "hlo/status.h"
#include "plugins/cuda/cuda_driver.h"
#include "plugins/cuda/nvrtc_compiler.h"
#include "plugins/gpu/caching_allocator.h"
#include "plugins/gpu/device_program.h"
#include "plugins/gpu/serialized_program.h"

namespace anvil::cuda {

class CudaExecutable {
 public:
  // Plans and emits the program's kernels, compiles the distinct ones for
  // the device's sm on `host`'s threads, loads them into `context` and
  // lays out the device program. Errors: the generator's UNIMPLEMENTED
  // naming an instruction, NVRTC's log (INTERNAL), or the driver's.
  // `device_index` is the plugin's number for the device. `known` (from a
  // serialised executable) gives cubins by their source's KernelKey: a
  // pass found there is loaded, not compiled again.
  static hlo::StatusOr<std::unique_ptr<CudaExecutable>> Compile(
      const CudaDriver& driver, CUcontext context, size_t device_index, const CudaDeviceInfo& device,
      const NvrtcCompiler& nvrtc, std::string_view canonical_text, const anvil_plugin_host_executor& host,
      const std::unordered_map<std::string, std::string>* known = nullptr);
  // The canonical text and every pass's cubin (plugins/gpu/serialized_program.h).
  std::string Serialize() const;
  // What Serialize wrote, or INVALID_ARGUMENT with the byte offset.
  static hlo::StatusOr<gpu::SerializedProgram> ReadSerialized(std::string_view bytes);
  // Unloads the modules and frees the constants (in the executable's
  // context, made current here).
  ~CudaExecutable();
  CudaExecutable(const CudaExecutable&) = delete;
  CudaExecutable& operator=(const CudaExecutable&) = delete;

  const CudaDriver& driver() const { return driver_; }
  CUcontext context() const { return context_; }
  size_t device_index() const { return device_index_; }
  // Its ops' kernels point at CUfunctions.
  const gpu::DeviceProgram& program() const { return program_; }
  CUdeviceptr constants() const { return constants_; }

 private:
  friend class CubinLoader;
  CudaExecutable(const CudaDriver& driver, CUcontext context, size_t device_index)
      : driver_(driver), context_(context), device_index_(device_index) {}

  const CudaDriver& driver_;
  CUcontext context_;
  size_t device_index_;
  gpu::DeviceProgram program_;
  CUdeviceptr constants_ = 0;
  std::vector<CUmodule> modules_;
  std::deque<CUfunction> functions_;  // what the program's dispatches point at
  std::string canonical_text_;
  // Each loaded pass's KernelKey and cubin, in first-use order.
  std::vector<std::pair<std::string, std::string>> cubins_;
};

// Runs `exe` on `inputs` into `outputs` (device memory of the program's
// parameter and output sizes) on the calling thread, and returns once the
// device is done: the arena and the address tables come from `memory` (the
// device's, which keeps them for the next execution), the ops are queued
// on a stream of its own (a loop's condition or a branch index is read
// back, waiting for the stream, where the host must decide), the outputs
// copied out, and the memory given back.
hlo::Status RunCudaExecutable(const CudaExecutable& exe, gpu::CachingAllocator& memory,
                              const std::vector<CUdeviceptr>& inputs, const std::vector<CUdeviceptr>& outputs);

}  // namespace anvil::cuda
