#include "pjrt/compile_options.h"

namespace anvil::pjrt {
namespace {

// Field numbers, from xla/pjrt/proto/compile_options.proto and
// xla/xla.proto (ExecutableBuildOptionsProto).
constexpr uint32_t kExecutableBuildOptions = 3;  // in CompileOptionsProto
constexpr uint32_t kDeviceOrdinal = 1;           // in ExecutableBuildOptionsProto
constexpr uint32_t kNumReplicas = 4;
constexpr uint32_t kNumPartitions = 5;

class WireReader {
 public:
  explicit WireReader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return pos_ >= bytes_.size(); }
  size_t pos() const { return pos_; }

  bool Varint(uint64_t& out) {
    out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) return false;
      uint8_t byte = static_cast<uint8_t>(bytes_[pos_++]);
      out |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  // Reads one field's key and value; `value` is the varint (wire type 0) or
  // the bytes (wire type 2); other wire types are skipped.
  bool Field(uint32_t& number, uint32_t& wire_type, uint64_t& varint, std::string_view& bytes) {
    uint64_t key = 0;
    if (!Varint(key)) return false;
    number = static_cast<uint32_t>(key >> 3);
    wire_type = static_cast<uint32_t>(key & 7);
    switch (wire_type) {
      case 0: return Varint(varint);
      case 1: return Skip(8);
      case 5: return Skip(4);
      case 2: {
        uint64_t length = 0;
        if (!Varint(length) || length > bytes_.size() - pos_) return false;
        bytes = bytes_.substr(pos_, length);
        pos_ += length;
        return true;
      }
      default: return false;  // groups (3, 4) are not used by these protos
    }
  }

 private:
  bool Skip(size_t n) {
    if (n > bytes_.size() - pos_) return false;
    pos_ += n;
    return true;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
};

bool ParseBuildOptions(std::string_view bytes, CompileOptions& out, std::string& error) {
  WireReader reader(bytes);
  while (!reader.done()) {
    uint32_t number = 0, wire_type = 0;
    uint64_t varint = 0;
    std::string_view value;
    size_t at = reader.pos();
    if (!reader.Field(number, wire_type, varint, value)) {
      error = "malformed ExecutableBuildOptionsProto at byte " + std::to_string(at);
      return false;
    }
    if (wire_type != 0) continue;
    if (number == kDeviceOrdinal) out.device_ordinal = static_cast<int64_t>(varint);
    if (number == kNumReplicas) out.num_replicas = static_cast<int64_t>(varint);
    if (number == kNumPartitions) out.num_partitions = static_cast<int64_t>(varint);
  }
  return true;
}

}  // namespace

bool ParseCompileOptions(std::string_view bytes, CompileOptions& out, std::string& error) {
  WireReader reader(bytes);
  while (!reader.done()) {
    uint32_t number = 0, wire_type = 0;
    uint64_t varint = 0;
    std::string_view value;
    size_t at = reader.pos();
    if (!reader.Field(number, wire_type, varint, value)) {
      error = "malformed CompileOptionsProto at byte " + std::to_string(at);
      return false;
    }
    if (number == kExecutableBuildOptions && wire_type == 2 && !ParseBuildOptions(value, out, error)) return false;
  }
  // proto3 leaves zero unset; zero replicas or partitions means one.
  if (out.num_replicas == 0) out.num_replicas = 1;
  if (out.num_partitions == 0) out.num_partitions = 1;
  return true;
}

}  // namespace anvil::pjrt
