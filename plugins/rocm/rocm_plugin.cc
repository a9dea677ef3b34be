// The ROCm plugin: the GPU layer's plugin (plugins/gpu/gpu_plugin.h) over
// ROCm's HIP runtime (libamdhip64, opened at run time: hip_runtime.h), with
// kernels in the generator's HIP dialect compiled offline by clang
// (hip_compiler.h) for each device's gfx target (kfd_topology.h). Every
// device the runtime lists is an Anvil device; with no runtime or no AMD GPU
// the plugin still loads, has zero devices and says why. Compile-only
// targets (gfx90a, gfx1100) compile a program's kernels with no device
// present: each is listed only when clang and its device libraries are
// there.
#include <memory>
#include <string>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "plugins/gpu/gpu_plugin.h"
#include "plugins/gpu/serialized_program.h"
#include "plugins/rocm/hip_compiler.h"
#include "plugins/rocm/hip_runtime.h"
#include "plugins/rocm/rocm_kernels.h"

namespace anvil::rocm {
namespace {

constexpr const char* kPlugin = "the ROCm plugin";
// The GPUs compile-only targets stand for: MI200 (gfx90a, CDNA2) and
// RX 7900 (gfx1100, RDNA3; its device library is the plugin's stand-in).
constexpr const char* kTargets[] = {"gfx90a", "gfx1100"};

// The HIP runtime as the GPU layer's DeviceRuntime: a device is made
// current with hipSetDevice, and the thread's own device set back after.
class HipDeviceRuntime final : public gpu::DeviceRuntime {
 public:
  explicit HipDeviceRuntime(const HipRuntime& runtime) : runtime_(runtime), api_(runtime.api()) {
    for (const HipDeviceInfo& d : runtime.DeviceList().devices) devices_.push_back(Device{d.name, d.total_memory});
  }

  size_t DeviceCount() const override { return devices_.size(); }
  const Device& DeviceAt(size_t device) const override { return devices_[device]; }
  const std::string& NoDeviceReason() const override { return runtime_.DeviceList().reason; }

  hlo::StatusOr<uintptr_t> Enter(size_t device) override {
    int previous = 0;
    ANVIL_RETURN_IF_ERROR(Check(api_.hipGetDevice(&previous), "hipGetDevice"));
    ANVIL_RETURN_IF_ERROR(Check(api_.hipSetDevice(runtime_.DeviceList().devices[device].ordinal), "hipSetDevice"));
    return static_cast<uintptr_t>(previous);
  }
  void Leave(uintptr_t previous) override { api_.hipSetDevice(static_cast<int>(previous)); }

  hlo::StatusOr<uint64_t> Allocate(uint64_t bytes) override {
    void* p = nullptr;
    ANVIL_RETURN_IF_ERROR(Check(api_.hipMalloc(&p, bytes), "hipMalloc"));
    return reinterpret_cast<uint64_t>(p);
  }
  void Free(uint64_t address) override { api_.hipFree(Pointer(address)); }

  hlo::StatusOr<Stream> CreateStream() override {
    hipStream_t s = nullptr;
    ANVIL_RETURN_IF_ERROR(Check(api_.hipStreamCreateWithFlags(&s, kHipStreamNonBlocking), "hipStreamCreateWithFlags"));
    return static_cast<Stream>(s);
  }
  void DestroyStream(Stream s) override { api_.hipStreamDestroy(AsStream(s)); }
  hlo::Status Synchronize(Stream s) override {
    return Check(api_.hipStreamSynchronize(AsStream(s)), "hipStreamSynchronize");
  }
  hlo::Status CopyToDevice(uint64_t dst, const void* src, size_t bytes, Stream s) override {
    return Check(api_.hipMemcpyHtoDAsync(Pointer(dst), src, bytes, AsStream(s)), "hipMemcpyHtoDAsync");
  }
  hlo::Status CopyToHost(void* dst, uint64_t src, size_t bytes, Stream s) override {
    return Check(api_.hipMemcpyDtoHAsync(dst, Pointer(src), bytes, AsStream(s)), "hipMemcpyDtoHAsync");
  }
  hlo::Status CopyOnDevice(uint64_t dst, uint64_t src, size_t bytes, Stream s) override {
    return Check(api_.hipMemcpyDtoDAsync(Pointer(dst), Pointer(src), bytes, AsStream(s)), "hipMemcpyDtoDAsync");
  }

