// The CUDA plugin: the GPU layer's plugin (plugins/gpu/gpu_plugin.h) over
// the CUDA driver API (libcuda.so.1, opened at run time: cuda_driver.h),
// with kernels in the generator's CUDA dialect compiled by NVRTC (also
// opened at run time) for each device's compute capability. Every device
// the driver lists is an Anvil device; with no driver or no GPU the plugin
// still loads, has zero devices and says why. Compile-only targets (sm_80,
// sm_90) compile a program's kernels for those GPUs with no device present.
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "plugins/cuda/cuda_driver.h"
#include "plugins/cuda/cuda_kernels.h"
#include "plugins/cuda/nvrtc_compiler.h"
#include "plugins/gpu/cxx_dialect.h"
#include "plugins/gpu/gpu_plugin.h"
#include "plugins/gpu/serialized_program.h"

namespace anvil::cuda {
namespace {

constexpr const char* kPlugin = "the CUDA plugin";
// The GPUs compile-only targets stand for: A100 (sm_80) and H100/H200
// (sm_90), where NVRTC can compile for them. A target's name is "sm_" and
// its number.
constexpr int kTargetSms[] = {80, 90};

// A plugin context's view of the driver. Each device's primary context is
// retained by the first call that needs it (a context costs device memory
// and start-up time, and a process that uses one GPU of eight should not
// hold all eight, nor fail where another process has one in exclusive
// mode), pushed around every call (the application's current context
// survives) and released with the view.
class CudaRuntime final : public gpu::DeviceRuntime {
 public:
  explicit CudaRuntime(const CudaDriver& driver)
      : driver_(driver), api_(driver.api()), contexts_(std::make_unique<Retained[]>(driver.DeviceList().devices.size())) {
    for (const CudaDeviceInfo& d : driver.DeviceList().devices) devices_.push_back(Device{d.name, d.total_memory});
  }
  ~CudaRuntime() override {
    for (size_t k = 0; k < devices_.size(); ++k) {
      if (contexts_[k].context) api_.cuDevicePrimaryCtxRelease(driver_.DeviceList().devices[k].device);
    }
  }

  size_t DeviceCount() const override { return devices_.size(); }
  const Device& DeviceAt(size_t device) const override { return devices_[device]; }
  const std::string& NoDeviceReason() const override { return driver_.DeviceList().reason; }

  hlo::StatusOr<uintptr_t> Enter(size_t device) override {
    Retained& r = contexts_[device];
    std::call_once(r.once, [&] {
      r.status = Check(api_.cuDevicePrimaryCtxRetain(&r.context, driver_.DeviceList().devices[device].device),
                       "cuDevicePrimaryCtxRetain");
      if (!r.status.ok()) r.context = nullptr;
    });
    ANVIL_RETURN_IF_ERROR(r.status);
    ANVIL_RETURN_IF_ERROR(Check(api_.cuCtxPushCurrent(r.context), "cuCtxPushCurrent"));
    return uintptr_t{0};  // the context stack keeps what was current
  }
  void Leave(uintptr_t) override {
    CUcontext popped = nullptr;
    api_.cuCtxPopCurrent(&popped);
  }

  hlo::StatusOr<uint64_t> Allocate(uint64_t bytes) override {
    CUdeviceptr p = 0;
    ANVIL_RETURN_IF_ERROR(Check(api_.cuMemAlloc(&p, bytes), "cuMemAlloc"));
    return static_cast<uint64_t>(p);
  }
  void Free(uint64_t address) override { api_.cuMemFree(address); }

  hlo::StatusOr<Stream> CreateStream() override {
    CUstream s = nullptr;
    ANVIL_RETURN_IF_ERROR(Check(api_.cuStreamCreate(&s, kCuStreamNonBlocking), "cuStreamCreate"));
    return static_cast<Stream>(s);
  }
  void DestroyStream(Stream s) override { api_.cuStreamDestroy(AsStream(s)); }
  hlo::Status Synchronize(Stream s) override { return Check(api_.cuStreamSynchronize(AsStream(s)), "cuStreamSynchronize"); }
  hlo::Status CopyToDevice(uint64_t dst, const void* src, size_t bytes, Stream s) override {
    return Check(api_.cuMemcpyHtoDAsync(dst, src, bytes, AsStream(s)), "cuMemcpyHtoDAsync");
  }
  hlo::Status CopyToHost(void* dst, uint64_t src, size_t bytes, Stream s) override {
    return Check(api_.cuMemcpyDtoHAsync(dst, src, bytes, AsStream(s)), "cuMemcpyDtoHAsync");
  }
  hlo::Status CopyOnDevice(uint64_t dst, uint64_t src, size_t bytes, Stream s) override {
    return Check(api_.cuMemcpyDtoDAsync(dst, src, bytes, AsStream(s)), "cuMemcpyDtoDAsync");
  }

  hlo::StatusOr<Module> LoadModule(const std::string& image) override {
    CUmodule m = nullptr;
    ANVIL_RETURN_IF_ERROR(Check(api_.cuModuleLoadData(&m, image.data()), "cuModuleLoadData"));
    return static_cast<Module>(m);
  }
  void UnloadModule(Module m) override { api_.cuModuleUnload(static_cast<CUmodule>(m)); }
  hlo::StatusOr<Function> GetFunction(Module m, const std::string& entry) override {
    CUfunction f = nullptr;
    ANVIL_RETURN_IF_ERROR(
        Check(api_.cuModuleGetFunction(&f, static_cast<CUmodule>(m), entry.c_str()), "cuModuleGetFunction"));
    return static_cast<Function>(f);
  }
  hlo::Status Launch(Function f, uint32_t groups, uint32_t block, Stream s, uint64_t table) override {
    CUdeviceptr table_address = table;
    void* parameters[] = {&table_address};
    return Check(api_.cuLaunchKernel(static_cast<CUfunction>(f), groups, 1, 1, block, 1, 1, 0, AsStream(s),
                                     parameters, nullptr),
                 "cuLaunchKernel");
  }

