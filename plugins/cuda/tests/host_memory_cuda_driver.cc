// A stand-in for libcuda.so.1 on machines without a GPU, for the CUDA
// plugin's execution path (ANVIL_CUDA_DRIVER_LIBRARY names it): one device,
// "Host-memory CUDA stand-in", compute capability 9.0, whose device memory
// is zero-filled host memory and whose copies are real. Kernels do not run:
// a launch only checks what it was handed (a live cubin's entry, a table
// address inside a live allocation, every address in the tables after it
// inside live memory) and counts itself. Every call checks its handles and
// ranges; anvil_fake_cuda_counts() tells a test what it saw and what is
// still alive.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "plugins/cuda/cuda_driver.h"
#include "plugins/gpu/tests/host_memory_device.h"

using namespace anvil::cuda;  // the ABI types

namespace {

constexpr CUresult kInvalidValue = 1, kOutOfMemory = 2, kInvalidImage = 200, kInvalidContext = 201,
                   kNotFound = 500, kInvalidHandle = 400;

CUcontext const kContext = reinterpret_cast<CUcontext>(uintptr_t{0x1000});

struct State : anvil::gpu::testing::HostMemoryDevice {
  std::set<uintptr_t> modules;
};

State& S() {
  static State* state = new State;
  return *state;
}

// The depth of each thread's context stack; the plugin must pop what it pushed.
thread_local int pushed = 0;

}  // namespace

extern "C" {

// Makes the device busy (1) or idle again (0): see HostMemoryDevice::held.
__attribute__((visibility("default"))) void anvil_fake_cuda_hold_streams(int on) { S().Hold(on != 0); }

// How many stream waits the hold is blocking now.
__attribute__((visibility("default"))) long anvil_fake_cuda_waiting() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.waiting;
}

__attribute__((visibility("default"))) void anvil_fake_cuda_counts(long* live_allocations, long* live_modules,
                                                                   long* live_streams, long* launches,
                                                                   long* bad_addresses, long* bad_calls) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  *live_allocations = static_cast<long>(s.allocations.size());
  *live_modules = static_cast<long>(s.modules.size());
  *live_streams = static_cast<long>(s.streams.size());
  *launches = s.launches;
  *bad_addresses = s.bad_addresses;
  *bad_calls = s.bad_calls;
}

// How many cuMemAlloc calls succeeded so far.
__attribute__((visibility("default"))) long anvil_fake_cuda_allocations_made() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.allocations_made;
}

CUresult cuInit(unsigned) { return kCudaSuccess; }
CUresult cuDriverGetVersion(int* version) {
  *version = 13000;
  return kCudaSuccess;
}
CUresult cuDeviceGetCount(int* count) {
  *count = 1;
  return kCudaSuccess;
}
CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal != 0) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *device = 0;
  return kCudaSuccess;
}
CUresult cuDeviceGetName(char* name, int length, CUdevice) {
  std::strncpy(name, "Host-memory CUDA stand-in", length);
  return kCudaSuccess;
}
CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice) {
  if (attribute == kCuDeviceAttributeComputeCapabilityMajor) *value = 9;
  else if (attribute == kCuDeviceAttributeComputeCapabilityMinor) *value = 0;
  else return kInvalidValue;
  return kCudaSuccess;
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice) {
  *bytes = size_t{1} << 30;
  return kCudaSuccess;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice) {
  *context = kContext;
  return kCudaSuccess;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return kCudaSuccess; }
CUresult cuCtxSetCurrent(CUcontext context) {
  std::lock_guard<std::mutex> lock(S().mutex);
  return context == kContext ? kCudaSuccess : S().Bad(kInvalidContext);
}
CUresult cuCtxPushCurrent_v2(CUcontext context) {
  std::lock_guard<std::mutex> lock(S().mutex);
  if (context != kContext) return S().Bad(kInvalidContext);
  ++pushed;
  return kCudaSuccess;
}
CUresult cuCtxPopCurrent_v2(CUcontext* context) {
  std::lock_guard<std::mutex> lock(S().mutex);
  if (pushed == 0) return S().Bad(kInvalidContext);
  --pushed;
  if (context) *context = kContext;
  return kCudaSuccess;
}

CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!image || std::memcmp(image, "\x7f" "ELF", 4) != 0) return s.Bad(kInvalidImage);  // cubins are ELF
  auto* m = new int(0);
  s.modules.insert(reinterpret_cast<uintptr_t>(m));
  *module = reinterpret_cast<CUmodule>(m);
  return kCudaSuccess;
}
CUresult cuModuleUnload(CUmodule module) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.modules.erase(reinterpret_cast<uintptr_t>(module))) return s.Bad(kInvalidHandle);
  delete reinterpret_cast<int*>(module);
  return kCudaSuccess;
}
CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.modules.count(reinterpret_cast<uintptr_t>(module))) return s.Bad(kInvalidHandle);
  if (std::strcmp(name, "anvil_kernel") != 0) return s.Bad(kNotFound);
  *function = reinterpret_cast<CUfunction>(module);  // a module's one function
  return kCudaSuccess;
}

