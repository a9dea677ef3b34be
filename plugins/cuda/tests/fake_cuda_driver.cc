// A stand-in for libcuda.so.1 that exports the entry points CudaDriver
// resolves, so that enumeration and its failures are tested on machines
// without a GPU. Environment variables, read on each call, choose what it
// reports:
//   ANVIL_FAKE_CUDA_INIT=N      cuInit returns CUresult N
//   ANVIL_FAKE_CUDA_DEVICES=N   N devices (default 2: "Fake A100" 8.0 with
//                               40 GiB, "Fake H100" 9.0 with 80 GiB, ...)
// Built a second time with ANVIL_FAKE_CUDA_WITHOUT_LAUNCH_KERNEL, which
// leaves cuLaunchKernel out, as a too-old driver would lack an entry point.
#include <cstdlib>
#include <cstring>

#include "plugins/cuda/cuda_driver.h"

using namespace anvil::cuda;  // the ABI types

namespace {

constexpr CUresult kNotSupported = 801;  // CUDA_ERROR_NOT_SUPPORTED

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

int Devices() { return EnvInt("ANVIL_FAKE_CUDA_DEVICES", 2); }

}  // namespace

extern "C" {

CUresult cuInit(unsigned) { return EnvInt("ANVIL_FAKE_CUDA_INIT", 0); }
CUresult cuDriverGetVersion(int* version) {
  *version = 13000;
  return 0;
}
CUresult cuDeviceGetCount(int* count) {
  *count = Devices();
  return 0;
}
CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal < 0 || ordinal >= Devices()) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *device = ordinal;
  return 0;
}
CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  std::strncpy(name, device % 2 ? "Fake H100" : "Fake A100", length);
  return 0;
}
CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice device) {
  if (attribute != kCuDeviceAttributeComputeCapabilityMajor && attribute != kCuDeviceAttributeComputeCapabilityMinor)
    return kNotSupported;
  *value = attribute == kCuDeviceAttributeComputeCapabilityMinor ? 0 : device % 2 ? 9 : 8;
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  *bytes = (device % 2 ? 80ull : 40ull) << 30;
  return 0;
}
CUresult cuGetErrorName(CUresult error, const char** name) {
  *name = error == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : error == 100 ? "CUDA_ERROR_NO_DEVICE" : nullptr;
  return *name ? 0 : 1;
}
CUresult cuGetErrorString(CUresult error, const char** text) {
  // Worded apart from CudaDriver's own table, to show whose text is used.
  *text = error == 2 ? "fake: out of memory" : error == 100 ? "fake: no CUDA-capable device is detected" : nullptr;
  return *text ? 0 : 1;
}

// The rest are resolved but not called by the tests.
CUresult cuDevicePrimaryCtxRetain(CUcontext*, CUdevice) { return kNotSupported; }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return kNotSupported; }
CUresult cuCtxSetCurrent(CUcontext) { return kNotSupported; }
CUresult cuCtxPushCurrent_v2(CUcontext) { return kNotSupported; }
CUresult cuCtxPopCurrent_v2(CUcontext*) { return kNotSupported; }
CUresult cuModuleLoadData(CUmodule*, const void*) { return kNotSupported; }
CUresult cuModuleUnload(CUmodule) { return kNotSupported; }
CUresult cuModuleGetFunction(CUfunction*, CUmodule, const char*) { return kNotSupported; }
#ifndef ANVIL_FAKE_CUDA_WITHOUT_LAUNCH_KERNEL
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                        void**, void**) {
  return kNotSupported;
}
#endif
CUresult cuMemAlloc_v2(CUdeviceptr*, size_t) { return 2; }  // out of memory
CUresult cuMemFree_v2(CUdeviceptr) { return kNotSupported; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void*, size_t, CUstream) { return kNotSupported; }
CUresult cuMemcpyDtoHAsync_v2(void*, CUdeviceptr, size_t, CUstream) { return kNotSupported; }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr, CUdeviceptr, size_t, CUstream) { return kNotSupported; }
CUresult cuMemsetD8Async(CUdeviceptr, unsigned char, size_t, CUstream) { return kNotSupported; }
CUresult cuStreamCreate(CUstream*, unsigned) { return kNotSupported; }
CUresult cuStreamSynchronize(CUstream) { return kNotSupported; }
CUresult cuStreamDestroy_v2(CUstream) { return kNotSupported; }
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned) { return kNotSupported; }
CUresult cuEventCreate(CUevent*, unsigned) { return kNotSupported; }
CUresult cuEventRecord(CUevent, CUstream) { return kNotSupported; }
CUresult cuEventSynchronize(CUevent) { return kNotSupported; }
CUresult cuEventDestroy_v2(CUevent) { return kNotSupported; }

}  // extern "C"
