#include "hlo/element_type.h"

#include <gtest/gtest.h>

#include <cmath>

namespace anvil::hlo {
namespace {

TEST(ElementType, NamesRoundTrip) {
  for (int t = 1; t <= static_cast<int>(ElementType::kOpaque); ++t) {
    auto type = static_cast<ElementType>(t);
    EXPECT_EQ(ElementTypeFromHloName(HloName(type)), type) << HloName(type);
  }
  EXPECT_EQ(ElementTypeFromMlirName("i1"), ElementType::kPred);
  EXPECT_EQ(ElementTypeFromMlirName("ui16"), ElementType::kU16);
  EXPECT_EQ(ElementTypeFromMlirName("f8E4M3FN"), ElementType::kF8E4M3FN);
  EXPECT_EQ(ElementTypeFromHloName("f8e5m2"), ElementType::kF8E5M2);
  EXPECT_FALSE(ElementTypeFromHloName("f33").has_value());
}

TEST(ElementType, Classes) {
  EXPECT_TRUE(IsFloat(ElementType::kBF16));
  EXPECT_TRUE(IsComplex(ElementType::kC64));
  EXPECT_EQ(ComponentType(ElementType::kC128), ElementType::kF64);
  EXPECT_EQ(ComplexOf(ElementType::kF32), ElementType::kC64);
  EXPECT_EQ(ComplexOf(ElementType::kF16), ElementType::kInvalid);
  EXPECT_TRUE(IsSignedInt(ElementType::kS4));
  EXPECT_EQ(Info(ElementType::kS4).byte_size, 1);
  EXPECT_EQ(Info(ElementType::kC128).byte_size, 16);
}

TEST(FloatFormat, HalfAndBfloat) {
  const FloatFormat& f16 = *Info(ElementType::kF16).float_format;
  EXPECT_EQ(EncodeFloat(f16, 1.0), 0x3C00u);
  EXPECT_EQ(EncodeFloat(f16, -2.0), 0xC000u);
  EXPECT_EQ(EncodeFloat(f16, 65504.0), 0x7BFFu);
  EXPECT_EQ(EncodeFloat(f16, 1e6), 0x7C00u);              // overflow to inf
  EXPECT_EQ(EncodeFloat(f16, std::ldexp(1.0, -24)), 1u);  // smallest subnormal
  EXPECT_EQ(EncodeFloat(f16, -0.0), 0x8000u);
  EXPECT_EQ(DecodeFloat(f16, 0x3555), 0.333251953125);
  const FloatFormat& bf16 = *Info(ElementType::kBF16).float_format;
  EXPECT_EQ(EncodeFloat(bf16, 1.0), 0x3F80u);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to even (1.0).
  EXPECT_EQ(EncodeFloat(bf16, 1.0 + std::ldexp(1.0, -8)), 0x3F80u);
  EXPECT_EQ(EncodeFloat(bf16, 1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82u);
  EXPECT_TRUE(std::isnan(DecodeFloat(bf16, 0x7FC0)));
}

TEST(FloatFormat, Float8Variants) {
  const FloatFormat& e4m3fn = *Info(ElementType::kF8E4M3FN).float_format;
  EXPECT_EQ(EncodeFloat(e4m3fn, 448.0), 0x7Eu);  // largest finite
  EXPECT_EQ(EncodeFloat(e4m3fn, 1e4), 0x7Fu);    // no inf: NaN
  EXPECT_TRUE(std::isnan(DecodeFloat(e4m3fn, 0x7F)));
  const FloatFormat& e5m2 = *Info(ElementType::kF8E5M2).float_format;
  EXPECT_EQ(EncodeFloat(e5m2, 1e6), 0x7Cu);  // inf
  EXPECT_EQ(DecodeFloat(e5m2, 0x3C), 1.0);
  const FloatFormat& fnuz = *Info(ElementType::kF8E4M3FNUZ).float_format;
  EXPECT_EQ(EncodeFloat(fnuz, -0.0), 0x00u);  // no negative zero
  EXPECT_TRUE(std::isnan(DecodeFloat(fnuz, 0x80)));
  const FloatFormat& e2m1 = *Info(ElementType::kF4E2M1FN).float_format;
  EXPECT_EQ(DecodeFloat(e2m1, 0x7), 6.0);
  EXPECT_EQ(EncodeFloat(e2m1, 100.0), 0x7u);  // saturates
  // Every finite code decodes and encodes back to itself.
  for (ElementType t : {ElementType::kF8E4M3FN, ElementType::kF8E5M2, ElementType::kF8E4M3, ElementType::kF8E3M4,
                        ElementType::kF8E4M3B11FNUZ, ElementType::kF8E5M2FNUZ, ElementType::kF6E2M3FN}) {
    const FloatFormat& f = *Info(t).float_format;
    int bits = 1 + f.exponent_bits + f.mantissa_bits;
    for (uint32_t code = 0; code < (1u << bits); ++code) {
      double v = DecodeFloat(f, code);
      if (std::isnan(v) || std::isinf(v)) continue;
      if (v == 0 && code != 0) continue;  // -0
      EXPECT_EQ(EncodeFloat(f, v), code) << HloName(t) << " code " << code;
    }
  }
}

}  // namespace
}  // namespace anvil::hlo