CUresult cuLaunchKernel(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                        unsigned block_y, unsigned block_z, unsigned, CUstream stream, void** params, void** extra) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.modules.count(reinterpret_cast<uintptr_t>(function)) || !s.StreamOk(stream)) return s.Bad(kInvalidHandle);
  if (!grid_x || grid_y != 1 || grid_z != 1 || !block_x || block_x > 1024 || block_y != 1 || block_z != 1 ||
      !params || extra) {
    return s.Bad(kInvalidValue);
  }
  // The kernel's one parameter: the device address of its table.
  s.CheckLaunch(*static_cast<const uint64_t*>(params[0]));
  return kCudaSuccess;
}

CUresult cuMemAlloc_v2(CUdeviceptr* pointer, size_t bytes) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!bytes) return s.Bad(kInvalidValue);  // as the driver refuses zero bytes
  void* p = s.Allocate(bytes);
  if (!p) return kOutOfMemory;
  *pointer = reinterpret_cast<uintptr_t>(p);
  return kCudaSuccess;
}
CUresult cuMemFree_v2(CUdeviceptr pointer) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.Free(pointer) ? kCudaSuccess : s.Bad(kInvalidValue);
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr destination, const void* source, size_t bytes, CUstream stream) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.StreamOk(stream) || !s.Live(destination, bytes)) return s.Bad(kInvalidValue);
  std::memcpy(reinterpret_cast<void*>(destination), source, bytes);
  return kCudaSuccess;
}
CUresult cuMemcpyDtoHAsync_v2(void* destination, CUdeviceptr source, size_t bytes, CUstream stream) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.StreamOk(stream) || !s.Live(source, bytes)) return s.Bad(kInvalidValue);
  std::memcpy(destination, reinterpret_cast<const void*>(source), bytes);
  return kCudaSuccess;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr destination, CUdeviceptr source, size_t bytes, CUstream stream) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.StreamOk(stream) || !s.Live(source, bytes) || !s.Live(destination, bytes)) return s.Bad(kInvalidValue);
  std::memmove(reinterpret_cast<void*>(destination), reinterpret_cast<const void*>(source), bytes);
  return kCudaSuccess;
}
CUresult cuMemsetD8Async(CUdeviceptr destination, unsigned char value, size_t count, CUstream stream) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.StreamOk(stream) || !s.Live(destination, count)) return s.Bad(kInvalidValue);
  std::memset(reinterpret_cast<void*>(destination), value, count);
  return kCudaSuccess;
}

CUresult cuStreamCreate(CUstream* stream, unsigned) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  *stream = static_cast<CUstream>(s.NewStream());
  return kCudaSuccess;
}
CUresult cuStreamSynchronize(CUstream stream) {
  State& s = S();
  std::unique_lock<std::mutex> lock(s.mutex);
  if (!s.StreamOk(stream)) return s.Bad(kInvalidHandle);
  s.WaitWhileHeld(stream, lock);
  return kCudaSuccess;
}
CUresult cuStreamDestroy_v2(CUstream stream) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.DestroyStream(stream) ? kCudaSuccess : s.Bad(kInvalidHandle);
}
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned) { return kCudaSuccess; }
CUresult cuEventCreate(CUevent* event, unsigned) {
  *event = reinterpret_cast<CUevent>(uintptr_t{0x2000});
  return kCudaSuccess;
}
CUresult cuEventRecord(CUevent, CUstream) { return kCudaSuccess; }
CUresult cuEventSynchronize(CUevent) { return kCudaSuccess; }
CUresult cuEventDestroy_v2(CUevent) { return kCudaSuccess; }
CUresult cuGetErrorName(CUresult error, const char** name) {
  *name = error == kInvalidValue ? "CUDA_ERROR_INVALID_VALUE" : error == kOutOfMemory ? "CUDA_ERROR_OUT_OF_MEMORY"
                                                                                       : nullptr;
  return *name ? kCudaSuccess : kInvalidValue;
}
CUresult cuGetErrorString(CUresult error, const char** text) {
  *text = error == kInvalidValue ? "invalid argument" : error == kOutOfMemory ? "out of memory" : nullptr;
  return *text ? kCudaSuccess : kInvalidValue;
}

}  // extern "C"
