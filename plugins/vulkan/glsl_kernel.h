// GLSL compute shaders for one planned kernel (hlo/kernel_plan.h). Every
// buffer is reached through its device address: the push constants hold
// the address of a table with one address per kernel input, then per
// output, so a kernel has no descriptor sets and no binding-size limit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/kernel_plan.h"
#include "hlo/status.h"
#include "plugins/vulkan/glsl_types.h"

namespace anvil::vulkan {

struct ShaderPass {
  std::string glsl;
  uint64_t invocations = 0;  // how many the pass runs (a grid-stride loop covers any rest)
};

struct KernelShaders {
  // Run in order, each seeing what the one before wrote.
  std::vector<ShaderPass> passes;
  std::vector<const hlo::Instruction*> inputs;  // table entries 0..n-1
  std::vector<hlo::Shape> outputs;              // then one per array leaf of the root
  std::vector<uint64_t> scratch_bytes;          // then working memory the passes share
};

struct KernelOptions {
  ShaderFeatures features;
  uint32_t workgroup_size = 64;
};

hlo::StatusOr<KernelShaders> EmitKernel(const hlo::KernelSpec& kernel, const KernelOptions& options);

}  // namespace anvil::vulkan
