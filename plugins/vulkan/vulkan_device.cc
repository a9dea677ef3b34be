#include "plugins/vulkan/vulkan_device.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace anvil::vulkan {

bool Device::CreateBuffer(size_t bytes, Buffer* out, std::string& why) {
  const VkDeviceSize size = std::max<VkDeviceSize>(4, (bytes + 3) / 4 * 4);
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
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
  VkMemoryAllocateFlagsInfo flags{};
  flags.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO;
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  alloc.pNext = &flags;
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
  VkBufferDeviceAddressInfo address{};
  address.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO;
  address.buffer = out->buffer;
  out->address = api.vkGetBufferDeviceAddress(device, &address);
  return true;
}

const Pipeline* Device::FindPipeline(const std::string& key) {
  std::lock_guard<std::mutex> lock(pipelines_mutex_);
  auto found = pipelines_.find(key);
  return found == pipelines_.end() ? nullptr : &found->second;
}

bool Device::AddPipeline(const std::string& key, const std::vector<uint32_t>& words, const Pipeline** out,
                         std::string& why) {
  Pipeline p;
  VkShaderModuleCreateInfo shader{};
  shader.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  shader.codeSize = words.size() * 4;
  shader.pCode = words.data();
  VkResult r = api.vkCreateShaderModule(device, &shader, nullptr, &p.shader);
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, 8};
  VkPipelineLayoutCreateInfo layout{};
  layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layout.pushConstantRangeCount = 1;
  layout.pPushConstantRanges = &push;
  if (r == VK_SUCCESS) r = api.vkCreatePipelineLayout(device, &layout, nullptr, &p.layout);
  VkComputePipelineCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = p.shader;
  info.stage.pName = "main";
  info.layout = p.layout;
  if (r == VK_SUCCESS) r = api.vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &p.pipeline);
  if (r != VK_SUCCESS) {
    if (p.pipeline) api.vkDestroyPipeline(device, p.pipeline, nullptr);
    if (p.layout) api.vkDestroyPipelineLayout(device, p.layout, nullptr);
    if (p.shader) api.vkDestroyShaderModule(device, p.shader, nullptr);
    why = "creating a compute pipeline: " + ResultName(r);
    return false;
  }
  p.words = words;
  std::lock_guard<std::mutex> lock(pipelines_mutex_);
  auto [at, inserted] = pipelines_.emplace(key, std::move(p));
  if (!inserted) {  // another thread made the same kernel meanwhile
    api.vkDestroyPipeline(device, p.pipeline, nullptr);
    api.vkDestroyPipelineLayout(device, p.layout, nullptr);
    api.vkDestroyShaderModule(device, p.shader, nullptr);
  }
  *out = &at->second;
  return true;
}

void Device::DestroyBuffer(Buffer& b) {
  if (b.mapped) api.vkUnmapMemory(device, b.memory);
  if (b.buffer) api.vkDestroyBuffer(device, b.buffer, nullptr);
  if (b.memory) api.vkFreeMemory(device, b.memory, nullptr);
  b = Buffer{};
}

Device::~Device() {
  for (auto& [key, p] : pipelines_) {
    api.vkDestroyPipeline(device, p.pipeline, nullptr);
    api.vkDestroyPipelineLayout(device, p.layout, nullptr);
    api.vkDestroyShaderModule(device, p.shader, nullptr);
  }
  if (device && api.vkDestroyDevice) api.vkDestroyDevice(device, nullptr);
}

void ValidationLog::Add(std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  messages_ += (messages_.empty() ? "" : "\n") + message;
}

std::string ValidationLog::Take() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  out.swap(messages_);
  return out;
}

ValidationLog& Validation() {
  static ValidationLog* log = new ValidationLog();  // outlives every device
  return *log;
}

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL OnValidationMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  Validation().Add(std::string(severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error: " : "warning: ") +
                   (data && data->pMessage ? data->pMessage : "(no message)"));
  return VK_FALSE;
}

