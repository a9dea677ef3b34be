// The CPU plugin's bit-level f16 conversions (float_formats.h) against the
// compiler's _Float16 conversions, which they replace in the kernels'
// loops: every f16 widened, and a sample of every binade of f32 (with the
// rounding edges) narrowed, bit for bit, NaN payloads included.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "plugins/cpu/float_formats.h"

namespace anvil::cpu {
namespace {

uint32_t BitsOf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

float FloatOf(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

TEST(FloatFormats, EveryF16WidensAsTheCompilerWidensIt) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    _Float16 x;
    std::memcpy(&x, &bits, 2);
    ASSERT_EQ(BitsOf(ToFloat(F16{bits})), BitsOf(static_cast<float>(x))) << std::hex << h;
  }
}

TEST(FloatFormats, F32NarrowsToF16AsTheCompilerNarrowsIt) {
  std::vector<uint32_t> samples;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 65521) samples.push_back(static_cast<uint32_t>(b));
  // Around each f16 rounding edge of interest: ties to even at the normal
  // and subnormal steps, the overflow threshold 65520, the smallest normal
  // 2^-14 and subnormal 2^-24, infinities and NaN payloads.
  for (uint32_t edge : {0x477fefffu, 0x477ff000u, 0x477ff001u, 0x38800000u, 0x387fffffu, 0x33800000u, 0x337fffffu,
                        0x33000000u, 0x33000001u, 0x3f801000u, 0x3f803000u, 0x3f801001u, 0x7f800000u, 0x7f800001u,
                        0x7fc00000u, 0x7f802000u, 0x7fbfffffu, 0x00000001u, 0x00000000u}) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      for (int d = -2; d <= 2; ++d) samples.push_back((edge + static_cast<uint32_t>(d)) ^ sign);
    }
  }
  for (uint32_t bits : samples) {
    const float f = FloatOf(bits);
    const _Float16 x = static_cast<_Float16>(f);
    uint16_t expected;
    std::memcpy(&expected, &x, 2);
    ASSERT_EQ(ToF16(f).bits, expected) << std::hex << bits;
  }
}

}  // namespace
}  // namespace anvil::cpu
