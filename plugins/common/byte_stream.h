// The plugins' serialised executables (what core's compile cache keeps) are
// plain byte strings: fixed-size values in host order and byte runs
// prefixed by their u64 length. These write them and read them back with
// every read bounds-checked: a read past the end fails and reads nothing,
// so a truncated or corrupt entry can only be refused, with the offset
// where it stopped making sense. (The cache's key pins the build, so host
// order is the only order that is ever read back.)
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace anvil::plugin {

template <typename T>
void PutValue(std::string& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

// A u64 length, then the bytes.
inline void PutBytes(std::string& out, std::string_view bytes) {
  PutValue<uint64_t>(out, bytes.size());
  out.append(bytes);
}

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}

  template <typename T>
  bool Get(T* value) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (sizeof(T) > bytes_.size() - at_) return false;
    std::memcpy(value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  // `size` bytes.
  bool GetBytes(uint64_t size, std::string* out) {
    if (size > bytes_.size() - at_) return false;
    out->assign(bytes_.substr(at_, size));
    at_ += size;
    return true;
  }
  // What PutBytes wrote.
  bool GetBytes(std::string* out) {
    uint64_t size = 0;
    const size_t start = at_;
    if (!Get(&size) || !GetBytes(size, out)) {
      at_ = start;
      return false;
    }
    return true;
  }
  // Whether `expected` comes next (and if so, past it).
  bool Skip(std::string_view expected) {
    if (bytes_.substr(at_, expected.size()) != expected) return false;
    at_ += expected.size();
    return true;
  }
  bool done() const { return at_ == bytes_.size(); }
  size_t offset() const { return at_; }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace anvil::plugin
