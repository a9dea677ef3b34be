// The Vulkan instance, its devices and their buffers. Every physical device
// with a compute queue and host-visible coherent memory is an Anvil device.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugins/vulkan/vulkan_api.h"

namespace anvil::vulkan {

// One storage buffer with its memory, mapped for the host's copies.
struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  size_t bytes = 0;
};

struct Device {
  Api api;  // the instance's entry points plus this device's
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  uint32_t memory_type = 0;  // host-visible and coherent
  uint64_t memory_bytes = 0;
  uint32_t max_storage_buffer_range = 0;
  std::string name;
  VkPhysicalDeviceFeatures features{};
  std::mutex mutex;  // the queue and the command pool are used by one thread at a time
  VkCommandPool command_pool = VK_NULL_HANDLE;

  // A storage buffer of `bytes` (at least 4: Vulkan has no empty buffers).
  bool CreateBuffer(size_t bytes, Buffer* out, std::string& why);
  void DestroyBuffer(Buffer& buffer);
  ~Device();
};

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
  std::vector<std::unique_ptr<Device>> devices_;
  std::string why_no_devices_;
};

}  // namespace anvil::vulkan
