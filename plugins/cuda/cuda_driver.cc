#include "plugins/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <utility>

namespace anvil::cuda {
namespace {

// What cuGetErrorName/String would say for the results a person is most
// likely to meet before a working driver can answer: the toolkit's stub
// library (linked by mistake, or found first on LD_LIBRARY_PATH) returns
// CUDA_ERROR_STUB_LIBRARY from every call, these two included.
struct KnownError {
  CUresult result;
  const char* name;
  const char* text;
};
constexpr KnownError kKnownErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER", "CUDA driver version is insufficient for CUDA runtime version"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const KnownError* FindKnown(CUresult result) {
  for (const KnownError& e : kKnownErrors)
    if (e.result == result) return &e;
  return nullptr;
}

}  // namespace

const CudaDriver& CudaDriver::Get() {
  // A function-local static is initialised once even when threads race to
  // it. Deliberately never destroyed: the driver would be torn down under
  // buffers and streams that other statics still release at exit.
  // ANVIL_CUDA_DRIVER_LIBRARY names another driver library (a path or a
  // soname): a driver outside the loader's path, or a test's stand-in.
  static const CudaDriver* driver = [] {
    const char* library = std::getenv("ANVIL_CUDA_DRIVER_LIBRARY");
    return new CudaDriver(library && *library ? library : "libcuda.so.1");
  }();
  return *driver;
}

CudaDriver::CudaDriver(const std::string& library) {
  devices_.reason = Load(library);
  if (devices_.reason.empty()) devices_.reason = Enumerate();
  if (devices_.reason.empty() && devices_.devices.empty()) devices_.reason = "the driver reports no CUDA device";
}

std::string CudaDriver::Load(const std::string& library) {
  // Never dlclosed (see Get()). RTLD_LOCAL: the driver's symbols stay out
  // of the global namespace other libraries resolve against.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    return library + " not found (" + (error ? error : "dlopen failed") + "): no NVIDIA driver is installed";
  }
#define ANVIL_CUDA_RESOLVE(member, symbol, params)                                                     \
  api_.member = reinterpret_cast<decltype(api_.member)>(dlsym(handle, #symbol));                       \
  if (!api_.member)                                                                                    \
    return library + " has no " #symbol ": the NVIDIA driver is older than this runtime supports; " \
                     "install a newer driver";
  ANVIL_CUDA_DRIVER_FUNCTIONS(ANVIL_CUDA_RESOLVE)
#undef ANVIL_CUDA_RESOLVE
  loaded_ = true;
  return "";
}

std::string CudaDriver::Enumerate() {
  CUresult result = api_.cuInit(0);
  if (result != kCudaSuccess) return "cuInit failed: " + ErrorName(result) + " (" + ErrorString(result) + ")";
  // The version only informs messages; a driver that cannot say is no reason to stop.
  if (api_.cuDriverGetVersion(&devices_.driver_version) != kCudaSuccess) devices_.driver_version = 0;
  int count = 0;
  if (hlo::Status s = Check(api_.cuDeviceGetCount(&count), "cuDeviceGetCount"); !s.ok()) return s.message();
  std::vector<CudaDeviceInfo> devices(count);
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    // A failure leaves the list empty rather than half-filled: a device the
    // driver cannot describe is not one to run on.
    if (hlo::Status s = Describe(ordinal, devices[ordinal]); !s.ok())
      return "device " + std::to_string(ordinal) + ": " + s.message();
  }
  devices_.devices = std::move(devices);
  return "";
}

hlo::Status CudaDriver::Describe(int ordinal, CudaDeviceInfo& info) const {
  info.ordinal = ordinal;
  ANVIL_RETURN_IF_ERROR(Check(api_.cuDeviceGet(&info.device, ordinal), "cuDeviceGet"));
  char name[256] = {};
  ANVIL_RETURN_IF_ERROR(Check(api_.cuDeviceGetName(name, sizeof(name) - 1, info.device), "cuDeviceGetName"));
  info.name = name;
  ANVIL_RETURN_IF_ERROR(Check(
      api_.cuDeviceGetAttribute(&info.compute_major, kCuDeviceAttributeComputeCapabilityMajor, info.device),
      "cuDeviceGetAttribute"));
  ANVIL_RETURN_IF_ERROR(Check(
      api_.cuDeviceGetAttribute(&info.compute_minor, kCuDeviceAttributeComputeCapabilityMinor, info.device),
      "cuDeviceGetAttribute"));
  return Check(api_.cuDeviceTotalMem(&info.total_memory, info.device), "cuDeviceTotalMem");
}

hlo::Status CudaDriver::Check(CUresult result, const char* call) const {
  if (result == kCudaSuccess) return hlo::OkStatus();
  std::string message = std::string(call) + ": " + ErrorName(result) + ": " + ErrorString(result);
  if (result == kCudaErrorOutOfMemory) return hlo::ResourceExhausted(std::move(message));
  return hlo::Internal(std::move(message));
}

std::string CudaDriver::ErrorName(CUresult result) const {
  const char* name = nullptr;
  if (api_.cuGetErrorName && api_.cuGetErrorName(result, &name) == kCudaSuccess && name) return name;
  if (const KnownError* known = FindKnown(result)) return known->name;
  return "CUresult " + std::to_string(result);
}

std::string CudaDriver::ErrorString(CUresult result) const {
  const char* text = nullptr;
  if (api_.cuGetErrorString && api_.cuGetErrorString(result, &text) == kCudaSuccess && text) return text;
  if (const KnownError* known = FindKnown(result)) return known->text;
  return "unrecognised error code";
}

}  // namespace anvil::cuda
