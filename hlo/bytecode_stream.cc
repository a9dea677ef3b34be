#include "hlo/bytecode_stream.h"

#include <cstdio>
#include <cstring>

namespace anvil::hlo::bytecode {

std::string OffsetPrefix(const std::string& file, size_t offset) {
  return file + ": byte " + std::to_string(offset) + ": error: ";
}

Status Reader::ErrorAtOffset(size_t at, std::string_view message) const {
  return InvalidArgument(OffsetPrefix(file_ ? *file_ : std::string("<input>"), at) + std::string(message));
}

Status Reader::Expected(std::string_view what) const {
  std::string found = "end of data";
  if (!AtEnd()) {
    char buf[16];
    snprintf(buf, sizeof(buf), "byte 0x%02x", bytes_.data[pos_]);
    found = buf;
  }
  return Error("expected " + std::string(what) + ", found " + found);
}

Status Reader::ReadByte(uint8_t& out, std::string_view what) {
  if (AtEnd()) return Expected(what);
  out = bytes_.data[pos_++];
  return OkStatus();
}

Status Reader::ReadLongVarInt(uint64_t& out, std::string_view what) {
  if (AtEnd()) return Expected(what);
  const size_t start = pos_;
  uint8_t first = bytes_.data[pos_];
  // Bytes after the first one: the trailing zeros of the first byte (eight
  // when it is 0, and then the first byte carries no value bits).
  int extra = 0;
  while (extra < 8 && !(first & (1u << extra))) ++extra;
  if (remaining() < static_cast<size_t>(extra) + 1) {
    pos_ = bytes_.size;
    return ErrorAtOffset(bytes_.offset + start, "expected " + std::string(what) + " of " + std::to_string(extra + 1) +
                                                    " bytes, found end of data");
  }
  uint8_t buf[9] = {};
  memcpy(buf, bytes_.data + pos_, static_cast<size_t>(extra) + 1);
  pos_ += static_cast<size_t>(extra) + 1;
  if (extra == 8) {
    uint64_t v = 0;
    for (int i = 8; i >= 1; --i) v = (v << 8) | buf[i];
    out = v;
    return OkStatus();
  }
  uint64_t v = 0;
  for (int i = extra; i >= 0; --i) v = (v << 8) | buf[i];
  out = v >> (extra + 1);
  return OkStatus();
}

Status Reader::ReadSignedVarInt(int64_t& out, std::string_view what) {
  uint64_t v = 0;
  ANVIL_RETURN_IF_ERROR(ReadVarInt(v, what));
  uint64_t decoded = (v >> 1) ^ (~(v & 1) + 1);
  memcpy(&out, &decoded, sizeof(out));
  return OkStatus();
}

Status Reader::ReadVarIntWithFlag(uint64_t& out, bool& flag, std::string_view what) {
  uint64_t v = 0;
  ANVIL_RETURN_IF_ERROR(ReadVarInt(v, what));
  flag = (v & 1) != 0;
  out = v >> 1;
  return OkStatus();
}

Status Reader::ReadBytes(size_t n, Bytes& out, std::string_view what) {
  if (n > remaining()) {
    return Error("expected " + std::to_string(n) + " " + std::string(what) + ", found " +
                 (AtEnd() ? std::string("end of data") : "only " + std::to_string(remaining())));
  }
  out = Bytes{bytes_.data + pos_, n, offset()};
  pos_ += n;
  return OkStatus();
}

Status Reader::ReadNullTerminated(std::string_view& out) {
  const void* nul = AtEnd() ? nullptr : memchr(bytes_.data + pos_, 0, remaining());
  if (!nul) return Error("expected a NUL-terminated string, found end of data");
  const size_t length = static_cast<const uint8_t*>(nul) - (bytes_.data + pos_);
  out = std::string_view(reinterpret_cast<const char*>(bytes_.data + pos_), length);
  pos_ += length + 1;
  return OkStatus();
}

Status Reader::CountTooLarge(size_t at, uint64_t count, std::string_view what) const {
  return ErrorAtOffset(at, std::string(what) + " is " + std::to_string(count) + ", more than the " +
                               std::to_string(remaining()) + " bytes left can hold");
}

Status Reader::ReadSection(SectionId& id, Bytes& data) {
  const size_t at = offset();
  uint8_t id_and_alignment = 0;
  ANVIL_RETURN_IF_ERROR(ReadByte(id_and_alignment, "a section id"));
  uint64_t length = 0;
  ANVIL_RETURN_IF_ERROR(ReadVarInt(length, "a section length"));
  const uint8_t raw_id = id_and_alignment & 0x7f;
  if (raw_id >= kNumSections) return ErrorAtOffset(at, "unknown section id " + std::to_string(raw_id));
  id = static_cast<SectionId>(raw_id);
  if (id_and_alignment & 0x80) {
    uint64_t alignment = 0;
    ANVIL_RETURN_IF_ERROR(ReadVarInt(alignment, "a section alignment"));
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) {
      return ErrorAtOffset(at, "section alignment " + std::to_string(alignment) + " is not a power of two up to 4096");
    }
    // Padding bytes (0xCB) up to the alignment, counted from the artifact's
    // start: the writer aligned relative to an aligned buffer.
    while (offset() % alignment != 0) {
      uint8_t pad = 0;
      ANVIL_RETURN_IF_ERROR(ReadByte(pad, "an alignment byte"));
      if (pad != 0xCB) return ErrorAtOffset(offset() - 1, "expected the alignment byte 0xCB");
    }
  }
  if (length > remaining()) {
    return ErrorAtOffset(at, "section of " + std::to_string(length) + " bytes runs past the end of data (" +
                                 std::to_string(remaining()) + " bytes left)");
  }
  return ReadBytes(static_cast<size_t>(length), data, "section bytes");
}

}  // namespace anvil::hlo::bytecode
