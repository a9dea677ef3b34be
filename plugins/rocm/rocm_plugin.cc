// The ROCm plugin's entry point. Every device the HIP runtime
// (libamdhip64, opened at run time) lists is an Anvil device; with no
// runtime or no AMD GPU the plugin still loads, has zero devices and says
// why. Compile-only targets (gfx90a, gfx1100) compile a program's kernels
// through the GPU layer's generator in its HIP dialect and clang, offline,
// with no device present: each is listed only when clang and its device
// libraries are there.
//
// Not written yet: running a program on a device (as for the CUDA plugin,
// the device program is still the Vulkan plugin's); compiling for a device
// says so.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "plugins/common/plugin_support.h"
#include "plugins/gpu/plugin_parts.h"
#include "plugins/rocm/hip_compiler.h"
#include "plugins/rocm/hip_runtime.h"
#include "plugins/rocm/rocm_kernels.h"

struct anvil_plugin_memory {
  size_t device;
  void* pointer;
  size_t bytes;
};

namespace {

using anvil::plugin::AsyncCompletion;
using anvil::plugin::BaseApi;
using anvil::plugin::Error;
using anvil::plugin::FromStatus;
using anvil::plugin::kInvalidArgument;
using anvil::plugin::kUnimplemented;
using anvil::rocm::HipCompiler;
using anvil::rocm::HipRuntime;

// The GPUs compile-only targets stand for: MI200 (gfx90a, CDNA2) and
// RX 7900 (gfx1100, RDNA3; its device library is the plugin's stand-in).
constexpr const char* kTargets[] = {"gfx90a", "gfx1100"};
constexpr const char* kPlugin = "the ROCm plugin";

}  // namespace

struct anvil_plugin_context {
  anvil_plugin_host_executor executor;
  const HipRuntime& runtime;
  const HipCompiler* compiler = nullptr;
  anvil::gpu::CompileTargets targets{kPlugin};
};

namespace {

anvil_plugin_error* FromHip(anvil_plugin_context* context, anvil::rocm::hipError_t result, const char* call) {
  return FromStatus(context->runtime.Check(result, call));
}

anvil_plugin_error* ContextCreate(const anvil_plugin_host_executor* executor, anvil_plugin_context** out) {
  if (!executor || executor->struct_size < ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_host_executor, enqueue)) {
    return Error(kInvalidArgument, "the ROCm plugin needs core's host executor");
  }
  // The HIP runtime and the compiler are found once per process and never
  // unloaded.
  anvil::plugin::StayLoaded(reinterpret_cast<const void*>(&ContextCreate));
  auto context = std::unique_ptr<anvil_plugin_context>(
      new anvil_plugin_context{anvil::plugin::CopyHostExecutor(*executor), HipRuntime::Get(), nullptr});
  const auto& list = context->runtime.DeviceList();
  // Loading still succeeds: a machine without an AMD GPU has zero devices here.
  if (list.devices.empty()) std::fprintf(stderr, "anvil rocm plugin: no devices: %s\n", list.reason.c_str());
  auto compiler = HipCompiler::Get();
  if (compiler.ok()) {
    context->compiler = *compiler;
    for (const char* target : kTargets) {
      auto libs = context->compiler->DeviceLibs(target);
      if (libs.ok()) {
        context->targets.Add(target);
      } else {
        context->targets.Missing(libs.status().message());
        std::fprintf(stderr, "anvil rocm plugin: no %s target: %s\n", target, libs.status().message().c_str());
      }
    }
  } else {
    context->targets.Missing(compiler.status().message());
    std::fprintf(stderr, "anvil rocm plugin: cannot compile: %s\n", compiler.status().message().c_str());
  }
  *out = context.release();
  return nullptr;
}

void ContextDestroy(anvil_plugin_context* context) { delete context; }

size_t Devices(anvil_plugin_context* context) { return context->runtime.DeviceList().devices.size(); }

anvil_plugin_error* DeviceCount(anvil_plugin_context* context, size_t* out) {
  *out = Devices(context);
  return nullptr;
}

anvil_plugin_error* CheckDevice(anvil_plugin_context* context, size_t device) {
  if (device < Devices(context)) return nullptr;
  return FromStatus(anvil::gpu::NoSuchDevice(kPlugin, Devices(context), device, context->runtime.DeviceList().reason));
}

