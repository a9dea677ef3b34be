#include "plugins/cpu/serialized_executable.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "hlo/binary_module.h"
#include "plugins/common/byte_stream.h"

namespace anvil::cpu {
namespace {

// Version 2 added the compile options' byte after the magic.
constexpr std::string_view kMagic = "ANVKCPU2";
// Constant data, not a std::string: a global with a dynamic initialiser
// is written when a client's dlopen runs it, and TSan (which cannot see
// glibc's loader lock) reports that write as racing with another client's
// read of it (CompileCacheTest.ClientsCompilingOneProgramAtOnceAllGetItRight).
constexpr std::string_view kWhat = "serialised CPU executable";

}  // namespace

std::string WriteExecutable(const hlo::Module& module, const ConvLayoutBook& layouts, const CompileOptions& options) {
  std::string out(kMagic);
  out += static_cast<char>(options.flush_denormals ? 1 : 0);
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
  SerializedExecutable exe;
  uint8_t flags = 0;
  if (!r.Get(&flags)) {
    return hlo::InvalidArgument(std::string(kWhat) + ": byte " + std::to_string(kMagic.size()) +
                                ": truncated before its compile options");
  }
  if (flags > 1) {
    return hlo::InvalidArgument(std::string(kWhat) + ": byte " + std::to_string(kMagic.size()) +
                                ": compile options neither 0 nor 1");
  }
  exe.options.flush_denormals = flags == 1;
  uint64_t size = 0;
  const size_t size_at = kMagic.size() + sizeof flags;
  const size_t module_at = size_at + sizeof size;
  if (!r.Get(&size) || size > bytes.size() - module_at) {
    return hlo::InvalidArgument(std::string(kWhat) + ": byte " + std::to_string(size_at) + ": truncated module");
  }
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
