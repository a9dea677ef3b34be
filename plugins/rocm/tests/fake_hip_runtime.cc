// A stand-in for libamdhip64.so.5 exporting the entry points HipRuntime
// resolves, so that enumeration and its failures are tested without a GPU.
// Environment variables, read on each call, choose what it reports:
//   ANVIL_FAKE_HIP_INIT=N      hipInit returns hipError_t N
//   ANVIL_FAKE_HIP_DEVICES=N   N devices (default 2: "Fake MI210" gfx 9.0
//                              with 64 GiB, "Fake RX 7900" 11.0 with 24 GiB)
// Built a second time with ANVIL_FAKE_HIP_WITHOUT_LAUNCH_KERNEL, which
// leaves hipModuleLaunchKernel out, as a too-old runtime would.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "plugins/rocm/hip_runtime.h"

using namespace anvil::rocm;  // the ABI types

namespace {

constexpr hipError_t kNotSupported = 801;  // hipErrorNotSupported

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

int Devices() { return EnvInt("ANVIL_FAKE_HIP_DEVICES", 2); }

}  // namespace

extern "C" {

hipError_t hipInit(unsigned) { return EnvInt("ANVIL_FAKE_HIP_INIT", 0); }
hipError_t hipRuntimeGetVersion(int* version) {
  *version = 50221153;
  return 0;
}
hipError_t hipGetDeviceCount(int* count) {
  *count = Devices();
  return 0;
}
hipError_t hipDeviceGet(hipDevice_t* device, int ordinal) {
  if (ordinal < 0 || ordinal >= Devices()) return kHipErrorInvalidDevice;
  *device = ordinal;
  return 0;
}
hipError_t hipDeviceGetName(char* name, int length, hipDevice_t device) {
  std::strncpy(name, device % 2 ? "Fake RX 7900" : "Fake MI210", length);
  return 0;
}
hipError_t hipDeviceGetAttribute(int* value, int attribute, int device) {
  if (attribute == kHipDeviceAttributeComputeCapabilityMajor) *value = device % 2 ? 11 : 9;
  else if (attribute == kHipDeviceAttributeComputeCapabilityMinor) *value = 0;
  else return kNotSupported;
  return 0;
}
hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device) {
  *bytes = (device % 2 ? 24ull : 64ull) << 30;
  return 0;
}
const char* hipGetErrorName(hipError_t error) {
  return error == 2 ? "hipErrorOutOfMemory" : error == 100 ? "hipErrorNoDevice" : error == 101 ? "hipErrorInvalidDevice"
                                                                                                 : "hipErrorUnknown";
}
const char* hipGetErrorString(hipError_t error) {
  // Worded apart from the names, to show whose text is used; ROCm 5.2's
  // own text for an invalid device is its name.
  return error == 2     ? "fake: out of memory"
         : error == 100 ? "fake: no ROCm-capable device is detected"
         : error == 101 ? "hipErrorInvalidDevice"
                        : "";
}

hipError_t hipDeviceGetPCIBusId(char* bus_id, int length, int device) {
  std::snprintf(bus_id, length, "0000:%02x:00.0", 3 + device);
  return 0;
}

// The rest are resolved but not called by the tests.
hipError_t hipGetDevice(int*) { return kNotSupported; }
hipError_t hipSetDevice(int) { return kNotSupported; }
hipError_t hipMalloc(void**, size_t) { return kHipErrorOutOfMemory; }
hipError_t hipFree(void*) { return kNotSupported; }
hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t, const void*, size_t, hipStream_t) { return kNotSupported; }
hipError_t hipMemcpyDtoHAsync(void*, hipDeviceptr_t, size_t, hipStream_t) { return kNotSupported; }
hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t, hipDeviceptr_t, size_t, hipStream_t) { return kNotSupported; }
hipError_t hipStreamCreateWithFlags(hipStream_t*, unsigned) { return kNotSupported; }
hipError_t hipStreamDestroy(hipStream_t) { return kNotSupported; }
hipError_t hipModuleLoadData(hipModule_t*, const void*) { return kNotSupported; }
hipError_t hipModuleUnload(hipModule_t) { return kNotSupported; }
hipError_t hipModuleGetFunction(hipFunction_t*, hipModule_t, const char*) { return kNotSupported; }
#ifndef ANVIL_FAKE_HIP_WITHOUT_LAUNCH_KERNEL
hipError_t hipModuleLaunchKernel(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 hipStream_t, void**, void**) {
  return kNotSupported;
}
#endif
hipError_t hipStreamSynchronize(hipStream_t) { return kNotSupported; }

}  // extern "C"
