// Division of s32 and u32 by a constant divisor through a magic multiplier
// (int_functions.h, ConstantDivisor) against the division operators, on
// every divisor class the method distinguishes (1, powers of two, the
// largest magnitudes, the most negative s32) and sampled others, each on
// the edges of the range and on values spread over it. (Every 32-bit
// value was checked for 35 divisors when it was written.)
#include "plugins/cpu/int_functions.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace anvil::cpu::int_fn {
namespace {

std::vector<uint32_t> Values(std::mt19937& rng) {
  std::vector<uint32_t> out = {0, 1, 2, 3, 0x7FFFFFFE, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF};
  for (int k = 0; k < 20000; ++k) out.push_back(static_cast<uint32_t>(rng()));
  return out;
}

std::vector<int64_t> Divisors(std::mt19937& rng, bool is_signed) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= 70; ++d) out.push_back(d);
  for (int b = 7; b < 32; ++b) {
    for (int64_t near : {-1, 0, 1}) out.push_back((int64_t{1} << b) + near);
  }
  for (int k = 0; k < 200; ++k) out.push_back(rng() >> (rng() % 32));
  if (is_signed) {
    const size_t n = out.size();
    for (size_t k = 0; k < n; ++k) {
      out[k] = static_cast<int32_t>(static_cast<uint32_t>(out[k]));  // as s32 bits
      out.push_back(-out[k]);
    }
    out.push_back(std::numeric_limits<int32_t>::min());
    out.push_back(std::numeric_limits<int32_t>::max());
  } else {
    for (int64_t d : {0xFFFFFFFFll, 0xFFFFFFFEll, 0xC0000000ll, 0xB2D05E00ll}) out.push_back(d);
  }
  return out;
}

TEST(ConstantDivisor, DividesU32AsTheDivisionOperator) {
  std::mt19937 rng(7);
  const std::vector<uint32_t> values = Values(rng);
  for (int64_t d : Divisors(rng, false)) {
    if (static_cast<uint32_t>(d) == 0) continue;
    const ConstantDivisor c = ConstantDivisor::Of(static_cast<uint32_t>(d), false);
    for (uint32_t x : values) {
      ASSERT_EQ(c.Quotient(x), Divide{}(x, static_cast<uint32_t>(d))) << x << " / " << d;
      ASSERT_EQ(c.Remainder(x), Remainder{}(x, static_cast<uint32_t>(d))) << x << " % " << d;
    }
  }
}

TEST(ConstantDivisor, DividesS32AsHloDoesWithTheMostNegativeByMinusOneWrapping) {
  std::mt19937 rng(11);
  const std::vector<uint32_t> values = Values(rng);
  for (int64_t d : Divisors(rng, true)) {
    const int32_t divisor = static_cast<int32_t>(d);
    if (divisor == 0) continue;
    const ConstantDivisor c = ConstantDivisor::Of(divisor, true);
    for (uint32_t bits : values) {
      const int32_t x = static_cast<int32_t>(bits);
      ASSERT_EQ(c.Quotient(x), Divide{}(x, divisor)) << x << " / " << divisor;
      ASSERT_EQ(c.Remainder(x), Remainder{}(x, divisor)) << x << " % " << divisor;
    }
  }
  const ConstantDivisor minus_one = ConstantDivisor::Of(-1, true);
  EXPECT_EQ(minus_one.Quotient(std::numeric_limits<int32_t>::min()), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(minus_one.Remainder(std::numeric_limits<int32_t>::min()), 0);
}

}  // namespace
}  // namespace anvil::cpu::int_fn
