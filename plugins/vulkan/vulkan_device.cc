#include "plugins/vulkan/vulkan_device.h"

#include <dlfcn.h>

#include <algorithm>

namespace anvil::vulkan {

bool Device::CreateBuffer(size_t bytes, Buffer* out, std::string& why) {
  const VkDeviceSize size = std::max<VkDeviceSize>(4, (bytes + 3) / 4 * 4);
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = api.vkCreateBuffer(device, &info, nullptr, &out->buffer);
  if (r != VK_SUCCESS) {
    why = "vkCreateBuffer of " + std::to_string(bytes) + " bytes: " + ResultName(r);
    return false;
  }
  VkMemoryRequirements needs;
  api.vkGetBufferMemoryRequirements(device, out->buffer, &needs);
  if (!(needs.memoryTypeBits & (1u << memory_type))) {
    api.vkDestroyBuffer(device, out->buffer, nullptr);
    why = "the device cannot place a storage buffer in host-visible memory";
    return false;
  }
  VkMemoryAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  alloc.allocationSize = needs.size;
  alloc.memoryTypeIndex = memory_type;
  r = api.vkAllocateMemory(device, &alloc, nullptr, &out->memory);
  if (r == VK_SUCCESS) r = api.vkBindBufferMemory(device, out->buffer, out->memory, 0);
  if (r == VK_SUCCESS) r = api.vkMapMemory(device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped);
  if (r != VK_SUCCESS) {
    DestroyBuffer(*out);
    why = "allocating " + std::to_string(bytes) + " bytes of device memory: " + ResultName(r);
    return false;
  }
  out->bytes = bytes;
  return true;
}

void Device::DestroyBuffer(Buffer& b) {
  if (b.mapped) api.vkUnmapMemory(device, b.memory);
  if (b.buffer) api.vkDestroyBuffer(device, b.buffer, nullptr);
  if (b.memory) api.vkFreeMemory(device, b.memory, nullptr);
  b = Buffer{};
}

Device::~Device() {
  if (command_pool && api.vkDestroyCommandPool) api.vkDestroyCommandPool(device, command_pool, nullptr);
  if (device && api.vkDestroyDevice) api.vkDestroyDevice(device, nullptr);
}

Instance::Instance() {
  std::string why;
  if (!Open(why)) {
    why_no_devices_ = why;
    return;
  }
  if (devices_.empty() && why_no_devices_.empty()) why_no_devices_ = "the Vulkan loader lists no devices";
}

bool Instance::Open(std::string& why) {
  if (!LoadLoader(api_, &library_, why)) return false;
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "anvil";
  app.pEngineName = "anvil";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &app;
  VkResult r = api_.vkCreateInstance(&info, nullptr, &instance_);
  if (r != VK_SUCCESS) {
    why = "vkCreateInstance: " + ResultName(r) + (r == VK_ERROR_INCOMPATIBLE_DRIVER ? " (no Vulkan driver installed)" : "");
    instance_ = VK_NULL_HANDLE;
    return false;
  }
  if (!LoadInstanceFunctions(api_, instance_, why)) return false;
  uint32_t count = 0;
  api_.vkEnumeratePhysicalDevices(instance_, &count, nullptr);
  std::vector<VkPhysicalDevice> physical(count);
  if (count) api_.vkEnumeratePhysicalDevices(instance_, &count, physical.data());
  std::string skipped;
  for (VkPhysicalDevice p : physical) {
    std::string device_why;
    auto device = OpenDevice(p, device_why);
    if (device) {
      devices_.push_back(std::move(device));
    } else {
      skipped += (skipped.empty() ? "" : "; ") + device_why;
    }
  }
  if (devices_.empty() && !skipped.empty()) why_no_devices_ = "no usable Vulkan device: " + skipped;
  return true;
}

std::unique_ptr<Device> Instance::OpenDevice(VkPhysicalDevice physical, std::string& why) {
  auto d = std::make_unique<Device>();
  d->api = api_;
  d->physical = physical;
  VkPhysicalDeviceProperties props;
  api_.vkGetPhysicalDeviceProperties(physical, &props);
  d->name = props.deviceName;
  d->max_storage_buffer_range = props.limits.maxStorageBufferRange;
  api_.vkGetPhysicalDeviceFeatures(physical, &d->features);
  if (VK_API_VERSION_MINOR(props.apiVersion) < 1 && VK_API_VERSION_MAJOR(props.apiVersion) == 1) {
    why = d->name + " supports only Vulkan 1.0 (1.1 is needed)";
    return nullptr;
  }
  uint32_t families = 0;
  api_.vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
  std::vector<VkQueueFamilyProperties> family(families);
  api_.vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, family.data());
  bool found = false;
  for (uint32_t k = 0; k < families && !found; ++k) {
    if (family[k].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      d->queue_family = k;
      found = true;
    }
  }
  if (!found) {
    why = d->name + " has no compute queue";
    return nullptr;
  }
  VkPhysicalDeviceMemoryProperties memory;
  api_.vkGetPhysicalDeviceMemoryProperties(physical, &memory);
  found = false;
  const VkMemoryPropertyFlags wanted = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t k = 0; k < memory.memoryTypeCount && !found; ++k) {
    if ((memory.memoryTypes[k].propertyFlags & wanted) == wanted) {
      d->memory_type = k;
      d->memory_bytes = memory.memoryHeaps[memory.memoryTypes[k].heapIndex].size;
      found = true;
    }
  }
  if (!found) {
    why = d->name + " has no host-visible coherent memory";
    return nullptr;
  }
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{};
  queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue.queueFamilyIndex = d->queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkDeviceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  VkResult r = api_.vkCreateDevice(physical, &info, nullptr, &d->device);
  if (r != VK_SUCCESS) {
    d->device = VK_NULL_HANDLE;
    why = "vkCreateDevice for " + d->name + ": " + ResultName(r);
    return nullptr;
  }
  if (!LoadDeviceFunctions(d->api, d->device, why)) return nullptr;
  d->api.vkGetDeviceQueue(d->device, d->queue_family, 0, &d->queue);
  VkCommandPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = d->queue_family;
  r = d->api.vkCreateCommandPool(d->device, &pool, nullptr, &d->command_pool);
  if (r != VK_SUCCESS) {
    why = "vkCreateCommandPool: " + ResultName(r);
    return nullptr;
  }
  return d;
}

Instance::~Instance() {
  devices_.clear();
  if (instance_) api_.vkDestroyInstance(instance_, nullptr);
  if (library_) dlclose(library_);
}

}  // namespace anvil::vulkan
