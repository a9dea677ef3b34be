// The CUDA driver API, opened at run time from libcuda.so.1 (the NVIDIA
// driver installs it; the toolkit does not). Nothing links against it and
// cuda.h is never included, so the CUDA plugin builds without a toolkit and
// loads on a machine without a driver, where it reports zero devices and why.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hlo/status.h"

namespace anvil::cuda {

// Our own declarations of the few driver API types used. They follow the
// driver API's documented C ABI (the CUDA Driver API reference and cuda.h;
// NVIDIA keeps an exported entry point's ABI fixed and adds a _v2, _v3 ...
// symbol when it must change one): CUresult, CUdevice and the attribute enum
// are C ints, CUdeviceptr is an unsigned 64-bit integer on 64-bit hosts, and
// contexts, modules, functions, streams and events are opaque pointers.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;

// The enum values used, as cuda.h numbers them.
inline constexpr CUresult kCudaSuccess = 0;
inline constexpr CUresult kCudaErrorOutOfMemory = 2;
inline constexpr CUresult kCudaErrorNoDevice = 100;
inline constexpr int kCuDeviceAttributeComputeCapabilityMajor = 75;
inline constexpr int kCuDeviceAttributeComputeCapabilityMinor = 76;
inline constexpr unsigned kCuStreamNonBlocking = 0x1;   // CU_STREAM_NON_BLOCKING
inline constexpr unsigned kCuEventDisableTiming = 0x2;  // CU_EVENT_DISABLE_TIMING

// X(member, exported symbol, parameters): every entry point resolved. The
// member carries the documented name; the symbol is the versioned one the
// driver exports where cuda.h maps the name onto one (cuMemAlloc is
// cuMemAlloc_v2), so the old ABI of the plain name is never called. The
// legacy default stream's names are used (no _ptsz): the plugin makes its
// own streams.
#define ANVIL_CUDA_DRIVER_FUNCTIONS(X)                                                                   \
  X(cuInit, cuInit, (unsigned flags))                                                                    \
  X(cuDriverGetVersion, cuDriverGetVersion, (int* version))                                              \
  X(cuDeviceGetCount, cuDeviceGetCount, (int* count))                                                    \
  X(cuDeviceGet, cuDeviceGet, (CUdevice * device, int ordinal))                                          \
  X(cuDeviceGetName, cuDeviceGetName, (char* name, int length, CUdevice device))                         \
  X(cuDeviceGetAttribute, cuDeviceGetAttribute, (int* value, int attribute, CUdevice device))            \
  X(cuDeviceTotalMem, cuDeviceTotalMem_v2, (size_t * bytes, CUdevice device))                            \
  X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, (CUcontext * context, CUdevice device))          \
  X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, (CUdevice device))                          \
  X(cuCtxSetCurrent, cuCtxSetCurrent, (CUcontext context))                                               \
  X(cuCtxPushCurrent, cuCtxPushCurrent_v2, (CUcontext context))                                          \
  X(cuCtxPopCurrent, cuCtxPopCurrent_v2, (CUcontext * context))                                          \
  X(cuModuleLoadData, cuModuleLoadData, (CUmodule * module, const void* image))                          \
  X(cuModuleUnload, cuModuleUnload, (CUmodule module))                                                   \
  X(cuModuleGetFunction, cuModuleGetFunction, (CUfunction * function, CUmodule module, const char* name)) \
  X(cuLaunchKernel, cuLaunchKernel,                                                                      \
    (CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,           \
     unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream, void** params,          \
     void** extra))                                                                                      \
  X(cuMemAlloc, cuMemAlloc_v2, (CUdeviceptr * pointer, size_t bytes))                                    \
  X(cuMemFree, cuMemFree_v2, (CUdeviceptr pointer))                                                      \
  X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2,                                                             \
    (CUdeviceptr destination, const void* source, size_t bytes, CUstream stream))                        \
  X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2,                                                             \
    (void* destination, CUdeviceptr source, size_t bytes, CUstream stream))                              \
  X(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2,                                                             \
    (CUdeviceptr destination, CUdeviceptr source, size_t bytes, CUstream stream))                        \
  X(cuMemsetD8Async, cuMemsetD8Async, (CUdeviceptr destination, unsigned char value, size_t count,       \
                                       CUstream stream))                                                 \
  X(cuStreamCreate, cuStreamCreate, (CUstream * stream, unsigned flags))                                 \
  X(cuStreamSynchronize, cuStreamSynchronize, (CUstream stream))                                         \
  X(cuStreamDestroy, cuStreamDestroy_v2, (CUstream stream))                                              \
  X(cuStreamWaitEvent, cuStreamWaitEvent, (CUstream stream, CUevent event, unsigned flags))              \
  X(cuEventCreate, cuEventCreate, (CUevent * event, unsigned flags))                                     \
  X(cuEventRecord, cuEventRecord, (CUevent event, CUstream stream))                                      \
  X(cuEventSynchronize, cuEventSynchronize, (CUevent event))                                             \
  X(cuEventDestroy, cuEventDestroy_v2, (CUevent event))                                                  \
  X(cuGetErrorName, cuGetErrorName, (CUresult error, const char** name))                                 \
  X(cuGetErrorString, cuGetErrorString, (CUresult error, const char** text))

