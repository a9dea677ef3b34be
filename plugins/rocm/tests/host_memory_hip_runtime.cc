// A stand-in for libamdhip64.so.5 on machines without an AMD GPU, for the
// ROCm plugin's execution path (ANVIL_HIP_RUNTIME_LIBRARY names it): one
// device, "Host-memory HIP stand-in" at PCI 0000:c1:00.0 (tests/kfd_nodes,
// named by ANVIL_KFD_TOPOLOGY, says it is a gfx90a), whose device memory is
// zero-filled host memory and whose copies are real. Kernels do not run: a
// launch only checks what it was handed (a function of a live AMD GPU code
// object, a table address inside a live allocation, every address in the
// tables after it inside live memory) and counts itself. Every call checks
// its handles and ranges; anvil_fake_hip_counts() tells a test what it saw
// and what is still alive.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "plugins/gpu/tests/host_memory_device.h"
#include "plugins/rocm/hip_runtime.h"

using namespace anvil::rocm;  // the ABI types

namespace {

constexpr hipError_t kInvalidValue = 1, kOutOfMemory = 2, kInvalidImage = 200, kNotFound = 500,
                     kInvalidHandle = 400;

struct State : anvil::gpu::testing::HostMemoryDevice {
  std::map<uintptr_t, std::string> modules;  // handle -> the code object
  std::set<uintptr_t> functions;
};

State& S() {
  static State* state = new State;
  return *state;
}

}  // namespace

extern "C" {

// Makes the device busy (1) or idle again (0): see HostMemoryDevice::held.
__attribute__((visibility("default"))) void anvil_fake_hip_hold_streams(int on) { S().Hold(on != 0); }

// How many stream waits the hold is blocking now.
__attribute__((visibility("default"))) long anvil_fake_hip_waiting() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.waiting;
}

__attribute__((visibility("default"))) void anvil_fake_hip_counts(long* live_allocations, long* live_modules,
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

__attribute__((visibility("default"))) long anvil_fake_hip_allocations_made() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.allocations_made;
}

hipError_t hipInit(unsigned) { return kHipSuccess; }
hipError_t hipRuntimeGetVersion(int* version) {
  *version = 50221153;
  return kHipSuccess;
}
hipError_t hipGetDeviceCount(int* count) {
  *count = 1;
  return kHipSuccess;
}
hipError_t hipDeviceGet(hipDevice_t* device, int ordinal) {
  if (ordinal != 0) return kHipErrorInvalidDevice;
  *device = 0;
  return kHipSuccess;
}
hipError_t hipDeviceGetName(char* name, int length, hipDevice_t) {
  std::strncpy(name, "Host-memory HIP stand-in", length);
  return kHipSuccess;
}
hipError_t hipDeviceGetAttribute(int* value, int attribute, int) {
  if (attribute == kHipDeviceAttributeComputeCapabilityMajor) *value = 9;
  else if (attribute == kHipDeviceAttributeComputeCapabilityMinor) *value = 0;
  else return kInvalidValue;
  return kHipSuccess;
}
hipError_t hipDeviceGetPCIBusId(char* bus_id, int length, int device) {
  if (device != 0) return kHipErrorInvalidDevice;
  std::snprintf(bus_id, length, "0000:c1:00.0");
  return kHipSuccess;
}
hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t) {
  *bytes = size_t{1} << 30;
  return kHipSuccess;
}
hipError_t hipGetDevice(int* device) {
  *device = 0;
  return kHipSuccess;
}
hipError_t hipSetDevice(int device) {
  std::lock_guard<std::mutex> lock(S().mutex);
  return device == 0 ? kHipSuccess : S().Bad(kHipErrorInvalidDevice);
}

hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  // An AMD GPU code object: ELF, e_machine EM_AMDGPU (224).
  const auto* bytes = static_cast<const unsigned char*>(image);
  if (!bytes || std::memcmp(bytes, "\x7f" "ELF", 4) != 0 || (bytes[18] | bytes[19] << 8) != 224) {
    return s.Bad(kInvalidImage);
  }
  // The section headers end the file (offset e_shoff + e_shnum * e_shentsize).
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0;
  std::memcpy(&shoff, bytes + 40, 8);
  std::memcpy(&shentsize, bytes + 58, 2);
  std::memcpy(&shnum, bytes + 60, 2);
  auto* m = new int(0);
  s.modules.emplace(reinterpret_cast<uintptr_t>(m),
                    std::string(reinterpret_cast<const char*>(bytes), shoff + uint64_t{shentsize} * shnum));
  *module = reinterpret_cast<hipModule_t>(m);
  return kHipSuccess;
}
hipError_t hipModuleUnload(hipModule_t module) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.modules.erase(reinterpret_cast<uintptr_t>(module))) return s.Bad(kInvalidHandle);
  delete reinterpret_cast<int*>(module);
  return kHipSuccess;
}
hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* name) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto m = s.modules.find(reinterpret_cast<uintptr_t>(module));
  if (m == s.modules.end()) return s.Bad(kInvalidHandle);
  // The entry's name, NUL-terminated, in the object's string table.
  if (m->second.find(std::string(name) + '\0') == std::string::npos) return s.Bad(kNotFound);
  auto* f = new std::string(name);  // never freed: functions die with their module, as HIP's do
  s.functions.insert(reinterpret_cast<uintptr_t>(f));
  *function = reinterpret_cast<hipFunction_t>(f);
  return kHipSuccess;
}

hipError_t hipModuleLaunchKernel(hipFunction_t function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                 unsigned block_x, unsigned block_y, unsigned block_z, unsigned, hipStream_t stream,
                                 void** params, void** extra) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.functions.count(reinterpret_cast<uintptr_t>(function)) || !s.StreamOk(stream)) return s.Bad(kInvalidHandle);
  if (!grid_x || grid_y != 1 || grid_z != 1 || !block_x || block_x > 1024 || block_y != 1 || block_z != 1 ||
      !params || extra) {
    return s.Bad(kInvalidValue);
  }
  s.CheckLaunch(*static_cast<const uint64_t*>(params[0]));  // the kernel's one parameter: its table
  return kHipSuccess;
}

hipError_t hipMalloc(void** pointer, size_t bytes) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!bytes) return s.Bad(kInvalidValue);
  void* p = s.Allocate(bytes);
  if (!p) return kOutOfMemory;
  *pointer = p;
  return kHipSuccess;
}
hipError_t hipFree(void* pointer) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.Free(reinterpret_cast<uintptr_t>(pointer)) ? kHipSuccess : s.Bad(kInvalidValue);
}
hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t destination, const void* source, size_t bytes, hipStream_t stream) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.StreamOk(stream) || !s.Live(reinterpret_cast<uintptr_t>(destination), bytes)) return s.Bad(kInvalidValue);
  std::memcpy(destination, source, bytes);
  return kHipSuccess;
}
hipError_t hipMemcpyDtoHAsync(void* destination, hipDeviceptr_t source, size_t bytes, hipStream_t stream) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.StreamOk(stream) || !s.Live(reinterpret_cast<uintptr_t>(source), bytes)) return s.Bad(kInvalidValue);
  std::memcpy(destination, source, bytes);
  return kHipSuccess;
}
hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t destination, hipDeviceptr_t source, size_t bytes, hipStream_t stream) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.StreamOk(stream) || !s.Live(reinterpret_cast<uintptr_t>(source), bytes) ||
      !s.Live(reinterpret_cast<uintptr_t>(destination), bytes)) {
    return s.Bad(kInvalidValue);
  }
  std::memmove(destination, source, bytes);
  return kHipSuccess;
}

hipError_t hipStreamCreateWithFlags(hipStream_t* stream, unsigned) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  *stream = static_cast<hipStream_t>(s.NewStream());
  return kHipSuccess;
}
hipError_t hipStreamSynchronize(hipStream_t stream) {
  State& s = S();
  std::unique_lock<std::mutex> lock(s.mutex);
  if (!s.StreamOk(stream)) return s.Bad(kInvalidHandle);
  s.WaitWhileHeld(stream, lock);
  return kHipSuccess;
}
hipError_t hipStreamDestroy(hipStream_t stream) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.DestroyStream(stream) ? kHipSuccess : s.Bad(kInvalidHandle);
}
const char* hipGetErrorName(hipError_t error) {
  return error == kInvalidValue ? "hipErrorInvalidValue" : error == kOutOfMemory ? "hipErrorOutOfMemory"
                                                                                 : "hipErrorUnknown";
}
const char* hipGetErrorString(hipError_t error) {
  return error == kInvalidValue ? "invalid argument" : error == kOutOfMemory ? "out of memory" : "unknown error";
}

}  // extern "C"
