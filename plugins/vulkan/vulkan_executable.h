// A program compiled for one Vulkan device: the GPU layer's device program
// (where each value lives, the operations an execution performs), whose
// kernels are the device's cached pipelines, and its constants in a buffer
// of their own.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "hlo/ir.h"
#include "hlo/status.h"
#include "plugins/gpu/device_program.h"
#include "plugins/vulkan/vulkan_device.h"
#include "plugins/vulkan/vulkan_serialized.h"

namespace anvil::vulkan {

class Executable {
 public:
  // Kernels are compiled on `host`'s threads, all at once. `known` (from a
  // serialised executable) gives kernels' SPIR-V by their GLSL's key; a
  // kernel found there is validated, not compiled again.
  static hlo::StatusOr<std::unique_ptr<Executable>> Compile(Device& device, size_t device_index,
                                                            std::string_view hlo_text,
                                                            const anvil_plugin_host_executor& host,
                                                            const KnownSpirv* known = nullptr);
  // The canonical text and every kernel's SPIR-V (vulkan_serialized.h).
  std::string Serialize() const;
  ~Executable();

  Device& device() { return device_; }
  size_t device_index() const { return device_index_; }
  // Its ops' kernels are Pipelines of device().
  const gpu::DeviceProgram& program() const { return program_; }
  size_t parameter_count() const { return program_.parameter_bytes.size(); }
  const std::vector<uint64_t>& parameter_bytes() const { return program_.parameter_bytes; }
  const std::vector<uint64_t>& output_bytes() const { return program_.output_bytes; }
  const Buffer& constants() const { return constants_; }

 private:
  friend class PipelineLoader;
  Executable(Device& device, size_t device_index) : device_(device), device_index_(device_index) {}

  Device& device_;
  size_t device_index_;
  gpu::DeviceProgram program_;
  Buffer constants_;
  std::string canonical_text_;
  // Each distinct kernel's GLSL key and SPIR-V, in first-use order.
  std::vector<std::pair<std::string, std::vector<uint32_t>>> spirv_;
};

}  // namespace anvil::vulkan