// The driver's entry points; all non-null once the driver has loaded.
struct CudaApi {
#define ANVIL_CUDA_DECLARE(member, symbol, params) CUresult (*member) params = nullptr;
  ANVIL_CUDA_DRIVER_FUNCTIONS(ANVIL_CUDA_DECLARE)
#undef ANVIL_CUDA_DECLARE
};

struct CudaDeviceInfo {
  int ordinal = 0;
  CUdevice device = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  size_t total_memory = 0;  // bytes
  int sm() const { return compute_major * 10 + compute_minor; }  // 90 for compute capability 9.0
};

// Either devices, or (devices empty) the reason there are none, in words a
// person can act on.
struct CudaDeviceList {
  std::vector<CudaDeviceInfo> devices;
  std::string reason;
  int driver_version = 0;  // cuDriverGetVersion's 1000 * major + 10 * minor; 0 if unknown
};

class CudaDriver {
 public:
  // The process's driver: libcuda.so.1 (or the library
  // ANVIL_CUDA_DRIVER_LIBRARY names), loaded and enumerated on the first
  // call (thread-safe) and never unloaded, since the driver keeps threads
  // and contexts for the process's life.
  static const CudaDriver& Get();

  // A driver opened from `library` (a path or a soname). Tests load fakes
  // and the toolkit's stub this way; the plugin uses Get().
  explicit CudaDriver(const std::string& library);
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  // Whether every entry point resolved (api() is usable; cuInit may still
  // have failed, which DeviceList() says).
  bool loaded() const { return loaded_; }
  const CudaApi& api() const { return api_; }
  const CudaDeviceList& DeviceList() const { return devices_; }

  // OK for kCudaSuccess; otherwise "cuFoo: CUDA_ERROR_X: <driver's text>"
  // for the call named `call`, RESOURCE_EXHAUSTED for out of memory and
  // INTERNAL for the rest.
  hlo::Status Check(CUresult result, const char* call) const;
  // "CUDA_ERROR_NO_DEVICE" and "no CUDA-capable device is detected", from
  // the driver, or from a short table of our own when the driver cannot
  // say (the toolkit's stub library answers no question).
  std::string ErrorName(CUresult result) const;
  std::string ErrorString(CUresult result) const;

 private:
  std::string Load(const std::string& library);  // "" or why it failed
  std::string Enumerate();                       // "" or why there are no devices
  hlo::Status Describe(int ordinal, CudaDeviceInfo& info) const;

  bool loaded_ = false;
  CudaApi api_;
  CudaDeviceList devices_;
};

// Makes `context` the calling thread's current context while it lives and
// restores the one before it afterwards (cuCtxPushCurrent/cuCtxPopCurrent):
// the plugin's entry points also run on the application's own threads, whose
// CUDA context (another library's, another device's) must survive them.
class ContextScope {
 public:
  ContextScope(const CudaDriver& driver, CUcontext context) : driver_(driver) {
    status_ = driver.Check(driver.api().cuCtxPushCurrent(context), "cuCtxPushCurrent");
  }
  ~ContextScope() {
    CUcontext popped = nullptr;
    if (status_.ok()) driver_.api().cuCtxPopCurrent(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
  // OK once the context is current.
  const hlo::Status& status() const { return status_; }

 private:
  const CudaDriver& driver_;
  hlo::Status status_;
};

}  // namespace anvil::cuda
