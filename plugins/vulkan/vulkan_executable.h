// A program compiled for one Vulkan device: its values (parameters,
// constants uploaded at compile, intermediates made per execution), one
// compute pipeline per kernel, and the order of the dispatches.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/status.h"
#include "plugins/vulkan/vulkan_device.h"

namespace anvil::vulkan {

// Where a value's buffer comes from in an execution.
struct ValueRef {
  enum class Kind { kParameter, kConstant, kTemporary, kOutput } kind = Kind::kTemporary;
  size_t index = 0;
};

struct Dispatch {
  size_t pipeline = 0;
  std::vector<ValueRef> bindings;  // operands, then the result
  uint32_t elements = 0;
};

struct Pipeline {
  VkShaderModule shader = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t bindings = 0;
};

class Executable {
 public:
  // Compiles canonical HLO text for `device`; UNIMPLEMENTED names the first
  // instruction this plugin cannot compile yet.
  static hlo::StatusOr<std::unique_ptr<Executable>> Compile(Device& device, size_t device_index,
                                                            std::string_view hlo_text);
  ~Executable();

  Device& device() { return device_; }
  size_t device_index() const { return device_index_; }
  const std::vector<size_t>& output_bytes() const { return output_bytes_; }
  size_t parameter_count() const { return parameter_count_; }
  const std::vector<size_t>& temporary_bytes() const { return temporary_bytes_; }
  const std::vector<Dispatch>& dispatches() const { return dispatches_; }
  const std::vector<Pipeline>& pipelines() const { return pipelines_; }
  const std::vector<Buffer>& constants() const { return constants_; }

 private:
  Executable(Device& device, size_t device_index) : device_(device), device_index_(device_index) {}
  hlo::Status Build(const hlo::Computation& entry);

  Device& device_;
  size_t device_index_;  // the plugin's number for device_
  size_t parameter_count_ = 0;
  std::vector<Buffer> constants_;
  std::vector<size_t> temporary_bytes_, output_bytes_;
  std::vector<Pipeline> pipelines_;
  std::vector<Dispatch> dispatches_;
};

}  // namespace anvil::vulkan
