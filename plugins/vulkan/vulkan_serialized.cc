#include "plugins/vulkan/vulkan_serialized.h"

#include <cstdio>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace anvil::vulkan {
namespace {

constexpr char kMagic[8] = {'A', 'N', 'V', 'K', 'V', 'K', 'X', '1'};

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
  size_t left() const { return bytes_.size() - at_; }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace

std::string GlslKey(std::string_view glsl) {
  const XXH128_hash_t h = XXH3_128bits(glsl.data(), glsl.size());
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return hex;
}

std::string WriteSerialized(const std::string& canonical_text,
                            const std::vector<std::pair<std::string, std::vector<uint32_t>>>& spirv) {
  std::string out(kMagic, sizeof(kMagic));
  Put<uint64_t>(out, canonical_text.size());
  out += canonical_text;
  Put<uint64_t>(out, spirv.size());
  for (const auto& [key, words] : spirv) {
    Put<uint64_t>(out, key.size());
    out += key;
    Put<uint64_t>(out, words.size());
    if (!words.empty()) out.append(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(uint32_t));
  }
  return out;
}

hlo::StatusOr<SerializedExecutable> ReadSerialized(std::string_view bytes) {
  Reader r(bytes);
  SerializedExecutable e;
  auto bad = [&](const char* what) {
    return hlo::InvalidArgument("serialised Vulkan executable: byte " + std::to_string(r.offset()) + ": " + what);
  };
  std::string magic;
  if (!r.GetBytes(sizeof(kMagic), &magic) || std::memcmp(magic.data(), kMagic, sizeof(kMagic)) != 0) {
    return bad("not a serialised Vulkan executable of this version");
  }
  uint64_t size = 0, count = 0;
  if (!r.Get(&size) || !r.GetBytes(size, &e.canonical_text)) return bad("truncated program text");
  if (!r.Get(&count)) return bad("truncated kernel count");
  for (uint64_t k = 0; k < count; ++k) {
    std::string key, words;
    uint64_t key_size = 0, word_count = 0;
    if (!r.Get(&key_size) || key_size != 32 || !r.GetBytes(key_size, &key)) return bad("bad kernel key");
    if (!r.Get(&word_count) || word_count > r.left() / sizeof(uint32_t)) return bad("truncated SPIR-V");
    r.GetBytes(word_count * sizeof(uint32_t), &words);
    std::vector<uint32_t>& out = e.spirv[key];
    out.resize(word_count);
    if (!words.empty()) std::memcpy(out.data(), words.data(), words.size());
  }
  if (!r.done()) return bad("bytes after the last kernel");
  return e;
}

}  // namespace anvil::vulkan
