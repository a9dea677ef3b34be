// The CUDA plugin's entry point. Every device the driver (libcuda.so.1,
// opened at run time) lists is an Anvil device; with no driver or no GPU the
// plugin still loads, has zero devices and says why. Programs compile
// through the GPU layer's generator in its CUDA dialect and NVRTC (also
// opened at run time) for the device's compute capability, and run as the
// GPU layer's device program on a stream per execution
// (cuda_executable.h). Compile-only targets (sm_80, sm_90) compile a
// program's kernels for those GPUs with no device present.
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "plugins/common/plugin_support.h"
#include "plugins/common/execution_memory.h"
#include "plugins/cuda/cuda_driver.h"
#include "plugins/cuda/cuda_executable.h"
#include "plugins/cuda/cuda_kernels.h"
#include "plugins/cuda/nvrtc_compiler.h"
#include "plugins/gpu/caching_allocator.h"
#include "plugins/gpu/plugin_parts.h"

struct anvil_plugin_memory {
  size_t device;
  anvil::cuda::CUdeviceptr pointer;
  size_t bytes;
};

namespace {

using anvil::cuda::CudaDriver;
using anvil::cuda::CUcontext;
using anvil::cuda::CUdeviceptr;
using anvil::cuda::NvrtcCompiler;
using anvil::plugin::AsyncCompletion;
using anvil::plugin::BaseApi;
using anvil::plugin::Error;
using anvil::plugin::FromStatus;
using anvil::plugin::kInvalidArgument;
using anvil::plugin::kUnimplemented;

// The GPUs compile-only targets stand for: A100 (sm_80) and H100/H200
// (sm_90), where NVRTC can compile for them. A target's name is "sm_" and
// its number.
constexpr int kTargetSms[] = {80, 90};
constexpr const char* kPlugin = "the CUDA plugin";
int SmOf(const std::string& target) { return std::stoi(target.substr(3)); }

}  // namespace

// A device's primary context, retained by the first call that needs it: a
// context costs device memory and start-up time, and a process that uses
// one GPU of eight should not hold all eight (nor fail where another
// process has one in exclusive mode).
struct DeviceContext {
  std::once_flag retain;
  CUcontext context = nullptr;
  anvil::hlo::Status status;  // why it could not be retained
};

struct anvil_plugin_context {
  anvil_plugin_host_executor executor;
  const CudaDriver& driver;
  std::unique_ptr<DeviceContext[]> devices;  // one per device the driver lists
  // Each device's memory for executions (arenas, address tables), kept for
  // the next execution.
  std::vector<std::unique_ptr<anvil::gpu::CachingAllocator>> execution_memory;
  const NvrtcCompiler* nvrtc = nullptr;
  anvil::gpu::CompileTargets targets{kPlugin};
};

