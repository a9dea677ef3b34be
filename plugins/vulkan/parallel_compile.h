// Compiles the GLSL of every kernel of a planned program at once, on core's
// host threads: glslang is nearly all of a Vulkan compile (MobileNet's step:
// 25 s on one thread), and kernels compile independently.
#pragma once

#include <unordered_map>

#include "anvil/anvil_plugin.h"
#include "hlo/kernel_plan.h"
#include "hlo/status.h"
#include "plugins/vulkan/glsl_dialect.h"
#include "plugins/vulkan/vulkan_device.h"
#include "plugins/vulkan/vulkan_serialized.h"

namespace anvil::vulkan {

// Every kernel of a plan, emitted, and its passes' SPIR-V.
struct CompiledKernels {
  // By the plan's kernel specs; a kernel the generator refuses is absent
  // (the builder reports it where it meets the kernel).
  std::unordered_map<const hlo::KernelSpec*, gpu::KernelSource> shaders;
  // By GlslKey, but for passes whose pipeline `device` already has.
  KnownSpirv spirv;
};

// The first compile error, if any, is returned (a bug in the generator).
hlo::StatusOr<CompiledKernels> CompileKernels(const hlo::ProgramPlan& plan, const GlslTarget& target,
                                              Device& device, const anvil_plugin_host_executor& host);

}  // namespace anvil::vulkan
