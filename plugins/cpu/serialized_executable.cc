#include "plugins/cpu/serialized_executable.h"

#include <cstdint>
#include <cstring>

#include "hlo/binary_module.h"

namespace anvil::cpu {
namespace {

constexpr std::string_view kMagic = "ANVKCPU1";
const std::string kWhat = "serialised CPU executable";

}  // namespace

std::string WriteExecutable(const hlo::Module& module, const ConvLayoutBook& layouts) {
  const std::string binary = hlo::WriteBinaryModule(module);
  std::string out(kMagic);
  const uint64_t size = binary.size();
  out.append(reinterpret_cast<const char*>(&size), sizeof size);
  out += binary;
  out += layouts.Write();
  return out;
}

hlo::StatusOr<SerializedExecutable> ReadExecutable(std::string_view bytes) {
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return hlo::InvalidArgument(kWhat + ": byte 0: not one of this version (expected " + std::string(kMagic) + ")");
  }
  uint64_t size = 0;
  if (bytes.size() < kMagic.size() + sizeof size) return hlo::InvalidArgument(kWhat + ": byte 8: truncated");
  std::memcpy(&size, bytes.data() + kMagic.size(), sizeof size);
  const size_t module_at = kMagic.size() + sizeof size;
  if (size > bytes.size() - module_at) {
    return hlo::InvalidArgument(kWhat + ": byte " + std::to_string(module_at) + ": truncated module");
  }
  SerializedExecutable exe;
  // Each part's errors count bytes from the part's start, which the name says.
  ANVIL_ASSIGN_OR_RETURN(exe.module, hlo::ReadBinaryModule(bytes.substr(module_at, size),
                                                           kWhat + ", module at byte " + std::to_string(module_at)));
  const size_t layouts_at = module_at + size;
  ANVIL_ASSIGN_OR_RETURN(exe.layouts,
                         ConvLayoutBook::Read(bytes.substr(layouts_at),
                                              kWhat + ", convolution layouts at byte " + std::to_string(layouts_at)));
  return exe;
}

}  // namespace anvil::cpu
