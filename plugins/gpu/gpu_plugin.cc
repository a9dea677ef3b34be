#include "plugins/gpu/gpu_plugin.h"

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "plugins/common/execution_memory.h"
#include "plugins/common/plugin_support.h"
#include "plugins/gpu/caching_allocator.h"
#include "plugins/gpu/completion_thread.h"
#include "plugins/gpu/plugin_parts.h"

struct anvil_plugin_memory {
  size_t device;
  uint64_t pointer;
  size_t bytes;
};

struct anvil_plugin_context {
  anvil_plugin_host_executor executor;
  const anvil::gpu::GpuPlugin& plugin;
  std::unique_ptr<anvil::gpu::DeviceRuntime> runtime;
  // Each device's memory for executions (arenas, address tables), kept for
  // the next execution.
  std::vector<std::unique_ptr<anvil::gpu::CachingAllocator>> execution_memory;
  // Each device's thread that waits for its executions (completion_thread.h).
  std::vector<std::unique_ptr<anvil::gpu::CompletionThread>> completions;
  anvil::gpu::CompileTargets targets;
};

namespace anvil::gpu {
namespace {

using plugin::Async;
using plugin::AsyncCompletion;
using plugin::Error;
using plugin::FromStatus;
using plugin::kInvalidArgument;

// The plugin this library serves: one per plugin file, set by
// MakeGpuPluginApi before any entry point can be called.
const GpuPlugin* the_plugin = nullptr;

anvil_plugin_error* ContextCreate(const anvil_plugin_host_executor* executor, anvil_plugin_context** out) {
  const GpuPlugin& p = *the_plugin;
  if (!executor || executor->struct_size < ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_host_executor, enqueue)) {
    return Error(kInvalidArgument, p.kind.plugin + " needs core's host executor");
  }
  // The runtime and the compiler are loaded once per process and never unloaded.
  plugin::StayLoaded(reinterpret_cast<const void*>(&ContextCreate));
  auto context = std::unique_ptr<anvil_plugin_context>(new anvil_plugin_context{
      plugin::CopyHostExecutor(*executor), p, p.open_runtime(), {}, {}, CompileTargets(p.kind.plugin)});
  DeviceRuntime& runtime = *context->runtime;
  if (runtime.DeviceCount() == 0) {
    // Loading still succeeds: a machine without a GPU has zero devices here.
    std::fprintf(stderr, "anvil %s plugin: no devices: %s\n", p.name, runtime.NoDeviceReason().c_str());
  }
  for (size_t k = 0; k < runtime.DeviceCount(); ++k) {
    // Up to a quarter of the device's memory waits for reuse.
    context->execution_memory.push_back(std::make_unique<CachingAllocator>(
        [&runtime, k](uint64_t bytes) -> hlo::StatusOr<uint64_t> {
          DeviceScope scope(runtime, k);
          ANVIL_RETURN_IF_ERROR(scope.status());
          return runtime.Allocate(bytes);
        },
        [&runtime, k](uint64_t address) {
          DeviceScope scope(runtime, k);
          if (scope.status().ok()) runtime.Free(address);
        },
        runtime.DeviceAt(k).memory_bytes / 4));
    context->completions.push_back(std::make_unique<CompletionThread>());
  }
  std::string why_missing;
  for (std::string& name : p.list_targets(&why_missing)) context->targets.Add(std::move(name));
  if (!why_missing.empty()) {
    context->targets.Missing(why_missing);
    std::fprintf(stderr, "anvil %s plugin: cannot compile: %s\n", p.name, why_missing.c_str());
  }
  *out = context.release();
  return nullptr;
}

void ContextDestroy(anvil_plugin_context* context) {
  context->completions.clear();       // core has seen every execution done; the threads end
  context->execution_memory.clear();  // gives the devices their memory back
  delete context;                     // and the runtime view what it retained
}

size_t Devices(anvil_plugin_context* context) { return context->runtime->DeviceCount(); }

anvil_plugin_error* DeviceCount(anvil_plugin_context* context, size_t* out) {
  *out = Devices(context);
  return nullptr;
}

anvil_plugin_error* CheckDevice(anvil_plugin_context* context, size_t device) {
  if (device < Devices(context)) return nullptr;
  return FromStatus(NoSuchDevice(context->plugin.kind.plugin, Devices(context), device,
                                 context->runtime->NoDeviceReason()));
}

// Runs `work` with `device` current on the calling thread, and the
// thread's own device current again afterwards.
template <typename Work>
anvil_plugin_error* OnDevice(anvil_plugin_context* context, size_t device, Work&& work) {
  if (auto* e = CheckDevice(context, device)) return e;
  DeviceScope scope(*context->runtime, device);
  if (!scope.status().ok()) return FromStatus(scope.status());
  return work();
}

anvil_plugin_error* DeviceProperties(anvil_plugin_context* context, size_t device, anvil_plugin_device_properties* out) {
  if (auto* e = CheckDevice(context, device)) return e;
  const DeviceRuntime::Device& d = context->runtime->DeviceAt(device);
  out->kind = context->plugin.name;
  out->name = d.name.c_str();
  out->memory_bytes = d.memory_bytes;
  return nullptr;
}

anvil_plugin_error* Allocate(anvil_plugin_context* context, size_t device, size_t bytes, anvil_plugin_memory** out) {
  return OnDevice(context, device, [&]() -> anvil_plugin_error* {
    uint64_t pointer = 0;
    // Runtimes refuse zero bytes; an empty array still gets a handle.
    if (bytes) {
      auto allocated = context->runtime->Allocate(bytes);
      if (!allocated.ok() && allocated.status().code() == hlo::StatusCode::kResourceExhausted) {
        // What executions keep for reuse goes back to the device first.
        context->execution_memory[device]->Trim();
        allocated = context->runtime->Allocate(bytes);
      }
      if (!allocated.ok()) return FromStatus(allocated.status());
      pointer = *allocated;
    }
    *out = new anvil_plugin_memory{device, pointer, bytes};
    return nullptr;
  });
}

void Free(anvil_plugin_context* context, anvil_plugin_memory* memory) {
  if (!memory) return;
  if (memory->pointer) {
    // Nothing can report a failure here: a device that cannot be made
    // current leaves the memory to its context's release.
    anvil_plugin_error* e = OnDevice(context, memory->device, [&]() -> anvil_plugin_error* {
      context->runtime->Free(memory->pointer);
      return nullptr;
    });
    if (e) plugin::ErrorDestroy(e);
  }
  delete memory;
}

// Copies run on one of core's host threads, which waits for the runtime:
// synchronous copies from pageable host memory (what the caller hands in).
anvil_plugin_error* CopyFromHost(anvil_plugin_context* context, anvil_plugin_memory* memory, const void* src,
                                 size_t bytes, anvil_plugin_done done, void* user) {
  if (bytes != memory->bytes) return Error(kInvalidArgument, "copy size differs from the buffer's");
  AsyncCompletion(context->executor, "memory_copy_from_host", done, user, [=]() -> anvil_plugin_error* {
    if (!bytes) return nullptr;
    return OnDevice(context, memory->device, [&]() -> anvil_plugin_error* {
      DeviceRuntime& runtime = *context->runtime;
      hlo::Status s = runtime.CopyToDevice(memory->pointer, src, bytes, nullptr);
      return FromStatus(s.ok() ? runtime.Synchronize(nullptr) : s);
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
      DeviceRuntime& runtime = *context->runtime;
      hlo::Status s = runtime.CopyToHost(dst, memory->pointer, bytes, nullptr);
      return FromStatus(s.ok() ? runtime.Synchronize(nullptr) : s);
    });
  });
  return nullptr;
}

// Compiles (or, with `known`, loads a serialised executable's code and
// compiles what it lacks) for `device`.
anvil_plugin_error* CompileOn(anvil_plugin_context* context, size_t device, std::string_view text,
                              const CompiledKernels* known, anvil_plugin_executable** out) {
  if (auto* e = CheckDevice(context, device)) return e;
  const GpuPlugin& p = context->plugin;
  auto compiler = p.device_compiler(*context->runtime, device, context->executor);
  // A serialised executable loads without a compiler when it holds every pass.
  if (!compiler.ok() && !known) return FromStatus(compiler.status());
  KernelCompiler compile = compiler.ok() ? std::move(compiler).value()
                                         : KernelCompiler([why = compiler.status()](std::vector<KernelModule>) {
                                             return hlo::StatusOr<CompiledKernels>(why);
                                           });
  auto exe = GpuExecutable::Compile(*context->runtime, device, p.kind, text, compile, known);
  if (!exe.ok()) return FromStatus(exe.status());
  *out = reinterpret_cast<anvil_plugin_executable*>(std::move(exe).value().release());
  return nullptr;
}

anvil_plugin_error* Compile(anvil_plugin_context* context, size_t device, const char* text, size_t size, const char*,
                            anvil_plugin_executable** out) {
  return CompileOn(context, device, std::string_view(text, size), nullptr, out);
}

anvil_plugin_error* Serialize(anvil_plugin_context*, anvil_plugin_executable* executable, void** out, size_t* size) {
  plugin::GiveSerialized(reinterpret_cast<GpuExecutable*>(executable)->Serialize(), out, size);
  return nullptr;
}

// A cached executable: its program planned again, its code objects loaded
// as they are (core's cache key holds the device, so they are for it).
anvil_plugin_error* Deserialize(anvil_plugin_context* context, size_t device, const void* bytes, size_t size,
                                anvil_plugin_executable** out) {
  auto serialized = GpuExecutable::ReadSerialized(context->plugin.kind,
                                                  std::string_view(static_cast<const char*>(bytes), size));
  if (!serialized.ok()) return FromStatus(serialized.status());
  return CompileOn(context, device, serialized->canonical_text, &serialized->kernels, out);
}

void ExecutableDestroy(anvil_plugin_context*, anvil_plugin_executable* executable) {
  delete reinterpret_cast<GpuExecutable*>(executable);
}

// Hands a queued execution to its device's completion thread, which waits
// for it, gives back its memory and the donated inputs it read, whatever
// the wait gave, and then reports it done on one of core's host threads:
// callbacks the application chained on the execution run where they ran
// before, and a slow or waiting one holds up no other completion. On an
// error nothing was handed over: the execution has been waited for and
// its memory and the donations given back, and `done` will not be called.
anvil_plugin_error* AwaitOnCompletionThread(const anvil_plugin_host_executor& executor,
                                            CompletionThread& completions, std::unique_ptr<QueuedExecution> queued,
                                            plugin::DonatedInputs donations, anvil_plugin_done done, void* user) {
  struct Pending {
    std::unique_ptr<QueuedExecution> execution;
    plugin::DonatedInputs donations;
  };
  try {
    // std::function copies what it holds: the move-only parts are shared.
    auto pending = std::make_shared<Pending>(Pending{std::move(queued), std::move(donations)});
    completions.Add([pending, &executor, done, user] {
      anvil_plugin_error* error = nullptr;
      try {
        error = FromStatus(pending->execution->Wait());
      } catch (...) {
        error = plugin::ErrorFromCurrentException("executable_execute");
      }
      pending->execution.reset();    // its arena and tables back to the pool, the stream done
      pending->donations.FreeAll();  // read, and not reused: the plugin is done with them
      try {
        Async(executor, [done, user, error] { done(user, error); });
      } catch (...) {
        done(user, error);  // no room to hand it over: reported from here
      }
    });
    return nullptr;
  } catch (...) {
    // The job was never queued; what it held (the execution, waited for by
    // its destructor, and the donations) is gone with it.
    return plugin::ErrorFromCurrentException("executable_execute");
  }
}

anvil_plugin_error* Execute(anvil_plugin_context* context, anvil_plugin_executable* executable,
                            anvil_plugin_memory* const* inputs, const uint8_t* donated, size_t num_inputs,
                            anvil_plugin_memory** outputs, size_t num_outputs, anvil_plugin_done done, void* user) {
  auto* exe = reinterpret_cast<GpuExecutable*>(executable);
  const DeviceProgram& program = exe->program();
  // Frees the donated inputs and the outputs made so far on every early return.
  plugin::ExecutionMemory memory(context, &Free, inputs, donated, num_inputs, outputs, num_outputs);
  if (num_inputs != program.parameter_bytes.size() || num_outputs != program.output_bytes.size()) {
    return Error(kInvalidArgument, "the executable takes " + std::to_string(program.parameter_bytes.size()) +
                                       " inputs and gives " + std::to_string(program.output_bytes.size()) + " outputs");
  }
  const size_t device = exe->device();
  std::vector<uint64_t> in, out;
  for (size_t k = 0; k < num_inputs; ++k) {
    if (inputs[k]->bytes != program.parameter_bytes[k]) {
      return Error(kInvalidArgument, "input " + std::to_string(k) + " has " + std::to_string(inputs[k]->bytes) +
                                         " bytes; the program's parameter " + std::to_string(k) + " takes " +
                                         std::to_string(program.parameter_bytes[k]));
    }
    if (inputs[k]->device != device) {
      return Error(kInvalidArgument, "input " + std::to_string(k) + " is on " + context->plugin.family + " device " +
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
  CachingAllocator* pool = context->execution_memory[device].get();
  CompletionThread* completions = context->completions[device].get();
  if (!exe->WaitsWhileQueued()) {
    // Queued here, on the issuing thread, which never waits for the device:
    // the device's completion thread does.
    auto queued = exe->Start(*pool, std::move(in), out);
    if (!queued.ok()) return FromStatus(queued.status());
    return AwaitOnCompletionThread(context->executor, *completions, std::move(queued).value(), memory.Start(), done,
                                   user);
  }
  // A loop or a conditional waits for the device to decide where to go
  // next: queued on a host thread, which the completion thread then
  // relieves of the final wait.
  Async(context->executor, [context, exe, pool, completions, in = std::move(in), out = std::move(out),
                            donations = memory.Start(), done, user]() mutable {
    std::unique_ptr<QueuedExecution> queued;
    anvil_plugin_error* error = nullptr;
    try {
      auto started = exe->Start(*pool, std::move(in), out);
      if (started.ok()) {
        queued = std::move(started).value();
      } else {
        error = FromStatus(started.status());
      }
    } catch (...) {
      error = plugin::ErrorFromCurrentException("executable_execute");
    }
    // A failed hand-over has released the execution and the donations itself.
    if (!error) error = AwaitOnCompletionThread(context->executor, *completions, std::move(queued), std::move(donations),
                                                done, user);
    if (!error) return;
    queued.reset();  // waited for, its memory given back
    donations.FreeAll();
    done(user, error);
  });
  return nullptr;
}

anvil_plugin_error* TargetCountEntry(anvil_plugin_context* context, size_t* out) {
  return TargetCount(context->targets, out);
}

anvil_plugin_error* TargetNameEntry(anvil_plugin_context* context, size_t target, const char** out) {
  return TargetName(context->targets, target, out);
}

anvil_plugin_error* TargetCompile(anvil_plugin_context* context, size_t target, const char* text, size_t size,
                                  const char*) {
  if (auto* e = FromStatus(context->targets.Check(target))) return e;
  return FromStatus(context->plugin.compile_for_target(context->targets.name(target), std::string_view(text, size),
                                                       context->executor));
}

}  // namespace

anvil_plugin_api MakeGpuPluginApi(const GpuPlugin& p) {
  the_plugin = &p;
  anvil_plugin_api api = plugin::BaseApi(p.name, p.version);
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
  api.serialized_free = &plugin::FreeSerialized;
  api.executable_deserialize = ANVIL_GUARDED(executable_deserialize, Deserialize);
  api.target_count = ANVIL_GUARDED(target_count, TargetCountEntry);
  api.target_name = ANVIL_GUARDED(target_name, TargetNameEntry);
  api.target_compile = ANVIL_GUARDED(target_compile, TargetCompile);
  return api;
}

}  // namespace anvil::gpu
