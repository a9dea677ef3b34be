// The array conversions between f32 and f16 (f16_conversions.h) of each
// instruction set this CPU runs against ToFloat and ToF16, bit for bit,
// in IEEE's mode and in the flush mode, at lengths that leave a partial
// vector; and f16 subnormals widened exactly in the flush mode.
#include "plugins/cpu/f16_conversions.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "plugins/cpu/float_mode.h"

namespace anvil::cpu {
namespace {

uint32_t BitsOf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

// Every f16, then a few short arrays (tails alone).
void CheckWidening(Isa isa) {
  std::vector<F16> halves(65536 + 7);
  for (size_t k = 0; k < halves.size(); ++k) halves[k] = F16{static_cast<uint16_t>(k * 40503u)};
  for (int64_t n : {int64_t{65536 + 7}, int64_t{13}, int64_t{1}, int64_t{0}}) {
    std::vector<float> out(static_cast<size_t>(n) + 1, -1.0f);
    WidenF16With(isa, halves.data(), out.data(), n);
    for (int64_t k = 0; k < n; ++k) {
      ASSERT_EQ(BitsOf(out[k]), BitsOf(ToFloat(halves[k]))) << "isa " << static_cast<int>(isa) << " f16 " << std::hex
                                                           << halves[k].bits;
    }
    EXPECT_EQ(out[static_cast<size_t>(n)], -1.0f) << "wrote past the end";
  }
}

void CheckNarrowing(Isa isa) {
  std::vector<float> values;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 65521) {
    float f;
    const uint32_t bits = static_cast<uint32_t>(b);
    std::memcpy(&f, &bits, 4);
    values.push_back(f);
  }
  // Ties to even at a normal and at a subnormal f16, and the overflow edge.
  for (float f : {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 0x1p-25f, 3 * 0x1p-25f, 65519.0f, 65520.0f, -0.0f}) {
    values.push_back(f);
  }
  for (size_t n : {values.size(), size_t{5}}) {
    std::vector<F16> out(n + 1, F16{0xabcd});
    NarrowToF16With(isa, values.data(), out.data(), static_cast<int64_t>(n));
    for (size_t k = 0; k < n; ++k) {
      ASSERT_EQ(out[k].bits, ToF16(values[k]).bits) << "isa " << static_cast<int>(isa) << " f32 " << std::hex
                                                    << BitsOf(values[k]);
    }
    EXPECT_EQ(out[n].bits, 0xabcd) << "wrote past the end";
  }
}

TEST(F16Conversions, EachInstructionSetMatchesTheBitsInIeeeMode) {
  for (Isa isa : IsasThisCpuRuns()) {
    CheckWidening(isa);
    CheckNarrowing(isa);
  }
}

TEST(F16Conversions, EachInstructionSetMatchesTheBitsInTheFlushMode) {
  ScopedFloatMode flush(kFlushDenormals);
  for (Isa isa : IsasThisCpuRuns()) {
    CheckWidening(isa);
    CheckNarrowing(isa);
  }
}

TEST(F16Conversions, F16SubnormalsWidenExactlyInTheFlushMode) {
  ScopedFloatMode flush(kFlushDenormals);
  // Read through volatile, so that the compiler cannot fold the
  // conversions outside the mode.
  volatile uint16_t smallest = 0x0001, largest = 0x03ff, negative = 0x8200;
  EXPECT_EQ(ToFloat(F16{smallest}), 0x1p-24f);
  EXPECT_EQ(ToFloat(F16{largest}), 1023 * 0x1p-24f);
  EXPECT_EQ(ToFloat(F16{negative}), -512 * 0x1p-24f);
}

}  // namespace
}  // namespace anvil::cpu
