// Each instruction set's column-sum loop (column_sums.h) against a plain
// element-by-element sum in double, bit for bit: runs of every length
// around the vector blocks, runs that start anywhere, accumulators that
// start nonzero, several rows added one after another, by one call a row
// or by one call for all of them (AddRowsToColumnSums).
#include "plugins/cpu/column_sums.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace anvil::cpu {
namespace {

TEST(CpuColumnSums, EveryLoopAddsEachRowToItsColumnsInOrder) {
  std::mt19937 random(11);
  // Magnitudes over many binades, so that any change of order changes bits.
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  const int64_t stride = 83, rows = 9;  // rows not aligned to any vector
  std::vector<float> x(rows * stride + 8);
  for (float& v : x) v = std::ldexp(mantissa(random), exponent(random));
  for (Isa isa : IsasThisCpuRuns()) {
    for (int64_t count : {0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 71}) {
      for (int64_t start : {0, 1, 5}) {
        std::vector<double> acc(static_cast<size_t>(count)), expected(static_cast<size_t>(count));
        for (int64_t j = 0; j < count; ++j) acc[j] = expected[j] = 0.125 * static_cast<double>(j);
        for (int64_t r = 0; r < rows; ++r) {
          const float* row = x.data() + r * stride + start;
          for (int64_t j = 0; j < count; ++j) expected[j] += static_cast<double>(row[j]);
          AddRowToColumnSumsWith(isa, row, count, acc.data());
        }
        for (int64_t j = 0; j < count; ++j) {
          EXPECT_EQ(0, std::memcmp(&acc[j], &expected[j], sizeof(double)))
              << "isa " << static_cast<int>(isa) << ", runs of " << count << " from " << start << ", column " << j
              << ": " << acc[j] << " against " << expected[j];
        }
      }
    }
  }
}

TEST(CpuColumnSums, EveryLoopAddsManyRowsToTheirColumnsInOrder) {
  std::mt19937 random(13);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  const int64_t rows = 37;
  for (Isa isa : IsasThisCpuRuns()) {
    // Every width a register block takes (up to 64 columns), a partial
    // last vector, and wider runs; rows packed (stride == count) or apart.
    for (int64_t count : {0, 1, 5, 8, 9, 16, 23, 32, 40, 57, 63, 64, 65, 100}) {
      for (int64_t stride : {count, count + 3}) {
        std::vector<float> x(static_cast<size_t>(rows * stride + count + 1));
        for (float& v : x) v = std::ldexp(mantissa(random), exponent(random));
        std::vector<double> acc(static_cast<size_t>(count) + 1), expected(acc.size());
        for (size_t j = 0; j < acc.size(); ++j) acc[j] = expected[j] = 0.25 * static_cast<double>(j);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t j = 0; j < count; ++j) expected[j] += static_cast<double>(x[r * stride + 1 + j]);
        }
        AddRowsToColumnSumsWith(isa, x.data() + 1, rows, stride, count, acc.data());
        for (size_t j = 0; j < acc.size(); ++j) {  // the entry past the columns is untouched
          EXPECT_EQ(0, std::memcmp(&acc[j], &expected[j], sizeof(double)))
              << "isa " << static_cast<int>(isa) << ", " << count << " columns " << stride << " apart, column " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace anvil::cpu
