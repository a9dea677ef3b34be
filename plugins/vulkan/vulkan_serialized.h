// The Vulkan plugin's serialised executable, for core's compile cache: the
// GPU layer's serialised program (plugins/gpu/serialized_program.h) with
// the SPIR-V of every kernel it dispatches, keyed by a hash of the
// kernel's GLSL. Loading re-plans the program from the text and takes each
// kernel's SPIR-V from here instead of compiling its GLSL again, which is
// nearly all of a cold compile's time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hlo/status.h"

namespace anvil::vulkan {

// SPIR-V words by GlslKey.
using KnownSpirv = std::unordered_map<std::string, std::vector<uint32_t>>;

// 32 hex digits of XXH3-128 over a kernel's GLSL.
std::string GlslKey(std::string_view glsl);

struct SerializedExecutable {
  std::string canonical_text;
  KnownSpirv spirv;
};

std::string WriteSerialized(const std::string& canonical_text,
                            const std::vector<std::pair<std::string, std::vector<uint32_t>>>& spirv);
// INVALID_ARGUMENT naming the byte offset where the bytes stop making sense.
hlo::StatusOr<SerializedExecutable> ReadSerialized(std::string_view bytes);

}  // namespace anvil::vulkan
