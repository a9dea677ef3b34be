#include "plugins/gpu/serialized_program.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "plugins/common/byte_stream.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace anvil::gpu {

using plugin::PutBytes;
using plugin::PutValue;

std::string KernelKey(std::string_view source) {
  const XXH128_hash_t h = XXH3_128bits(source.data(), source.size());
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return hex;
}

std::string WriteSerializedProgram(std::string_view magic, const std::string& canonical_text,
                                   const std::vector<std::pair<std::string, std::string>>& binaries) {
  std::string out(magic);
  PutBytes(out, canonical_text);
  PutValue<uint64_t>(out, binaries.size());
  for (const auto& [key, binary] : binaries) {
    PutBytes(out, key);
    PutBytes(out, binary);
  }
  return out;
}

hlo::StatusOr<SerializedProgram> ReadSerializedProgram(std::string_view magic, const std::string& what,
                                                       std::string_view bytes) {
  plugin::ByteReader r(bytes);
  SerializedProgram p;
  auto bad = [&](const char* why) { return hlo::InvalidArgument(what + ": byte " + std::to_string(r.offset()) + ": " + why); };
  if (!r.Skip(magic)) return bad("not one of this version");
  uint64_t count = 0;
  if (!r.GetBytes(&p.canonical_text)) return bad("truncated program text");
  if (!r.Get(&count)) return bad("truncated kernel count");
  for (uint64_t k = 0; k < count; ++k) {
    std::string key, binary;
    if (!r.GetBytes(&key) || key.size() != 32) return bad("bad kernel key");
    if (!r.GetBytes(&binary)) return bad("truncated kernel binary");
    p.binaries[key] = std::move(binary);
  }
  if (!r.done()) return bad("bytes after the last kernel");
  return p;
}

}  // namespace anvil::gpu