namespace {

using anvil::cuda::ContextScope;

anvil_plugin_error* FromCuda(anvil_plugin_context* context, anvil::cuda::CUresult result, const char* call) {
  return FromStatus(context->driver.Check(result, call));
}

size_t Devices(anvil_plugin_context* context) { return context->driver.DeviceList().devices.size(); }

// `device`'s primary context, retained on first use.
anvil::hlo::StatusOr<CUcontext> ContextOf(anvil_plugin_context* context, size_t device) {
  DeviceContext& d = context->devices[device];
  std::call_once(d.retain, [&] {
    const CudaDriver& driver = context->driver;
    d.status = driver.Check(
        driver.api().cuDevicePrimaryCtxRetain(&d.context, driver.DeviceList().devices[device].device),
        "cuDevicePrimaryCtxRetain");
    if (!d.status.ok()) d.context = nullptr;
  });
  if (!d.status.ok()) return d.status;
  return d.context;
}

anvil_plugin_error* ContextCreate(const anvil_plugin_host_executor* executor, anvil_plugin_context** out) {
  if (!executor || executor->struct_size < ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_host_executor, enqueue)) {
    return Error(kInvalidArgument, "the CUDA plugin needs core's host executor");
  }
  // The driver and NVRTC are loaded once per process and never unloaded.
  anvil::plugin::StayLoaded(reinterpret_cast<const void*>(&ContextCreate));
  auto context = std::unique_ptr<anvil_plugin_context>(
      new anvil_plugin_context{anvil::plugin::CopyHostExecutor(*executor), CudaDriver::Get(), {}, {}, nullptr});
  const auto& list = context->driver.DeviceList();
  if (list.devices.empty()) {
    // Loading still succeeds: a machine without a GPU has zero devices here.
    std::fprintf(stderr, "anvil cuda plugin: no devices: %s\n", list.reason.c_str());
  }
  context->devices = std::make_unique<DeviceContext[]>(list.devices.size());
  anvil_plugin_context* self = context.get();
  for (size_t k = 0; k < list.devices.size(); ++k) {
    const CudaDriver& driver = context->driver;
    // Up to a quarter of the device's memory waits for reuse.
    context->execution_memory.push_back(std::make_unique<anvil::gpu::CachingAllocator>(
        [self, &driver, k](uint64_t bytes) -> anvil::hlo::StatusOr<uint64_t> {
          ANVIL_ASSIGN_OR_RETURN(CUcontext c, ContextOf(self, k));
          ContextScope scope(driver, c);
          ANVIL_RETURN_IF_ERROR(scope.status());
          CUdeviceptr p = 0;
          ANVIL_RETURN_IF_ERROR(driver.Check(driver.api().cuMemAlloc(&p, bytes), "cuMemAlloc"));
          return static_cast<uint64_t>(p);
        },
        [self, &driver, k](uint64_t address) {
          auto c = ContextOf(self, k);
          if (!c.ok()) return;
          ContextScope scope(driver, *c);
          if (scope.status().ok()) driver.api().cuMemFree(address);
        },
        list.devices[k].total_memory / 4));
  }
  auto nvrtc = NvrtcCompiler::Get();
  if (nvrtc.ok()) {
    context->nvrtc = *nvrtc;
    for (int sm : kTargetSms) {
      for (int supported : context->nvrtc->SupportedArchs()) {
        if (supported == sm) context->targets.Add("sm_" + std::to_string(sm));
      }
    }
  } else {
    context->targets.Missing(nvrtc.status().message());
    std::fprintf(stderr, "anvil cuda plugin: cannot compile: %s\n", nvrtc.status().message().c_str());
  }
  *out = context.release();
  return nullptr;
}

void ContextDestroy(anvil_plugin_context* context) {
  context->execution_memory.clear();  // gives the devices their memory back
  const auto& list = context->driver.DeviceList();
  for (size_t k = 0; k < list.devices.size(); ++k) {
    if (context->devices[k].context) context->driver.api().cuDevicePrimaryCtxRelease(list.devices[k].device);
  }
  delete context;
}

anvil_plugin_error* DeviceCount(anvil_plugin_context* context, size_t* out) {
  *out = Devices(context);
  return nullptr;
}

anvil_plugin_error* CheckDevice(anvil_plugin_context* context, size_t device) {
  if (device < Devices(context)) return nullptr;
  return FromStatus(anvil::gpu::NoSuchDevice(kPlugin, Devices(context), device, context->driver.DeviceList().reason));
}

// Runs `work` with `device`'s context current on the calling thread, the
// thread's own context current again afterwards.
template <typename Work>
anvil_plugin_error* OnDevice(anvil_plugin_context* context, size_t device, Work&& work) {
  if (auto* e = CheckDevice(context, device)) return e;
  auto c = ContextOf(context, device);
  if (!c.ok()) return FromStatus(c.status());
  ContextScope scope(context->driver, *c);
  if (!scope.status().ok()) return FromStatus(scope.status());
  return work();
}