  hlo::StatusOr<Module> LoadModule(const std::string& image) override {
    hipModule_t m = nullptr;
    ANVIL_RETURN_IF_ERROR(Check(api_.hipModuleLoadData(&m, image.data()), "hipModuleLoadData"));
    return static_cast<Module>(m);
  }
  void UnloadModule(Module m) override { api_.hipModuleUnload(static_cast<hipModule_t>(m)); }
  hlo::StatusOr<Function> GetFunction(Module m, const std::string& entry) override {
    hipFunction_t f = nullptr;
    ANVIL_RETURN_IF_ERROR(
        Check(api_.hipModuleGetFunction(&f, static_cast<hipModule_t>(m), entry.c_str()), "hipModuleGetFunction"));
    return static_cast<Function>(f);
  }
  hlo::Status Launch(Function f, uint32_t groups, uint32_t block, Stream s, uint64_t table) override {
    uint64_t table_address = table;
    void* parameters[] = {&table_address};
    return Check(api_.hipModuleLaunchKernel(static_cast<hipFunction_t>(f), groups, 1, 1, block, 1, 1, 0, AsStream(s),
                                            parameters, nullptr),
                 "hipModuleLaunchKernel");
  }

 private:
  static hipStream_t AsStream(Stream s) { return static_cast<hipStream_t>(s); }
  static void* Pointer(uint64_t address) { return reinterpret_cast<void*>(address); }
  hlo::Status Check(hipError_t result, const char* call) const { return runtime_.Check(result, call); }

  const HipRuntime& runtime_;
  const HipApi& api_;
  std::vector<Device> devices_;
};

hlo::StatusOr<gpu::KernelCompiler> DeviceCompiler(gpu::DeviceRuntime&, size_t device,
                                                  const anvil_plugin_host_executor& host) {
  const HipDeviceInfo& d = HipRuntime::Get().DeviceList().devices[device];
  const std::string prefix = std::string(kPlugin) + " cannot compile for device " + std::to_string(device) + " (" +
                             d.name + ")";
  if (d.gfx_target.empty()) return hlo::Unimplemented(prefix + ": its gfx target is unknown: " + d.gfx_target_unknown);
  auto compiler = HipCompiler::Get();
  if (!compiler.ok()) return hlo::Unimplemented(prefix + ": " + compiler.status().message());
  auto libs = (*compiler)->DeviceLibs(d.gfx_target);
  if (!libs.ok()) return hlo::Unimplemented(prefix + ", a " + d.gfx_target + ": " + libs.status().message());
  return gpu::KernelCompiler([target = d.gfx_target, compiler = *compiler, &host](std::vector<gpu::KernelModule> modules)
                                 -> hlo::StatusOr<gpu::CompiledKernels> {
    ANVIL_ASSIGN_OR_RETURN(CompiledProgram program, CompileKernelModules(std::move(modules), target, *compiler, host));
    gpu::CompiledKernels out;
    for (std::vector<char>& code : program.code_objects) out.images.emplace_back(code.begin(), code.end());
    for (const CompiledKernel& k : program.kernels) {
      out.passes.push_back(gpu::CompiledPass{gpu::KernelKey(k.source), k.code_object, k.entry});
    }
    return out;
  });
}

std::vector<std::string> ListTargets(std::string* why_missing) {
  std::vector<std::string> names;
  auto compiler = HipCompiler::Get();
  if (!compiler.ok()) {
    *why_missing = compiler.status().message();
    return names;
  }
  for (const char* target : kTargets) {
    auto libs = (*compiler)->DeviceLibs(target);
    if (libs.ok()) {
      names.push_back(target);
    } else {
      *why_missing += (why_missing->empty() ? "" : "; ") + std::string("no ") + target + " target: " + libs.status().message();
    }
  }
  return names;
}

hlo::Status CompileForTarget(const std::string& name, std::string_view text, const anvil_plugin_host_executor& host) {
  ANVIL_ASSIGN_OR_RETURN(const HipCompiler* compiler, HipCompiler::Get());
  return CompileProgramKernels(text, name, *compiler, host).status();
}

const gpu::GpuPlugin& Describe() {
  static const gpu::GpuPlugin plugin{
      "rocm",
      "0.1.0",
      "ROCm",
      gpu::ExecutableKind{&RocmDialect(), &RocmKernelOptions(), kPlugin, std::string_view("ANVKROX1", 8)},
      [] { return std::make_unique<HipDeviceRuntime>(HipRuntime::Get()); },
      DeviceCompiler,
      ListTargets,
      CompileForTarget,
  };
  return plugin;
}

}  // namespace
}  // namespace anvil::rocm

extern "C" __attribute__((visibility("default"))) const anvil_plugin_api* anvil_plugin_get_api(void) {
  static const anvil_plugin_api api = anvil::gpu::MakeGpuPluginApi(anvil::rocm::Describe());
  return &api;
}
