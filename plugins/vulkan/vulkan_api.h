// The Vulkan entry points the plugin uses, loaded at run time from the
// system's loader (libvulkan.so.1), so that the plugin itself loads on a
// machine without Vulkan and says so instead of failing to load.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

namespace anvil::vulkan {

#define ANVIL_VK_INSTANCE_FUNCTIONS(X)        \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceFeatures)              \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

#define ANVIL_VK_DEVICE_FUNCTIONS(X)  \
  X(vkDestroyDevice)                  \
  X(vkGetDeviceQueue)                 \
  X(vkQueueSubmit)                    \
  X(vkQueueWaitIdle)                  \
  X(vkAllocateMemory)                 \
  X(vkFreeMemory)                     \
  X(vkMapMemory)                      \
  X(vkUnmapMemory)                    \
  X(vkCreateBuffer)                   \
  X(vkDestroyBuffer)                  \
  X(vkGetBufferMemoryRequirements)    \
  X(vkBindBufferMemory)               \
  X(vkCreateShaderModule)             \
  X(vkDestroyShaderModule)            \
  X(vkCreateDescriptorSetLayout)      \
  X(vkDestroyDescriptorSetLayout)     \
  X(vkCreatePipelineLayout)           \
  X(vkDestroyPipelineLayout)          \
  X(vkCreateComputePipelines)         \
  X(vkDestroyPipeline)                \
  X(vkCreateDescriptorPool)           \
  X(vkDestroyDescriptorPool)          \
  X(vkAllocateDescriptorSets)         \
  X(vkUpdateDescriptorSets)           \
  X(vkCreateCommandPool)              \
  X(vkDestroyCommandPool)             \
  X(vkAllocateCommandBuffers)         \
  X(vkFreeCommandBuffers)             \
  X(vkBeginCommandBuffer)             \
  X(vkEndCommandBuffer)               \
  X(vkCmdBindPipeline)                \
  X(vkCmdBindDescriptorSets)          \
  X(vkCmdPushConstants)               \
  X(vkCmdDispatch)                    \
  X(vkCmdPipelineBarrier)             \
  X(vkCreateFence)                    \
  X(vkDestroyFence)                   \
  X(vkWaitForFences)                  \
  X(vkResetFences)                    \
  X(vkResetCommandBuffer)             \
  X(vkCmdCopyBuffer)                  \
  X(vkGetBufferDeviceAddress)

// Function pointers of one instance and, once a device is made, of it.
struct Api {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
  PFN_vkEnumerateInstanceLayerProperties vkEnumerateInstanceLayerProperties = nullptr;
  // VK_EXT_debug_utils, present only with the validation layer on.
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT = nullptr;
#define ANVIL_VK_DECLARE(name) PFN_##name name = nullptr;
  ANVIL_VK_INSTANCE_FUNCTIONS(ANVIL_VK_DECLARE)
  ANVIL_VK_DEVICE_FUNCTIONS(ANVIL_VK_DECLARE)
#undef ANVIL_VK_DECLARE
};

// Opens the Vulkan loader and resolves the global entry points. On failure
// returns false with `why` saying what is missing.
bool LoadLoader(Api& api, void** library, std::string& why);
// Resolves the instance-level entry points; false (with `why`) if one lacks.
bool LoadInstanceFunctions(Api& api, VkInstance instance, std::string& why);
// Resolves the device-level entry points into `api` (a per-device copy).
bool LoadDeviceFunctions(Api& api, VkDevice device, std::string& why);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" and the like.
std::string ResultName(VkResult result);

}  // namespace anvil::vulkan