anvil_plugin_error* DeviceProperties(anvil_plugin_context* context, size_t device, anvil_plugin_device_properties* out) {
  if (auto* e = CheckDevice(context, device)) return e;
  const auto& d = context->driver.DeviceList().devices[device];
  out->kind = "cuda";
  out->name = d.name.c_str();
  out->memory_bytes = d.total_memory;
  return nullptr;
}

anvil_plugin_error* Allocate(anvil_plugin_context* context, size_t device, size_t bytes, anvil_plugin_memory** out) {
  return OnDevice(context, device, [&]() -> anvil_plugin_error* {
    CUdeviceptr pointer = 0;
    // cuMemAlloc refuses zero bytes; an empty array still gets a handle.
    if (bytes) {
      const auto& api = context->driver.api();
      anvil::cuda::CUresult r = api.cuMemAlloc(&pointer, bytes);
      if (r == anvil::cuda::kCudaErrorOutOfMemory) {
        // What executions keep for reuse goes back to the device first.
        context->execution_memory[device]->Trim();
        r = api.cuMemAlloc(&pointer, bytes);
      }
      if (auto* e = FromCuda(context, r, "cuMemAlloc")) return e;
    }
    *out = new anvil_plugin_memory{device, pointer, bytes};
    return nullptr;
  });
}

void Free(anvil_plugin_context* context, anvil_plugin_memory* memory) {
  if (!memory) return;
  if (memory->pointer) {
    // Nothing can report a failure here: a context that cannot be made
    // current leaves the memory to the context's release.
    anvil_plugin_error* e = OnDevice(context, memory->device, [&]() -> anvil_plugin_error* {
      context->driver.api().cuMemFree(memory->pointer);
      return nullptr;
    });
    if (e) anvil::plugin::ErrorDestroy(e);
  }
  delete memory;
}

// Copies run on one of core's host threads, which waits for the driver:
// synchronous copies from pageable host memory (what the caller hands in).
anvil_plugin_error* CopyFromHost(anvil_plugin_context* context, anvil_plugin_memory* memory, const void* src,
                                 size_t bytes, anvil_plugin_done done, void* user) {
  if (bytes != memory->bytes) return Error(kInvalidArgument, "copy size differs from the buffer's");
  AsyncCompletion(context->executor, "memory_copy_from_host", done, user, [=]() -> anvil_plugin_error* {
    if (!bytes) return nullptr;
    return OnDevice(context, memory->device, [&]() -> anvil_plugin_error* {
      const auto& api = context->driver.api();
      if (auto* e = FromCuda(context, api.cuMemcpyHtoDAsync(memory->pointer, src, bytes, nullptr),
                             "cuMemcpyHtoDAsync")) {
        return e;
      }
      return FromCuda(context, api.cuStreamSynchronize(nullptr), "cuStreamSynchronize");
    });
  });
  return nullptr;
}

anvil_plugin_error* CopyToHost(anvil_plugin_context* context, anvil_plugin_memory* memory, void* dst, size_t bytes,
                               anvil_plugin_done done, void* user) {
  if (bytes != memory->bytes) return Error(kInvalidArgument, "copy size differs from the buffer's");
  AsyncCompletion(context->executor, "memory_copy_to_host", done, user, [=]() -> anvil_plugin_error* {
    if (!bytes) return nullptr;
    return OnDevice(context, memory->device, [&]() -> anvil_plugin_error* {
      const auto& api = context->driver.api();
      if (auto* e = FromCuda(context, api.cuMemcpyDtoHAsync(dst, memory->pointer, bytes, nullptr),
                             "cuMemcpyDtoHAsync")) {
        return e;
      }
      return FromCuda(context, api.cuStreamSynchronize(nullptr), "cuStreamSynchronize");
    });
  });
  return nullptr;
}

