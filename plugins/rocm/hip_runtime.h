// ROCm's HIP runtime, opened at run time from libamdhip64.so.5 (then
// libamdhip64.so). Nothing links against it and no HIP header is included,
// so the ROCm plugin builds anywhere and loads on a machine without ROCm or
// without an AMD GPU, where it reports zero devices and why.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hlo/status.h"

namespace anvil::rocm {

// Our own declarations of the few HIP types used, following HIP's C ABI
// (hip_runtime_api.h, driver_types.h): hipError_t, hipDevice_t and the
// attribute enum are C ints, device pointers are void*, modules, functions
// and streams opaque pointers.
using hipError_t = int;
using hipDevice_t = int;
using hipDeviceptr_t = void*;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hipStream_t = struct ihipStream_t*;

// The values used, as HIP 5.2's headers number them.
inline constexpr hipError_t kHipSuccess = 0;
inline constexpr hipError_t kHipErrorOutOfMemory = 2;
inline constexpr hipError_t kHipErrorNoDevice = 100;
inline constexpr hipError_t kHipErrorInvalidDevice = 101;
inline constexpr int kHipDeviceAttributeComputeCapabilityMajor = 23;
inline constexpr int kHipDeviceAttributeComputeCapabilityMinor = 61;
inline constexpr unsigned kHipStreamNonBlocking = 0x01;

// X(return type, name, parameters): every entry point resolved. All are
// plain C symbols of libamdhip64 (hipGetDeviceProperties is not used: its
// struct's layout changes between releases, so a device's gfx target comes
// from the kernel driver's topology instead).
#define ANVIL_HIP_FUNCTIONS(X)                                                                         \
  X(hipError_t, hipInit, (unsigned flags))                                                             \
  X(hipError_t, hipRuntimeGetVersion, (int* version))                                                  \
  X(hipError_t, hipGetDeviceCount, (int* count))                                                       \
  X(hipError_t, hipDeviceGet, (hipDevice_t * device, int ordinal))                                     \
  X(hipError_t, hipDeviceGetName, (char* name, int length, hipDevice_t device))                        \
  X(hipError_t, hipDeviceGetAttribute, (int* value, int attribute, int device))                        \
  X(hipError_t, hipDeviceGetPCIBusId, (char* bus_id, int length, int device))                          \
  X(hipError_t, hipDeviceTotalMem, (size_t * bytes, hipDevice_t device))                               \
  X(hipError_t, hipGetDevice, (int* device))                                                           \
  X(hipError_t, hipSetDevice, (int device))                                                            \
  X(hipError_t, hipMalloc, (void** pointer, size_t bytes))                                             \
  X(hipError_t, hipFree, (void* pointer))                                                              \
  X(hipError_t, hipMemcpyHtoDAsync,                                                                    \
    (hipDeviceptr_t destination, const void* source, size_t bytes, hipStream_t stream))                \
  X(hipError_t, hipMemcpyDtoHAsync, (void* destination, hipDeviceptr_t source, size_t bytes, hipStream_t stream)) \
  X(hipError_t, hipMemcpyDtoDAsync,                                                                    \
    (hipDeviceptr_t destination, hipDeviceptr_t source, size_t bytes, hipStream_t stream))             \
  X(hipError_t, hipModuleLoadData, (hipModule_t * module, const void* image))                          \
  X(hipError_t, hipModuleUnload, (hipModule_t module))                                                 \
  X(hipError_t, hipModuleGetFunction, (hipFunction_t * function, hipModule_t module, const char* name)) \
  X(hipError_t, hipModuleLaunchKernel,                                                                 \
    (hipFunction_t function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,      \
     unsigned block_y, unsigned block_z, unsigned shared_bytes, hipStream_t stream, void** params,     \
     void** extra))                                                                                    \
  X(hipError_t, hipStreamCreateWithFlags, (hipStream_t * stream, unsigned flags))                      \
  X(hipError_t, hipStreamDestroy, (hipStream_t stream))                                                \
  X(hipError_t, hipStreamSynchronize, (hipStream_t stream))                                            \
  X(const char*, hipGetErrorName, (hipError_t error))                                                  \
  X(const char*, hipGetErrorString, (hipError_t error))

struct HipApi {
#define ANVIL_HIP_DECLARE(ret, name, params) ret (*name) params = nullptr;
  ANVIL_HIP_FUNCTIONS(ANVIL_HIP_DECLARE)
#undef ANVIL_HIP_DECLARE
};

struct HipDeviceInfo {
  int ordinal = 0;
  hipDevice_t device = 0;
  std::string name;
  int major = 0, minor = 0;  // the gfx version's (9 and 0 for gfx90a)
  size_t total_memory = 0;   // bytes
  std::string pci_bus_id;    // "0000:03:00.0"
  // The gfx target its code must be compiled for ("gfx90a"), from the
  // kernel driver's topology (kfd_topology.h); empty, and why, when unknown.
  std::string gfx_target, gfx_target_unknown;
};

// Either devices, or (devices empty) the reason there are none, in words a
// person can act on.
struct HipDeviceList {
  std::vector<HipDeviceInfo> devices;
  std::string reason;
  int runtime_version = 0;  // hipRuntimeGetVersion's; 0 if unknown
};

class HipRuntime {
 public:
  // The process's runtime: libamdhip64.so.5, else libamdhip64.so (or only
  // the library ANVIL_HIP_RUNTIME_LIBRARY names), loaded and enumerated on
  // the first call (thread-safe) and never unloaded.
  static const HipRuntime& Get();

  // A runtime opened from the first of `libraries` (paths or sonames) that
  // loads; the reason names the first when none does. Tests load fakes
  // this way; the plugin uses Get().
  explicit HipRuntime(const std::vector<std::string>& libraries);
  HipRuntime(const HipRuntime&) = delete;
  HipRuntime& operator=(const HipRuntime&) = delete;

  bool loaded() const { return loaded_; }  // every entry point resolved
  const HipApi& api() const { return api_; }
  const HipDeviceList& DeviceList() const { return devices_; }

  // OK for kHipSuccess; otherwise "hipFoo: hipErrorX: <runtime's text>",
  // RESOURCE_EXHAUSTED for out of memory and INTERNAL for the rest.
  hlo::Status Check(hipError_t result, const char* call) const;
  std::string ErrorName(hipError_t result) const;
  std::string ErrorString(hipError_t result) const;

 private:
  std::string Load(const std::vector<std::string>& libraries);  // "" or why it failed
  std::string Enumerate();                                      // "" or why there are no devices
  hlo::Status Describe(int ordinal, HipDeviceInfo& info) const;

  bool loaded_ = false;
  HipApi api_;
  HipDeviceList devices_;
};

}  // namespace anvil::rocm
