#include "plugins/vulkan/vulkan_api.h"

#include <dlfcn.h>

namespace anvil::vulkan {

bool LoadLoader(Api& api, void** library, std::string& why) {
  // RTLD_NODELETE: the loader stays mapped after the plugin closes it. It
  // keeps allocations in globals for the process's life, which unloading
  // would turn into leaks (LeakSanitizer reports them); most Vulkan
  // applications never unload it either.
  *library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!*library) {
    const char* error = dlerror();
    why = std::string("no Vulkan loader (libvulkan.so.1): ") + (error ? error : "not found") +
          "; install libvulkan1 and a driver such as mesa-vulkan-drivers";
    return false;
  }
  api.vkGetInstanceProcAddr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(*library, "vkGetInstanceProcAddr"));
  if (!api.vkGetInstanceProcAddr) {
    why = "the Vulkan loader has no vkGetInstanceProcAddr";
    return false;
  }
  api.vkCreateInstance =
      reinterpret_cast<PFN_vkCreateInstance>(api.vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkCreateInstance"));
  if (!api.vkCreateInstance) {
    why = "the Vulkan loader has no vkCreateInstance";
    return false;
  }
  api.vkEnumerateInstanceLayerProperties = reinterpret_cast<PFN_vkEnumerateInstanceLayerProperties>(
      api.vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkEnumerateInstanceLayerProperties"));
  return true;
}

bool LoadInstanceFunctions(Api& api, VkInstance instance, std::string& why) {
#define ANVIL_VK_LOAD(name)                                                                  \
  api.name = reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(instance, #name));        \
  if (!api.name) {                                                                           \
    why = "the Vulkan instance has no " #name;                                               \
    return false;                                                                            \
  }
  ANVIL_VK_INSTANCE_FUNCTIONS(ANVIL_VK_LOAD)
#undef ANVIL_VK_LOAD
  return true;
}

bool LoadDeviceFunctions(Api& api, VkDevice device, std::string& why) {
#define ANVIL_VK_LOAD(name)                                                                  \
  api.name = reinterpret_cast<PFN_##name>(api.vkGetDeviceProcAddr(device, #name));            \
  if (!api.name) {                                                                           \
    why = "the Vulkan device has no " #name;                                                 \
    return false;                                                                            \
  }
  ANVIL_VK_DEVICE_FUNCTIONS(ANVIL_VK_LOAD)
#undef ANVIL_VK_LOAD
  return true;
}

std::string ResultName(VkResult result) {
  switch (result) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    default: return "VkResult " + std::to_string(static_cast<int>(result));
  }
}

}  // namespace anvil::vulkan
