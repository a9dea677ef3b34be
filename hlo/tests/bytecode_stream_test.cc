#include "hlo/bytecode_stream.h"

#include <gtest/gtest.h>

#include <vector>

namespace anvil::hlo::bytecode {
namespace {

const std::string kFile = "t.mlir.bc";

Reader Over(const std::vector<uint8_t>& bytes, size_t offset = 0) {
  return Reader(Bytes{bytes.data(), bytes.size(), offset}, &kFile);
}

TEST(BytecodeStream, VarIntsOfEachLength) {
  // One byte: value << 1 | 1. Two: value << 2 | 0b10, little-endian. Nine:
  // a zero byte, then the value's eight bytes.
  std::vector<uint8_t> bytes = {0x0d, 0xb2, 0x04, 0x00, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
  Reader r = Over(bytes);
  uint64_t v = 0;
  ASSERT_TRUE(r.ReadVarInt(v).ok());
  EXPECT_EQ(v, 6u);
  ASSERT_TRUE(r.ReadVarInt(v).ok());
  EXPECT_EQ(v, 300u);
  ASSERT_TRUE(r.ReadVarInt(v).ok());
  EXPECT_EQ(v, 0x0102030405060708u);
  EXPECT_TRUE(r.AtEnd());
}

TEST(BytecodeStream, SignedVarIntsAreZigzag) {
  std::vector<uint8_t> bytes = {0x01, 0x03, 0x05, 0x07};
  Reader r = Over(bytes);
  for (int64_t expected : {0, -1, 1, -2}) {
    int64_t v = 7;
    ASSERT_TRUE(r.ReadSignedVarInt(v).ok());
    EXPECT_EQ(v, expected);
  }
}

TEST(BytecodeStream, ShortDataNamesTheOffsetAndWhatWasExpected) {
  std::vector<uint8_t> bytes = {0x01, 0x02};
  Reader r = Over(bytes, 1230);
  uint64_t v = 0;
  ASSERT_TRUE(r.ReadVarInt(v).ok());
  Status s = r.ReadVarInt(v);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "t.mlir.bc: byte 1231: error: expected a varint of 2 bytes, found end of data");
  s = r.ReadVarInt(v);
  EXPECT_EQ(s.message(), "t.mlir.bc: byte 1232: error: expected a varint, found end of data");
  std::string_view text;
  EXPECT_EQ(r.ReadNullTerminated(text).message(),
            "t.mlir.bc: byte 1232: error: expected a NUL-terminated string, found end of data");
}

TEST(BytecodeStream, CountsAreBoundedByTheBytesLeft) {
  std::vector<uint8_t> bytes = {0x09, 0xaa, 0xbb};  // 4 items, 2 bytes left
  Reader r = Over(bytes);
  uint64_t n = 0;
  Status s = r.ReadCount(n, "the item count");
  EXPECT_EQ(s.message(), "t.mlir.bc: byte 0: error: the item count is 4, more than the 2 bytes left can hold");
  Reader again = Over(bytes);
  EXPECT_EQ(again.ReadCount(n, "the item count", 1).code(), StatusCode::kInvalidArgument);
  std::vector<uint8_t> fits = {0x05, 0xaa, 0xbb};
  Reader ok = Over(fits);
  ASSERT_TRUE(ok.ReadCount(n, "the item count").ok());
  EXPECT_EQ(n, 2u);
}

TEST(BytecodeStream, SectionsWithAlignmentPadding) {
  // Section 2 (aligned to 4) of 2 bytes: id|0x80, length, alignment, padding
  // 0xCB up to offset 4, then the data.
  std::vector<uint8_t> bytes = {0x82, 0x05, 0x09, 0xcb, 0x11, 0x22};
  Reader r = Over(bytes);
  SectionId id;
  Bytes data;
  ASSERT_TRUE(r.ReadSection(id, data).ok());
  EXPECT_EQ(id, SectionId::kAttrType);
  EXPECT_EQ(data.size, 2u);
  EXPECT_EQ(data.offset, 4u);
  EXPECT_EQ(data.data[0], 0x11);
  std::vector<uint8_t> bad_pad = {0x82, 0x05, 0x09, 0x00, 0x11, 0x22};
  Reader bad = Over(bad_pad);
  EXPECT_EQ(bad.ReadSection(id, data).message(), "t.mlir.bc: byte 3: error: expected the alignment byte 0xCB");
  std::vector<uint8_t> too_long = {0x04, 0x09, 0x00};
  Reader long_section = Over(too_long);
  EXPECT_EQ(long_section.ReadSection(id, data).message(),
            "t.mlir.bc: byte 0: error: section of 4 bytes runs past the end of data (1 bytes left)");
  std::vector<uint8_t> unknown = {0x0f, 0x01};
  Reader unknown_section = Over(unknown);
  EXPECT_EQ(unknown_section.ReadSection(id, data).message(), "t.mlir.bc: byte 0: error: unknown section id 15");
}

}  // namespace
}  // namespace anvil::hlo::bytecode
