// The Vulkan plugin's serialised executables (vulkan_serialized.h): what is
// written reads back the same, and bytes cut anywhere or with another head
// are refused with the offset, never read past their end.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "plugins/vulkan/vulkan_serialized.h"

namespace {

using anvil::vulkan::GlslKey;
using anvil::vulkan::ReadSerialized;
using anvil::vulkan::WriteSerialized;

std::string Sample() {
  return WriteSerialized("HloModule m\nENTRY e { ROOT p = f32[] parameter(0) }\n",
                         {{GlslKey("void main() {}"), {0x07230203u, 1u, 2u}}, {GlslKey("other"), {}}});
}

TEST(VulkanSerialized, WhatIsWrittenReadsBack) {
  auto read = ReadSerialized(Sample());
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->canonical_text, "HloModule m\nENTRY e { ROOT p = f32[] parameter(0) }\n");
  ASSERT_EQ(read->spirv.size(), 2u);
  EXPECT_EQ(read->spirv.at(GlslKey("void main() {}")), (std::vector<uint32_t>{0x07230203u, 1u, 2u}));
  EXPECT_TRUE(read->spirv.at(GlslKey("other")).empty());
  EXPECT_EQ(GlslKey("a").size(), 32u);
  EXPECT_NE(GlslKey("a"), GlslKey("b"));
}

TEST(VulkanSerialized, CutOrForeignBytesAreRefusedWithTheirOffset) {
  const std::string bytes = Sample();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    auto read = ReadSerialized(std::string_view(bytes.data(), cut));
    ASSERT_FALSE(read.ok()) << "cut at " << cut;
    EXPECT_EQ(read.status().code(), anvil::hlo::StatusCode::kInvalidArgument);
    EXPECT_NE(read.status().message().find("byte "), std::string::npos) << read.status().message();
  }
  std::string foreign = bytes;
  foreign[0] = 'X';
  EXPECT_FALSE(ReadSerialized(foreign).ok());
  EXPECT_FALSE(ReadSerialized(bytes + "extra").ok());
}

}  // namespace