 private:
  struct Retained {
    std::once_flag once;
    CUcontext context = nullptr;
    hlo::Status status;  // why it could not be retained
  };
  static CUstream AsStream(Stream s) { return static_cast<CUstream>(s); }
  hlo::Status Check(CUresult result, const char* call) const { return driver_.Check(result, call); }

  const CudaDriver& driver_;
  const CudaApi& api_;
  std::vector<Device> devices_;
  std::unique_ptr<Retained[]> contexts_;
};

// NVRTC's cubins as the GPU layer's code objects: one a pass.
gpu::KernelCompiler CompilerFor(int sm, const NvrtcCompiler& nvrtc, const anvil_plugin_host_executor& host) {
  return [sm, &nvrtc, &host](std::vector<gpu::KernelModule> modules) -> hlo::StatusOr<gpu::CompiledKernels> {
    ANVIL_ASSIGN_OR_RETURN(std::vector<CompiledKernel> compiled, CompileKernelModules(std::move(modules), sm, nvrtc, host));
    gpu::CompiledKernels out;
    for (CompiledKernel& k : compiled) {
      out.passes.push_back(gpu::CompiledPass{gpu::KernelKey(k.source), out.images.size(), gpu::CxxDialect::kEntry});
      out.images.emplace_back(k.cubin.begin(), k.cubin.end());
    }
    return out;
  };
}

hlo::StatusOr<gpu::KernelCompiler> DeviceCompiler(gpu::DeviceRuntime&, size_t device,
                                                  const anvil_plugin_host_executor& host) {
  auto nvrtc = NvrtcCompiler::Get();
  if (!nvrtc.ok()) {
    return hlo::Unimplemented(std::string(kPlugin) + " cannot compile for device " + std::to_string(device) +
                              ": no NVRTC (" + nvrtc.status().message() + ")");
  }
  const CudaDriver& driver = CudaDriver::Get();
  const CudaDeviceInfo& d = driver.DeviceList().devices[device];
  const std::vector<int>& archs = (*nvrtc)->SupportedArchs();
  if (std::find(archs.begin(), archs.end(), d.sm()) == archs.end()) {
    return hlo::Unimplemented(std::string(kPlugin) + "'s NVRTC (" + (*nvrtc)->library_path() +
                              ") cannot compile for sm_" + std::to_string(d.sm()) + " (" + d.name +
                              "); install the CUDA toolkit's NVRTC for this GPU");
  }
  // A driver runs cubins of its own CUDA major version or older (minor
  // version compatibility stops at the major version).
  const int driver_major = driver.DeviceList().driver_version / 1000;
  const NvrtcVersion v = (*nvrtc)->Version();
  if (driver_major > 0 && v.major > driver_major) {
    return hlo::Unimplemented(std::string(kPlugin) + "'s NVRTC " + std::to_string(v.major) + "." +
                              std::to_string(v.minor) + " (" + (*nvrtc)->library_path() + ") makes cubins this CUDA " +
                              std::to_string(driver_major) + " driver cannot load; point ANVIL_NVRTC_LIBRARY at a " +
                              "libnvrtc.so." + std::to_string(driver_major) + ", or update the driver");
  }
  return CompilerFor(d.sm(), **nvrtc, host);
}

std::vector<std::string> ListTargets(std::string* why_missing) {
  std::vector<std::string> names;
  auto nvrtc = NvrtcCompiler::Get();
  if (!nvrtc.ok()) {
    *why_missing = nvrtc.status().message();
    return names;
  }
  const std::vector<int>& archs = (*nvrtc)->SupportedArchs();
  for (int sm : kTargetSms) {
    if (std::find(archs.begin(), archs.end(), sm) != archs.end()) names.push_back("sm_" + std::to_string(sm));
  }
  return names;
}

hlo::Status CompileForTarget(const std::string& name, std::string_view text, const anvil_plugin_host_executor& host) {
  ANVIL_ASSIGN_OR_RETURN(const NvrtcCompiler* nvrtc, NvrtcCompiler::Get());
  return CompileProgramKernels(text, std::stoi(name.substr(3)), *nvrtc, host).status();
}

const gpu::GpuPlugin& Describe() {
  static const gpu::GpuPlugin plugin{
      "cuda",
      "0.1.0",
      "CUDA",
      gpu::ExecutableKind{&CudaDialect(), &CudaKernelOptions(), kPlugin, std::string_view("ANVKCUX2", 8)},
      [] { return std::make_unique<CudaRuntime>(CudaDriver::Get()); },
      DeviceCompiler,
      ListTargets,
      CompileForTarget,
  };
  return plugin;
}

}  // namespace
}  // namespace anvil::cuda

extern "C" __attribute__((visibility("default"))) const anvil_plugin_api* anvil_plugin_get_api(void) {
  static const anvil_plugin_api api = anvil::gpu::MakeGpuPluginApi(anvil::cuda::Describe());
  return &api;
}
