#include "plugins/gpu/serialized_program.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace anvil::gpu {
namespace {

template <typename T>
void Put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  bool Get(T* value) {
    if (sizeof(T) > bytes_.size() - at_) return false;
    std::memcpy(value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  bool GetBytes(uint64_t size, std::string* out) {
    if (size > bytes_.size() - at_) return false;
    out->assign(bytes_.substr(at_, size));
    at_ += size;
    return true;
  }
  bool done() const { return at_ == bytes_.size(); }
  size_t offset() const { return at_; }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace

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
  Put<uint64_t>(out, canonical_text.size());
  out += canonical_text;
  Put<uint64_t>(out, binaries.size());
  for (const auto& [key, binary] : binaries) {
    Put<uint64_t>(out, key.size());
    out += key;
    Put<uint64_t>(out, binary.size());
    out += binary;
  }
  return out;
}

hlo::StatusOr<SerializedProgram> ReadSerializedProgram(std::string_view magic, const std::string& what,
                                                       std::string_view bytes) {
  Reader r(bytes);
  SerializedProgram p;
  auto bad = [&](const char* why) { return hlo::InvalidArgument(what + ": byte " + std::to_string(r.offset()) + ": " + why); };
  std::string head;
  if (!r.GetBytes(magic.size(), &head) || head != magic) return bad("not one of this version");
  uint64_t size = 0, count = 0;
  if (!r.Get(&size) || !r.GetBytes(size, &p.canonical_text)) return bad("truncated program text");
  if (!r.Get(&count)) return bad("truncated kernel count");
  for (uint64_t k = 0; k < count; ++k) {
    std::string key, binary;
    uint64_t key_size = 0, binary_size = 0;
    if (!r.Get(&key_size) || key_size != 32 || !r.GetBytes(key_size, &key)) return bad("bad kernel key");
    if (!r.Get(&binary_size) || !r.GetBytes(binary_size, &binary)) return bad("truncated kernel binary");
    p.binaries[key] = std::move(binary);
  }
  if (!r.done()) return bad("bytes after the last kernel");
  return p;
}

}  // namespace anvil::gpu
