// The plugin ABI's entry points for a GPU plugin that runs code objects
// through a DeviceRuntime: devices and their memory, copies, compile,
// serialise, execute, and the compile-only targets. A plugin describes
// itself once (GpuPlugin: its name, runtime, dialect and compilers) and its
// entry file is
//
//   extern "C" const anvil_plugin_api* anvil_plugin_get_api(void) {
//     static const anvil_plugin_api api = anvil::gpu::MakeGpuPluginApi(Describe());
//     return &api;
//   }
//
// With no runtime or no device the plugin still loads, has zero devices and
// says why; compile-only targets work without a device.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "plugins/gpu/device_runtime.h"
#include "plugins/gpu/gpu_executable.h"

namespace anvil::gpu {

struct GpuPlugin {
  const char* name;     // "cuda": the plugin's name and its devices' kind
  const char* version;  // "0.1.0"
  const char* family;   // "CUDA": how messages name its devices ("CUDA device 1")
  ExecutableKind kind;  // dialect, options, "the CUDA plugin", serialised format
  // A plugin context's view of the process's runtime (the runtime itself is
  // opened once per process); what it makes current or retains, it gives
  // back when destroyed.
  std::function<std::unique_ptr<DeviceRuntime>()> open_runtime;
  // The compiler for `device`'s code, or why there is none (UNIMPLEMENTED:
  // no compiler, or one that cannot target this device). Kernels compile
  // on `host`'s threads.
  std::function<hlo::StatusOr<KernelCompiler>(DeviceRuntime& runtime, size_t device,
                                              const anvil_plugin_host_executor& host)>
      device_compiler;
  // The compile-only targets this machine can compile for (names), and why
  // any are missing (appended to `why_missing`).
  std::function<std::vector<std::string>(std::string* why_missing)> list_targets;
  // Compiles a canonical program's kernels for target `name`, with no device.
  std::function<hlo::Status(const std::string& name, std::string_view canonical_text,
                            const anvil_plugin_host_executor& host)>
      compile_for_target;
};

// `plugin` must outlive every use of the API (a static).
anvil_plugin_api MakeGpuPluginApi(const GpuPlugin& plugin);

}  // namespace anvil::gpu