// Makes `device` the calling thread's.
anvil_plugin_error* Use(anvil_plugin_context* context, size_t device) {
  if (auto* e = CheckDevice(context, device)) return e;
  return FromHip(context, context->runtime.api().hipSetDevice(static_cast<int>(device)), "hipSetDevice");
}

anvil_plugin_error* DeviceProperties(anvil_plugin_context* context, size_t device, anvil_plugin_device_properties* out) {
  if (auto* e = CheckDevice(context, device)) return e;
  const auto& d = context->runtime.DeviceList().devices[device];
  out->kind = "rocm";
  out->name = d.name.c_str();
  out->memory_bytes = d.total_memory;
  return nullptr;
}

anvil_plugin_error* Allocate(anvil_plugin_context* context, size_t device, size_t bytes, anvil_plugin_memory** out) {
  if (auto* e = Use(context, device)) return e;
  void* pointer = nullptr;
  // An empty array still gets a handle, with no device memory.
  if (bytes) {
    if (auto* e = FromHip(context, context->runtime.api().hipMalloc(&pointer, bytes), "hipMalloc")) return e;
  }
  *out = new anvil_plugin_memory{device, pointer, bytes};
  return nullptr;
}

void Free(anvil_plugin_context* context, anvil_plugin_memory* memory) {
  if (!memory) return;
  if (memory->pointer) {
    // Nothing can report a failure here.
    if (anvil_plugin_error* e = Use(context, memory->device)) {
      anvil::plugin::ErrorDestroy(e);
    } else {
      context->runtime.api().hipFree(memory->pointer);
    }
  }
  delete memory;
}

// Copies run on one of core's host threads, which waits for the runtime:
// HIP's synchronous copies from pageable host memory.
anvil_plugin_error* CopyFromHost(anvil_plugin_context* context, anvil_plugin_memory* memory, const void* src,
                                 size_t bytes, anvil_plugin_done done, void* user) {
  if (bytes != memory->bytes) return Error(kInvalidArgument, "copy size differs from the buffer's");
  AsyncCompletion(context->executor, "memory_copy_from_host", done, user, [=]() -> anvil_plugin_error* {
    if (!bytes) return nullptr;
    if (auto* e = Use(context, memory->device)) return e;
    return FromHip(context, context->runtime.api().hipMemcpyHtoD(memory->pointer, src, bytes), "hipMemcpyHtoD");
  });
  return nullptr;
}

anvil_plugin_error* CopyToHost(anvil_plugin_context* context, anvil_plugin_memory* memory, void* dst, size_t bytes,
                               anvil_plugin_done done, void* user) {
  if (bytes != memory->bytes) return Error(kInvalidArgument, "copy size differs from the buffer's");
  AsyncCompletion(context->executor, "memory_copy_to_host", done, user, [=]() -> anvil_plugin_error* {
    if (!bytes) return nullptr;
    if (auto* e = Use(context, memory->device)) return e;
    return FromHip(context, context->runtime.api().hipMemcpyDtoH(dst, memory->pointer, bytes), "hipMemcpyDtoH");
  });
  return nullptr;
}

anvil_plugin_error* Compile(anvil_plugin_context* context, size_t device, const char*, size_t, const char*,
                            anvil_plugin_executable**) {
  if (auto* e = CheckDevice(context, device)) return e;
  return FromStatus(anvil::gpu::CannotRunYet(kPlugin, "rocm"));
}

void ExecutableDestroy(anvil_plugin_context*, anvil_plugin_executable*) {}

anvil_plugin_error* Execute(anvil_plugin_context*, anvil_plugin_executable*, anvil_plugin_memory* const*,
                            const uint8_t*, size_t, anvil_plugin_memory**, size_t, anvil_plugin_done, void*) {
  return Error(kUnimplemented, "the ROCm plugin cannot run programs yet");
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
  auto program = anvil::rocm::CompileProgramKernels(std::string_view(text, size), context->targets.name(target),
                                                    *context->compiler, context->executor);
  return program.ok() ? nullptr : FromStatus(program.status());
}

anvil_plugin_api MakeApi() {
  anvil_plugin_api api = BaseApi("rocm", "0.1.0");
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
