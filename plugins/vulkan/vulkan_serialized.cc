#include "plugins/vulkan/vulkan_serialized.h"

#include <cstring>

#include "plugins/gpu/serialized_program.h"

namespace anvil::vulkan {
namespace {
constexpr std::string_view kMagic("ANVKVKX2", 8);
}  // namespace

std::string GlslKey(std::string_view glsl) { return gpu::KernelKey(glsl); }

std::string WriteSerialized(const std::string& canonical_text,
                            const std::vector<std::pair<std::string, std::vector<uint32_t>>>& spirv) {
  std::vector<std::pair<std::string, std::string>> binaries;
  for (const auto& [key, words] : spirv) {
    binaries.emplace_back(key, std::string(reinterpret_cast<const char*>(words.data()), words.size() * 4));
  }
  return gpu::WriteSerializedProgram(kMagic, canonical_text, binaries);
}

hlo::StatusOr<SerializedExecutable> ReadSerialized(std::string_view bytes) {
  ANVIL_ASSIGN_OR_RETURN(gpu::SerializedProgram program,
                         gpu::ReadSerializedProgram(kMagic, "serialised Vulkan executable", bytes));
  SerializedExecutable e;
  e.canonical_text = std::move(program.canonical_text);
  for (auto& [key, binary] : program.binaries) {
    if (binary.size() % 4 != 0) {
      return hlo::InvalidArgument("serialised Vulkan executable: kernel " + key + "'s SPIR-V is " +
                                  std::to_string(binary.size()) + " bytes, not whole 32-bit words");
    }
    std::vector<uint32_t>& words = e.spirv[key];
    words.resize(binary.size() / 4);
    if (!binary.empty()) std::memcpy(words.data(), binary.data(), binary.size());
  }
  return e;
}

}  // namespace anvil::vulkan
