// The Vulkan plugin's entry point: every usable Vulkan device is an Anvil
// device; programs compile to SPIR-V compute pipelines (vulkan_executable),
// and an execution runs on one of core's host threads, which records and
// submits its command buffers, waits on their fence and reports completion
// (vulkan_run).
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "plugins/common/plugin_support.h"
#include "plugins/vulkan/vulkan_device.h"
#include "plugins/vulkan/vulkan_executable.h"
#include "plugins/vulkan/vulkan_run.h"

struct anvil_plugin_memory {
  size_t device;
  anvil::vulkan::Buffer buffer;
};

struct anvil_plugin_context {
  anvil_plugin_host_executor executor;
  anvil::vulkan::Instance& instance;
};

namespace {

using anvil::plugin::AsyncCompletion;
using anvil::plugin::BaseApi;
using anvil::plugin::Error;
using anvil::plugin::FromStatus;
using anvil::plugin::kInternal;
using anvil::plugin::kInvalidArgument;
using anvil::plugin::kResourceExhausted;
using anvil::vulkan::Buffer;
using anvil::vulkan::Device;
using anvil::vulkan::Executable;

// One Vulkan instance for the process, made on first use and never torn
// down: creating one costs a quarter second on lavapipe, and drivers keep
// global allocations that their unloading (which destroying the last
// instance does) would strand. For those to stay reachable this library
// stays mapped too, however often clients load and unload it.
anvil::vulkan::Instance& SharedInstance() {
  static anvil::vulkan::Instance* instance = [] {
    anvil::plugin::StayLoaded(reinterpret_cast<const void*>(&SharedInstance));
    return new anvil::vulkan::Instance();
  }();
  return *instance;
}

anvil_plugin_error* ContextCreate(const anvil_plugin_host_executor* executor, anvil_plugin_context** out) {
  if (!executor || executor->struct_size < ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_host_executor, enqueue)) {
    return Error(kInvalidArgument, "the Vulkan plugin needs core's host executor");
  }
  auto* context = new anvil_plugin_context{anvil::plugin::CopyHostExecutor(*executor), SharedInstance()};
  if (context->instance.device_count() == 0) {
    // Loading still succeeds: a machine without Vulkan has zero devices here.
    std::fprintf(stderr, "anvil vulkan plugin: no devices: %s\n", context->instance.why_no_devices().c_str());
  }
  *out = context;
  return nullptr;
}

void ContextDestroy(anvil_plugin_context* context) { delete context; }

anvil_plugin_error* DeviceCount(anvil_plugin_context* context, size_t* out) {
  *out = context->instance.device_count();
  return nullptr;
}

anvil_plugin_error* CheckDevice(anvil_plugin_context* context, size_t device) {
  if (device < context->instance.device_count()) return nullptr;
  return Error(kInvalidArgument, "the Vulkan plugin has " + std::to_string(context->instance.device_count()) +
                                     " devices, not device " + std::to_string(device) +
                                     (context->instance.device_count() ? "" : " (" + context->instance.why_no_devices() + ")"));
}

anvil_plugin_error* DeviceProperties(anvil_plugin_context* context, size_t device, anvil_plugin_device_properties* out) {
  if (auto* e = CheckDevice(context, device)) return e;
  Device& d = context->instance.device(device);
  out->kind = "vulkan";
  out->name = d.name.c_str();
  out->memory_bytes = d.memory_bytes;
  return nullptr;
}

anvil_plugin_error* Allocate(anvil_plugin_context* context, size_t device, size_t bytes, anvil_plugin_memory** out) {
  if (auto* e = CheckDevice(context, device)) return e;
  auto memory = std::make_unique<anvil_plugin_memory>();
  memory->device = device;
  std::string why;
  if (!context->instance.device(device).CreateBuffer(bytes, &memory->buffer, why)) return Error(kResourceExhausted, why);
  *out = memory.release();
  return nullptr;
}

void Free(anvil_plugin_context* context, anvil_plugin_memory* memory) {
  if (!memory) return;
  context->instance.device(memory->device).DestroyBuffer(memory->buffer);
  delete memory;
}

// Memory is host-visible and coherent: copies are memcpys through the mapping.
anvil_plugin_error* CopyFromHost(anvil_plugin_context* context, anvil_plugin_memory* memory, const void* src,
                                 size_t bytes, anvil_plugin_done done, void* user) {
  if (bytes != memory->buffer.bytes) return Error(kInvalidArgument, "copy size differs from the buffer's");
  AsyncCompletion(context->executor, "memory_copy_from_host", done, user, [=]() -> anvil_plugin_error* {
    if (bytes) std::memcpy(memory->buffer.mapped, src, bytes);
    return nullptr;
  });
  return nullptr;
}