anvil_plugin_error* Compile(anvil_plugin_context* context, size_t device, const char* text, size_t size, const char*,
                            anvil_plugin_executable** out) {
  if (auto* e = CheckDevice(context, device)) return e;
  if (!context->nvrtc) {
    return Error(kUnimplemented, "the CUDA plugin cannot compile for device " + std::to_string(device) +
                                     ": no NVRTC (" + context->targets.why_missing() + ")");
  }
  auto c = ContextOf(context, device);
  if (!c.ok()) return FromStatus(c.status());
  auto exe = anvil::cuda::CudaExecutable::Compile(context->driver, *c, device,
                                                  context->driver.DeviceList().devices[device], *context->nvrtc,
                                                  std::string_view(text, size), context->executor);
  if (!exe.ok()) return FromStatus(exe.status());
  *out = reinterpret_cast<anvil_plugin_executable*>(std::move(exe).value().release());
  return nullptr;
}

anvil_plugin_error* Serialize(anvil_plugin_context*, anvil_plugin_executable* executable, void** out, size_t* size) {
  anvil::plugin::GiveSerialized(reinterpret_cast<anvil::cuda::CudaExecutable*>(executable)->Serialize(), out, size);
  return nullptr;
}

// A cached executable: its program planned again, its cubins loaded as they
// are (core's cache key holds the device, so they are for its sm).
anvil_plugin_error* Deserialize(anvil_plugin_context* context, size_t device, const void* bytes, size_t size,
                                anvil_plugin_executable** out) {
  if (auto* e = CheckDevice(context, device)) return e;
  if (!context->nvrtc) {
    return Error(kUnimplemented, "the CUDA plugin cannot compile for device " + std::to_string(device) +
                                     ": no NVRTC (" + context->targets.why_missing() + ")");
  }
  auto serialized =
      anvil::cuda::CudaExecutable::ReadSerialized(std::string_view(static_cast<const char*>(bytes), size));
  if (!serialized.ok()) return FromStatus(serialized.status());
  auto c = ContextOf(context, device);
  if (!c.ok()) return FromStatus(c.status());
  auto exe = anvil::cuda::CudaExecutable::Compile(context->driver, *c, device,
                                                  context->driver.DeviceList().devices[device], *context->nvrtc,
                                                  serialized->canonical_text, context->executor,
                                                  &serialized->binaries);
  if (!exe.ok()) return FromStatus(exe.status());
  *out = reinterpret_cast<anvil_plugin_executable*>(std::move(exe).value().release());
  return nullptr;
}

void ExecutableDestroy(anvil_plugin_context*, anvil_plugin_executable* executable) {
  delete reinterpret_cast<anvil::cuda::CudaExecutable*>(executable);
}

