// Compiles the GLSL of every kernel of a planned program at once, on core's
// host threads: glslang is nearly all of a Vulkan compile (MobileNet's step:
// 25 s on one thread), and kernels compile independently.
#pragma once

#include "anvil/anvil_plugin.h"
#include "hlo/kernel_plan.h"
#include "hlo/status.h"
#include "plugins/vulkan/glsl_kernel.h"
#include "plugins/vulkan/vulkan_device.h"
#include "plugins/vulkan/vulkan_serialized.h"

namespace anvil::vulkan {

// The SPIR-V of each kernel pass of `plan` by GlslKey, except passes whose
// key `skip` holds or whose pipeline `device` already has. The first
// compile error, if any, is returned (a bug in the generator).
hlo::StatusOr<KnownSpirv> CompileKernels(const hlo::ProgramPlan& plan, const KernelOptions& options, Device& device,
                                         const KnownSpirv* skip, const anvil_plugin_host_executor& host);

}  // namespace anvil::vulkan
