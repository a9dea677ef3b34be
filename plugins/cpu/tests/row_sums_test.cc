// Each instruction set's row-sum loop (row_sums.h) against a plain
// sequential sum in double, bit for bit: rows of every length around the
// vector blocks, rows that start anywhere, accumulators that start nonzero.
#include "plugins/cpu/row_sums.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace anvil::cpu {
namespace {

TEST(CpuRowSums, EveryLoopAddsEachRowInOrderFromItsAccumulator) {
  std::mt19937 random(7);
  // Magnitudes over many binades, so that any change of order changes bits.
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  const int64_t stride = 67;  // rows not aligned to any vector
  std::vector<float> x(kSumRows * stride + 40);
  for (float& v : x) v = std::ldexp(mantissa(random), exponent(random));
  for (Isa isa : IsasThisCpuRuns()) {
    for (int64_t inner : {0, 1, 3, 4, 5, 7, 8, 9, 16, 23, 64, 65}) {
      int64_t bases[kSumRows];
      double acc[kSumRows], expected[kSumRows];
      for (int64_t j = 0; j < kSumRows; ++j) {
        bases[j] = (j * 5) % kSumRows * stride + j % 3;  // rows in no particular order
        acc[j] = expected[j] = 0.25 * static_cast<double>(j);
        for (int64_t k = 0; k < inner; ++k) expected[j] += static_cast<double>(x[bases[j] + k]);
      }
      SumRowsInDoubleWith(isa, x.data(), bases, inner, acc);
      for (int64_t j = 0; j < kSumRows; ++j) {
        EXPECT_EQ(0, std::memcmp(&acc[j], &expected[j], sizeof(double)))
            << "isa " << static_cast<int>(isa) << ", rows of " << inner << ", row " << j << ": " << acc[j]
            << " against " << expected[j];
      }
    }
  }
}

}  // namespace
}  // namespace anvil::cpu
