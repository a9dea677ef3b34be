// The Vulkan instance, its devices and their buffers. Every physical device
// with Vulkan 1.2, a compute queue, host-visible coherent memory, buffer
// device addresses, scalar block layout and 64-bit integers is an Anvil
// device.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugins/vulkan/glsl_dialect.h"
#include "plugins/vulkan/vulkan_api.h"

namespace anvil::vulkan {

// One storage buffer with its memory, mapped for the host's copies, and
// its device address (kernels reach every buffer through its address).
struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  size_t bytes = 0;
  VkDeviceAddress address = 0;
};

// A compute pipeline whose only layout is 8 bytes of push constants (the
// address of the kernel's address table).
struct Pipeline {
  std::vector<uint32_t> words;  // its SPIR-V, kept for serialised executables
  VkShaderModule shader = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

struct Device {
  Api api;  // the instance's entry points plus this device's
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  uint32_t memory_type = 0;  // host-visible and coherent
  uint64_t memory_bytes = 0;
  std::string name;
  ShaderFeatures features;
  uint64_t max_allocation = 0;  // the largest buffer one allocation can hold
  uint32_t workgroup_size = 64;
  uint64_t max_loop_iterations = 0;  // per invocation, all loops together (gpu::KernelOptions); 0: none
  std::mutex mutex;  // the queue is used by one thread at a time (each execution has its own command pool)

  // A storage buffer of `bytes` (at least 4: Vulkan has no empty buffers).
  bool CreateBuffer(size_t bytes, Buffer* out, std::string& why);
  void DestroyBuffer(Buffer& buffer);
  // The pipeline of SPIR-V `words`, made once per distinct kernel text
  // `key` and kept for the device's lifetime, so programs that share
  // kernels (and repeated compiles) skip the driver's compile.
  const Pipeline* FindPipeline(const std::string& key);
  bool AddPipeline(const std::string& key, const std::vector<uint32_t>& words, const Pipeline** out, std::string& why);
  ~Device();

 private:
  std::mutex pipelines_mutex_;
  std::map<std::string, Pipeline> pipelines_;
};

// What the Khronos validation layer reported, when it is on: with
// ANVIL_VULKAN_VALIDATION=1 (the plugin's tests set it) and the layer
// installed (vulkan-validationlayers), every warning and error it reports is
// kept here, and the compile or execution that sees one fails with it.
class ValidationLog {
 public:
  void Add(std::string message);
  // The messages so far (and clears them); empty when there were none.
  std::string Take();

 private:
  std::mutex mutex_;
  std::string messages_;
};
ValidationLog& Validation();

class Instance {
 public:
  // Never fails: with no loader, driver or usable device it has no devices,
  // and `why_no_devices` says why.
  Instance();
  ~Instance();
  size_t device_count() const { return devices_.size(); }
  Device& device(size_t k) { return *devices_[k]; }
  const std::string& why_no_devices() const { return why_no_devices_; }

 private:
  bool Open(std::string& why);
  std::unique_ptr<Device> OpenDevice(VkPhysicalDevice physical, std::string& why);

  void* library_ = nullptr;
  Api api_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::vector<std::unique_ptr<Device>> devices_;
  std::string why_no_devices_;
};

}  // namespace anvil::vulkan
