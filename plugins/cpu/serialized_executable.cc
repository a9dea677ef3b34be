#include "plugins/cpu/serialized_executable.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "hlo/binary_module.h"
#include "plugins/common/byte_stream.h"

namespace anvil::cpu {
namespace {

constexpr std::string_view kMagic = "ANVKCPU1";
// Constant data, not a std::string: a global with a dynamic initialiser
// is written when a client's dlopen runs it, and TSan (which cannot see
// glibc's loader lock) reports that write as racing with another client's
// read of it (CompileCacheTest.ClientsCompilingOneProgramAtOnceAllGetItRight).
constexpr std::string_view kWhat = "serialised CPU executable";

}  // namespace

std::string WriteExecutable(const hlo::Module& module, const ConvLayoutBook& layouts) {
  std::string out(kMagic);
  // Without metadata: its only reader is the compile's refusal of an unknown
  // custom-call (hlo::SourceOf), which an executable that compiled is past.
  plugin::PutBytes(out, hlo::WriteBinaryModule(module, {.keep_metadata = false}));
  out += layouts.Write();
  return out;
}

hlo::StatusOr<SerializedExecutable> ReadExecutable(std::string_view bytes) {
  plugin::ByteReader r(bytes);
  if (!r.Skip(kMagic)) {
    return hlo::InvalidArgument(std::string(kWhat) + ": byte 0: not one of this version (expected " + std::string(kMagic) + ")");
  }
  uint64_t size = 0;
  const size_t module_at = kMagic.size() + sizeof size;
  if (!r.Get(&size) || size > bytes.size() - module_at) {
    return hlo::InvalidArgument(std::string(kWhat) + ": byte " + std::to_string(kMagic.size()) + ": truncated module");
  }
  SerializedExecutable exe;
  // Each part's errors count bytes from the part's start, which the name says.
  ANVIL_ASSIGN_OR_RETURN(exe.module, hlo::ReadBinaryModule(bytes.substr(module_at, size),
                                                           std::string(kWhat) + ", module at byte " + std::to_string(module_at)));
  const size_t layouts_at = module_at + size;
  ANVIL_ASSIGN_OR_RETURN(exe.layouts,
                         ConvLayoutBook::Read(bytes.substr(layouts_at),
                                              std::string(kWhat) + ", convolution layouts at byte " + std::to_string(layouts_at)));
  return exe;
}

}  // namespace anvil::cpu