bool LayerInstalled(const Api& api, const char* name) {
  if (!api.vkEnumerateInstanceLayerProperties) return false;
  uint32_t count = 0;
  api.vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  if (count) api.vkEnumerateInstanceLayerProperties(&count, layers.data());
  for (const VkLayerProperties& l : layers) {
    if (std::string(l.layerName) == name) return true;
  }
  return false;
}

}  // namespace

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
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &app;
  static const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
  static const char* kDebugUtils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  const char* wanted = std::getenv("ANVIL_VULKAN_VALIDATION");
  const bool validate = wanted && std::string(wanted) == "1" && LayerInstalled(api_, kValidationLayer);
  if (wanted && std::string(wanted) == "1" && !validate) {
    std::fprintf(stderr, "anvil vulkan plugin: ANVIL_VULKAN_VALIDATION=1 but %s is not installed "
                         "(vulkan-validationlayers); running without it\n", kValidationLayer);
  }
  if (validate) {
    info.enabledLayerCount = 1;
    info.ppEnabledLayerNames = &kValidationLayer;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = &kDebugUtils;
  }
  VkResult r = api_.vkCreateInstance(&info, nullptr, &instance_);
  if (r != VK_SUCCESS) {
    why = "vkCreateInstance: " + ResultName(r) + (r == VK_ERROR_INCOMPATIBLE_DRIVER ? " (no Vulkan driver installed)" : "");
    instance_ = VK_NULL_HANDLE;
    return false;
  }
  if (!LoadInstanceFunctions(api_, instance_, why)) return false;
  if (validate) {
    api_.vkCreateDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        api_.vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    api_.vkDestroyDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        api_.vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    VkDebugUtilsMessengerCreateInfoEXT messenger{};
    messenger.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    messenger.pfnUserCallback = &OnValidationMessage;
    if (api_.vkCreateDebugUtilsMessengerEXT) {
      api_.vkCreateDebugUtilsMessengerEXT(instance_, &messenger, nullptr, &messenger_);
    }
  }
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
  if (VK_API_VERSION_MINOR(props.apiVersion) < 2 && VK_API_VERSION_MAJOR(props.apiVersion) == 1) {
    why = d->name + " supports only Vulkan 1." + std::to_string(VK_API_VERSION_MINOR(props.apiVersion)) +
          " (1.2 is needed)";
    return nullptr;
  }
  d->workgroup_size = std::min<uint32_t>(64, props.limits.maxComputeWorkGroupSize[0]);
  VkPhysicalDeviceDriverProperties driver{};
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  VkPhysicalDeviceMaintenance3Properties maintenance3{};
  maintenance3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
  maintenance3.pNext = &driver;
  VkPhysicalDeviceProperties2 props2{};
  props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  props2.pNext = &maintenance3;
  api_.vkGetPhysicalDeviceProperties2(physical, &props2);
  d->max_allocation = maintenance3.maxMemoryAllocationSize;
  // lavapipe (llvmpipe) ends an invocation's loops after 65535 iterations
  // in all, silently (LP_MAX_TGSI_LOOP_ITERATIONS): kernels are made to
  // stay under it, or refused.
  if (driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) d->max_loop_iterations = 65535;

  // The features kernels use: device addresses, scalar block layout and
  // 64-bit integers are required; the rest are taken where present, and a
  // kernel on a type the device lacks is refused at compile.
  VkPhysicalDeviceVulkan12Features v12{};
  v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  VkPhysicalDeviceVulkan11Features v11{};
  v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  v11.pNext = &v12;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &v11;
  api_.vkGetPhysicalDeviceFeatures2(physical, &features);
  if (!v12.bufferDeviceAddress || !v12.scalarBlockLayout || !features.features.shaderInt64) {
    why = d->name + " lacks " + (!v12.bufferDeviceAddress ? "bufferDeviceAddress" : !v12.scalarBlockLayout ? "scalarBlockLayout" : "shaderInt64") +
          ", which the Vulkan plugin's kernels need";
    return nullptr;
  }
  d->features.int64 = true;
  d->features.float64 = features.features.shaderFloat64;
  d->features.int16 = features.features.shaderInt16;
  d->features.int8 = v12.shaderInt8;
  d->features.float16 = v12.shaderFloat16;
  d->features.storage8 = v12.storageBuffer8BitAccess;
  d->features.storage16 = v11.storageBuffer16BitAccess;
  // Enable exactly what was found (and nothing else the device offers).
  VkPhysicalDeviceVulkan12Features enable12{};
  enable12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  enable12.bufferDeviceAddress = VK_TRUE;
  enable12.scalarBlockLayout = VK_TRUE;
  enable12.shaderInt8 = v12.shaderInt8;
  enable12.shaderFloat16 = v12.shaderFloat16;
  enable12.storageBuffer8BitAccess = v12.storageBuffer8BitAccess;
  VkPhysicalDeviceVulkan11Features enable11{};
  enable11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  enable11.storageBuffer16BitAccess = v11.storageBuffer16BitAccess;
  enable11.pNext = &enable12;
  VkPhysicalDeviceFeatures2 enable{};
  enable.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  enable.pNext = &enable11;
  enable.features.shaderInt64 = VK_TRUE;
  enable.features.shaderFloat64 = features.features.shaderFloat64;
  enable.features.shaderInt16 = features.features.shaderInt16;
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
  info.pNext = &enable;
  VkResult r = api_.vkCreateDevice(physical, &info, nullptr, &d->device);
  if (r != VK_SUCCESS) {
    d->device = VK_NULL_HANDLE;
    why = "vkCreateDevice for " + d->name + ": " + ResultName(r);
    return nullptr;
  }
  if (!LoadDeviceFunctions(d->api, d->device, why)) return nullptr;
  d->api.vkGetDeviceQueue(d->device, d->queue_family, 0, &d->queue);
  return d;
}

Instance::~Instance() {
  devices_.clear();
  if (messenger_ && api_.vkDestroyDebugUtilsMessengerEXT) api_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (instance_) api_.vkDestroyInstance(instance_, nullptr);
  if (library_) dlclose(library_);
}

}  // namespace anvil::vulkan