anvil_plugin_error* CopyToHost(anvil_plugin_context* context, anvil_plugin_memory* memory, void* dst, size_t bytes,
                               anvil_plugin_done done, void* user) {
  if (bytes != memory->buffer.bytes) return Error(kInvalidArgument, "copy size differs from the buffer's");
  AsyncCompletion(context->executor, "memory_copy_to_host", done, user, [=]() -> anvil_plugin_error* {
    if (bytes) std::memcpy(dst, memory->buffer.mapped, bytes);
    return nullptr;
  });
  return nullptr;
}

anvil_plugin_error* Compile(anvil_plugin_context* context, size_t device, const char* text, size_t size, const char*,
                            anvil_plugin_executable** out) {
  if (auto* e = CheckDevice(context, device)) return e;
  auto exe = Executable::Compile(context->instance.device(device), device, std::string_view(text, size),
                                 context->executor);
  if (!exe.ok()) return FromStatus(exe.status());
  *out = reinterpret_cast<anvil_plugin_executable*>(std::move(exe).value().release());
  return nullptr;
}

void ExecutableDestroy(anvil_plugin_context*, anvil_plugin_executable* e) { delete reinterpret_cast<Executable*>(e); }

anvil_plugin_error* Serialize(anvil_plugin_context*, anvil_plugin_executable* executable, void** out, size_t* size) {
  anvil::plugin::GiveSerialized(reinterpret_cast<Executable*>(executable)->Serialize(), out, size);
  return nullptr;
}

// The plan is made again from the text; the kernels' SPIR-V (validated
// again) comes from the bytes, so nothing is compiled from GLSL.
anvil_plugin_error* Deserialize(anvil_plugin_context* context, size_t device, const void* bytes, size_t size,
                                anvil_plugin_executable** out) {
  if (auto* e = CheckDevice(context, device)) return e;
  auto serialized = anvil::vulkan::ReadSerialized(std::string_view(static_cast<const char*>(bytes), size));
  if (!serialized.ok()) return FromStatus(serialized.status());
  auto exe = Executable::Compile(context->instance.device(device), device, serialized->canonical_text,
                                 context->executor, &serialized->spirv);
  if (!exe.ok()) return FromStatus(exe.status());
  *out = reinterpret_cast<anvil_plugin_executable*>(std::move(exe).value().release());
  return nullptr;
}

anvil_plugin_error* Execute(anvil_plugin_context* context, anvil_plugin_executable* executable,
                            anvil_plugin_memory* const* inputs, const uint8_t* donated, size_t num_inputs,
                            anvil_plugin_memory** outputs, size_t num_outputs, anvil_plugin_done done, void* user) {
  auto* exe = reinterpret_cast<Executable*>(executable);
  // Frees the donated inputs and the outputs made so far on every early return.
  anvil::plugin::ExecutionMemory memory(context, &Free, inputs, donated, num_inputs, outputs, num_outputs);
  if (num_inputs != exe->parameter_count() || num_outputs != exe->output_bytes().size()) {
    return Error(kInvalidArgument, "the executable takes " + std::to_string(exe->parameter_count()) +
                                       " inputs and gives " + std::to_string(exe->output_bytes().size()) + " outputs");
  }
  std::vector<const Buffer*> in, out;
  for (size_t k = 0; k < num_inputs; ++k) {
    if (inputs[k]->buffer.bytes != exe->parameter_bytes()[k]) {
      return Error(kInvalidArgument, "input " + std::to_string(k) + " has " + std::to_string(inputs[k]->buffer.bytes) +
                                         " bytes; the program's parameter " + std::to_string(k) + " takes " +
                                         std::to_string(exe->parameter_bytes()[k]));
    }
    in.push_back(&inputs[k]->buffer);
  }
  const size_t device = exe->device_index();
  if (anvil_plugin_error* e = memory.AllocateOutputs([&](size_t k, anvil_plugin_memory** m) {
        return Allocate(context, device, exe->output_bytes()[k], m);
      })) {
    return e;
  }
  for (size_t k = 0; k < num_outputs; ++k) out.push_back(&outputs[k]->buffer);
  AsyncCompletion(context->executor, "executable_execute", done, user,
                  [exe, in = std::move(in), out = std::move(out),
                   donations = memory.Start()]() mutable -> anvil_plugin_error* {
                    const anvil::hlo::Status s = anvil::vulkan::RunExecutable(*exe, exe->device(), in, out);
                    donations.FreeAll();  // read, and not reused: the plugin is done with them
                    return FromStatus(s);
                  });
  return nullptr;
}

anvil_plugin_api MakeApi() {
  anvil_plugin_api api = BaseApi("vulkan", "0.1.0");
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
  return api;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const anvil_plugin_api* anvil_plugin_get_api(void) {
  static const anvil_plugin_api api = MakeApi();
  return &api;
}
