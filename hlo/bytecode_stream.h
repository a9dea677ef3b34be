// Bounds-checked reading of MLIR bytecode: the varint encodings, strings,
// blobs and the section framing. Every read either succeeds or returns an
// INVALID_ARGUMENT status naming the absolute byte offset and what was
// expected, so a truncated or corrupt artifact can never read out of bounds.
// Internal to hlo/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hlo/status.h"

namespace anvil::hlo::bytecode {

// A view of some bytes of the artifact. `offset` is where `data` starts in
// the whole artifact, so that messages from nested readers (a section, a
// properties blob) still point at the right byte of the file.
struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t offset = 0;
};

// The section ids of the MLIR bytecode format.
enum class SectionId : uint8_t {
  kString = 0,
  kDialect = 1,
  kAttrType = 2,
  kAttrTypeOffset = 3,
  kIR = 4,
  kResource = 5,
  kResourceOffset = 6,
  kDialectVersions = 7,
  kProperties = 8,
};
inline constexpr int kNumSections = 9;

class Reader {
 public:
  // `file` prefixes every message (`model.mlir.bc: byte 12: error: ...`).
  Reader(Bytes bytes, const std::string* file) : bytes_(bytes), file_(file) {}

  bool AtEnd() const { return pos_ >= bytes_.size; }
  size_t remaining() const { return bytes_.size - pos_; }
  // The absolute offset of the next byte.
  size_t offset() const { return bytes_.offset + pos_; }

  Status ReadByte(uint8_t& out, std::string_view what = "a byte");
  // The prefix varint: the count of trailing zero bits of the first byte is
  // the number of bytes that follow; a first byte of 0 means eight follow.
  Status ReadVarInt(uint64_t& out, std::string_view what = "a varint") {
    // Most varints (counts, indices, small dimensions) are one byte, with
    // its low bit set: read here, inline, without the general decoding.
    if (pos_ < bytes_.size && (bytes_.data[pos_] & 1)) {
      out = bytes_.data[pos_++] >> 1;
      return OkStatus();
    }
    return ReadLongVarInt(out, what);
  }
  // Zigzag-encoded signed varint.
  Status ReadSignedVarInt(int64_t& out, std::string_view what = "a signed varint");
  // A varint whose low bit is a flag: `value << 1 | flag`.
  Status ReadVarIntWithFlag(uint64_t& out, bool& flag, std::string_view what = "a varint");
  Status ReadBytes(size_t n, Bytes& out, std::string_view what = "bytes");
  Status ReadNullTerminated(std::string_view& out);
  // A varint count of items that each take at least `min_item_bytes` bytes:
  // a count the remaining bytes cannot hold is refused before anything is
  // allocated for it.
  Status ReadCount(uint64_t& out, std::string_view what, size_t min_item_bytes = 1) {
    const size_t at = offset();
    ANVIL_RETURN_IF_ERROR(ReadVarInt(out, what));
    if (min_item_bytes > 0 && out > remaining() / min_item_bytes) return CountTooLarge(at, out, what);
    return OkStatus();
  }
  // A section header (id byte with the alignment flag in its high bit, the
  // length, the alignment and its padding) and the section's bytes.
  Status ReadSection(SectionId& id, Bytes& data);

  // An error at the next byte (or at `at`, an absolute offset).
  Status Error(std::string_view message) const { return ErrorAtOffset(offset(), message); }
  Status ErrorAtOffset(size_t at, std::string_view message) const;
  // "expected X, found end of data" / "expected X, found byte 0x.." at the next byte.
  Status Expected(std::string_view what) const;

 private:
  Status ReadLongVarInt(uint64_t& out, std::string_view what);
  Status CountTooLarge(size_t at, uint64_t count, std::string_view what) const;

  Bytes bytes_;
  size_t pos_ = 0;
  const std::string* file_;
};

// The message prefix of an error at an absolute byte offset.
std::string OffsetPrefix(const std::string& file, size_t offset);

}  // namespace anvil::hlo::bytecode
