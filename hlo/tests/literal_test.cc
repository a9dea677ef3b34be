#include "hlo/literal.h"

#include <gtest/gtest.h>

#include <cmath>

#include "hlo/hlo_parser.h"

namespace anvil::hlo {
namespace {

const Literal& ConstantOf(const Module& m) { return *m.entry->root->literal; }

std::unique_ptr<Module> Parse(const std::string& shape, const std::string& value) {
  auto m = ParseHloModule("HloModule m\nENTRY e {\n  ROOT c = " + shape + " constant(" + value + ")\n}\n");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

TEST(Literal, NestedListsAndPrinting) {
  auto m = Parse("s32[2,3]", "{{1, 2, 3}, {4, 5, -6}}");
  const Literal& l = ConstantOf(*m);
  EXPECT_EQ(l.GetInt(5), -6);
  EXPECT_EQ(l.ToString(), "{{1, 2, 3}, {4, 5, -6}}");
}

TEST(Literal, SpecialFloats) {
  auto m = Parse("f32[5]", "{inf, -inf, nan, -0, 1.5}");
  const Literal& l = ConstantOf(*m);
  EXPECT_TRUE(std::isinf(l.GetDouble(0)));
  EXPECT_TRUE(std::isnan(l.GetDouble(2)));
  EXPECT_TRUE(std::signbit(l.GetDouble(3)));
  EXPECT_EQ(l.ToString(), "{inf, -inf, nan, -0, 1.5}");
}

TEST(Literal, NanPayloadsSurvive) {
  auto m = Parse("f32[2]", "{nan(0x1), -nan}");
  const Literal& l = ConstantOf(*m);
  EXPECT_EQ(l.GetBits(0), 0x7F800001u);
  EXPECT_EQ(l.GetBits(1), 0xFFC00000u);
  EXPECT_EQ(l.ToString(), "{nan(0x1), -nan}");
}

TEST(Literal, NarrowFloatsRoundToNearestEven) {
  auto m = Parse("bf16[2]", "{1.00390625, 3.14159}");
  const Literal& l = ConstantOf(*m);
  EXPECT_EQ(l.GetBits(0), 0x3F80u);  // a tie: goes to even
  EXPECT_EQ(l.GetBits(1), 0x4049u);
  EXPECT_EQ(l.ToString(), "{1, 3.140625}");
}

TEST(Literal, ComplexPredAndUnsigned) {
  EXPECT_EQ(ConstantOf(*Parse("c64[2]", "{(1, 2), (-3.5, 0)}")).ToString(), "{(1, 2), (-3.5, 0)}");
  EXPECT_EQ(ConstantOf(*Parse("pred[3]", "{true, false, true}")).ToString(), "{true, false, true}");
  EXPECT_EQ(ConstantOf(*Parse("u64[]", "18446744073709551615")).GetUint(0), 18446744073709551615ull);
  EXPECT_EQ(ConstantOf(*Parse("s4[2]", "{-8, 7}")).ToString(), "{-8, 7}");
  EXPECT_EQ(ConstantOf(*Parse("s64[2]", "{-9223372036854775808, 9223372036854775807}")).ToString(),
            "{-9223372036854775808, 9223372036854775807}");
}

TEST(Literal, ElidedAndSplat) {
  auto elided = Parse("f32[1000]", "{...}");
  EXPECT_TRUE(ConstantOf(*elided).elided());
  EXPECT_EQ(ConstantOf(*elided).ToString(), "{...}");
  auto splat = Parse("f32[2,2]", "7");
  EXPECT_EQ(ConstantOf(*splat).ToString(), "{{7, 7}, {7, 7}}");
  auto empty = Parse("f32[2,0]", "{{}, {}}");
  EXPECT_EQ(ConstantOf(*empty).ToString(), "{{}, {}}");
}

}  // namespace
}  // namespace anvil::hlo
