#include "plugins/rocm/hip_runtime.h"

#include "plugins/rocm/kfd_topology.h"

#include <dlfcn.h>

#include <cstdlib>
#include <utility>

namespace anvil::rocm {

const HipRuntime& HipRuntime::Get() {
  // Never destroyed: the runtime keeps threads and device state for the
  // process's life, and other statics may still release buffers at exit.
  // ANVIL_HIP_RUNTIME_LIBRARY names another library (a stand-in, in tests).
  static const HipRuntime* runtime = [] {
    const char* chosen = std::getenv("ANVIL_HIP_RUNTIME_LIBRARY");
    if (chosen && *chosen) return new HipRuntime({chosen});
    return new HipRuntime({"libamdhip64.so.5", "libamdhip64.so"});
  }();
  return *runtime;
}

HipRuntime::HipRuntime(const std::vector<std::string>& libraries) {
  devices_.reason = Load(libraries);
  if (devices_.reason.empty()) devices_.reason = Enumerate();
  if (devices_.reason.empty() && devices_.devices.empty()) devices_.reason = "no AMD GPU: the HIP runtime lists none";
}

std::string HipRuntime::Load(const std::vector<std::string>& libraries) {
  void* handle = nullptr;
  std::string first_error;
  std::string library;
  for (const std::string& candidate : libraries) {
    // Never dlclosed (see Get()); RTLD_LOCAL keeps HIP's symbols out of the
    // global namespace.
    handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      library = candidate;
      break;
    }
    const char* error = dlerror();
    if (first_error.empty()) first_error = error ? error : "dlopen failed";
  }
  if (!handle) {
    return (libraries.empty() ? std::string("libamdhip64.so.5") : libraries.front()) + " not found (" + first_error +
           "): ROCm's HIP runtime is not installed (Debian: apt-get install libamdhip64-5)";
  }
#define ANVIL_HIP_RESOLVE(ret, name, params)                                                      \
  api_.name = reinterpret_cast<decltype(api_.name)>(dlsym(handle, #name));                        \
  if (!api_.name)                                                                                 \
    return library + " has no " #name ": the HIP runtime is older than this plugin supports; " \
                     "install ROCm 5.2 or newer";
  ANVIL_HIP_FUNCTIONS(ANVIL_HIP_RESOLVE)
#undef ANVIL_HIP_RESOLVE
  loaded_ = true;
  return "";
}

std::string HipRuntime::Enumerate() {
  hipError_t result = api_.hipInit(0);
  if (result != kHipSuccess) {
    std::string why = "hipInit failed: " + ErrorName(result);
    if (ErrorString(result) != ErrorName(result)) why += " (" + ErrorString(result) + ")";
    // What ROCm 5.2 answers on a machine without a GPU (or without access
    // to the kernel driver's /dev/kfd).
    if (result == kHipErrorInvalidDevice || result == kHipErrorNoDevice)
      why += ": no AMD GPU (or /dev/kfd is missing or not accessible to this user)";
    return why;
  }
  if (api_.hipRuntimeGetVersion(&devices_.runtime_version) != kHipSuccess) devices_.runtime_version = 0;
  int count = 0;
  if (hlo::Status s = Check(api_.hipGetDeviceCount(&count), "hipGetDeviceCount"); !s.ok()) return s.message();
  std::vector<HipDeviceInfo> devices(count);
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    // A device the runtime cannot describe is not one to run on.
    if (hlo::Status s = Describe(ordinal, devices[ordinal]); !s.ok())
      return "device " + std::to_string(ordinal) + ": " + s.message();
  }
  devices_.devices = std::move(devices);
  return "";
}

hlo::Status HipRuntime::Describe(int ordinal, HipDeviceInfo& info) const {
  info.ordinal = ordinal;
  ANVIL_RETURN_IF_ERROR(Check(api_.hipDeviceGet(&info.device, ordinal), "hipDeviceGet"));
  char name[256] = {};
  ANVIL_RETURN_IF_ERROR(Check(api_.hipDeviceGetName(name, sizeof(name) - 1, info.device), "hipDeviceGetName"));
  info.name = name;
  ANVIL_RETURN_IF_ERROR(Check(
      api_.hipDeviceGetAttribute(&info.major, kHipDeviceAttributeComputeCapabilityMajor, ordinal),
      "hipDeviceGetAttribute"));
  ANVIL_RETURN_IF_ERROR(Check(
      api_.hipDeviceGetAttribute(&info.minor, kHipDeviceAttributeComputeCapabilityMinor, ordinal),
      "hipDeviceGetAttribute"));
  ANVIL_RETURN_IF_ERROR(Check(api_.hipDeviceTotalMem(&info.total_memory, info.device), "hipDeviceTotalMem"));
  char bus_id[64] = {};
  ANVIL_RETURN_IF_ERROR(Check(api_.hipDeviceGetPCIBusId(bus_id, sizeof(bus_id) - 1, ordinal), "hipDeviceGetPCIBusId"));
  info.pci_bus_id = bus_id;
  auto target = GfxTargetOf(info.pci_bus_id);
  if (target.ok()) {
    info.gfx_target = *target;
  } else {
    info.gfx_target_unknown = target.status().message();
  }
  return hlo::OkStatus();
}

hlo::Status HipRuntime::Check(hipError_t result, const char* call) const {
  if (result == kHipSuccess) return hlo::OkStatus();
  std::string message = std::string(call) + ": " + ErrorName(result) + ": " + ErrorString(result);
  if (result == kHipErrorOutOfMemory) return hlo::ResourceExhausted(std::move(message));
  return hlo::Internal(std::move(message));
}

std::string HipRuntime::ErrorName(hipError_t result) const {
  const char* name = api_.hipGetErrorName ? api_.hipGetErrorName(result) : nullptr;
  return name && *name ? name : "hipError_t " + std::to_string(result);
}

std::string HipRuntime::ErrorString(hipError_t result) const {
  const char* text = api_.hipGetErrorString ? api_.hipGetErrorString(result) : nullptr;
  return text && *text ? text : "unrecognised error code";
}

}  // namespace anvil::rocm