anvil_plugin_error* Execute(anvil_plugin_context* context, anvil_plugin_executable* executable,
                            anvil_plugin_memory* const* inputs, const uint8_t* donated, size_t num_inputs,
                            anvil_plugin_memory** outputs, size_t num_outputs, anvil_plugin_done done, void* user) {
  auto* exe = reinterpret_cast<anvil::cuda::CudaExecutable*>(executable);
  const anvil::gpu::DeviceProgram& program = exe->program();
  // Frees the donated inputs and the outputs made so far on every early return.
  anvil::plugin::ExecutionMemory memory(context, &Free, inputs, donated, num_inputs, outputs, num_outputs);
  if (num_inputs != program.parameter_bytes.size() || num_outputs != program.output_bytes.size()) {
    return Error(kInvalidArgument, "the executable takes " + std::to_string(program.parameter_bytes.size()) +
                                       " inputs and gives " + std::to_string(program.output_bytes.size()) + " outputs");
  }
  const size_t device = exe->device_index();
  std::vector<CUdeviceptr> in, out;
  for (size_t k = 0; k < num_inputs; ++k) {
    if (inputs[k]->bytes != program.parameter_bytes[k]) {
      return Error(kInvalidArgument, "input " + std::to_string(k) + " has " + std::to_string(inputs[k]->bytes) +
                                         " bytes; the program's parameter " + std::to_string(k) + " takes " +
                                         std::to_string(program.parameter_bytes[k]));
    }
    if (inputs[k]->device != device) {
      return Error(kInvalidArgument, "input " + std::to_string(k) + " is on CUDA device " +
                                         std::to_string(inputs[k]->device) + "; the executable is compiled for device " +
                                         std::to_string(device));
    }
    in.push_back(inputs[k]->pointer);
  }
  if (anvil_plugin_error* e = memory.AllocateOutputs([&](size_t k, anvil_plugin_memory** m) {
        return Allocate(context, device, program.output_bytes[k], m);
      })) {
    return e;
  }
  for (size_t k = 0; k < num_outputs; ++k) out.push_back(outputs[k]->pointer);
  anvil::gpu::CachingAllocator* memory_pool = context->execution_memory[device].get();
  AsyncCompletion(context->executor, "executable_execute", done, user,
                  [exe, memory_pool, in = std::move(in), out = std::move(out),
                   donations = memory.Start()]() mutable -> anvil_plugin_error* {
                    const anvil::hlo::Status s =
                        anvil::cuda::RunCudaExecutable(*exe, *memory_pool, in, out);
                    donations.FreeAll();  // read, and not reused: the plugin is done with them
                    return FromStatus(s);
                  });
  return nullptr;
}

anvil_plugin_error* TargetCount(anvil_plugin_context* context, size_t* out) {
  return anvil::gpu::TargetCount(context->targets, out);
}

anvil_plugin_error* TargetName(anvil_plugin_context* context, size_t target, const char** out) {
  return anvil::gpu::TargetName(context->targets, target, out);
}

anvil_plugin_error* TargetCompile(anvil_plugin_context* context, size_t target, const char* text, size_t size,
                                  const char*) {
  if (auto* e = FromStatus(context->targets.Check(target))) return e;
  auto kernels = anvil::cuda::CompileProgramKernels(std::string_view(text, size), SmOf(context->targets.name(target)),
                                                    *context->nvrtc, context->executor);
  return kernels.ok() ? nullptr : FromStatus(kernels.status());
}

anvil_plugin_api MakeApi() {
  anvil_plugin_api api = BaseApi("cuda", "0.1.0");
  api.context_create = ANVIL_GUARDED(context_create, ContextCreate);
  api.context_destroy = ANVIL_GUARDED(context_destroy, ContextDestroy);
  api.device_count = ANVIL_GUARDED(device_count, DeviceCount);
  api.device_properties = ANVIL_GUARDED(device_properties, DeviceProperties);
  api.memory_allocate = ANVIL_GUARDED(memory_allocate, Allocate);
  api.memory_free = ANVIL_GUARDED(memory_free, Free);
  api.memory_copy_from_host = ANVIL_GUARDED(memory_copy_from_host, CopyFromHost);
  api.memory_copy_to_host = ANVIL_GUARDED(memory_copy_to_host, CopyToHost);
  api.executable_compile = ANVIL_GUARDED(executable_compile, Compile);
  api.executable_destroy = ANVIL_GUARDED(executable_destroy, ExecutableDestroy);
  api.executable_execute = ANVIL_GUARDED(executable_execute, Execute);
  api.executable_serialize = ANVIL_GUARDED(executable_serialize, Serialize);
  api.serialized_free = &anvil::plugin::FreeSerialized;
  api.executable_deserialize = ANVIL_GUARDED(executable_deserialize, Deserialize);
  api.target_count = ANVIL_GUARDED(target_count, TargetCount);
  api.target_name = ANVIL_GUARDED(target_name, TargetName);
  api.target_compile = ANVIL_GUARDED(target_compile, TargetCompile);
  return api;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const anvil_plugin_api* anvil_plugin_get_api(void) {
  static const anvil_plugin_api api = MakeApi();
  return &api;
}
