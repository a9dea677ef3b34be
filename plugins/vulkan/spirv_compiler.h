// GLSL to SPIR-V for the Vulkan plugin's kernels: glslang through shaderc,
// then SPIRV-Tools' optimizer (performance passes), then its validator for
// the Vulkan 1.2 environment the plugin targets. A module that fails
// validation never reaches the driver.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/status.h"

namespace anvil::vulkan {

struct SpirvOptions {
  bool optimize = true;
};

// INTERNAL with the compiler's or validator's message (and the shader text)
// when the generated shader is wrong: that is a bug in the plugin. With
// ANVIL_VULKAN_DUMP_SPIRV=DIR set, every module is also written to DIR
// (NAME-HASH.spv, with its GLSL as NAME-HASH.comp).
hlo::StatusOr<std::vector<uint32_t>> CompileGlsl(const std::string& glsl, const std::string& name,
                                                 const SpirvOptions& options = {});

// The validator alone, as the plugin runs it (and as `spirv-val
// --target-env vulkan1.2 --scalar-block-layout` would).
hlo::Status ValidateSpirv(const std::vector<uint32_t>& words);

}  // namespace anvil::vulkan
