// Each instruction set's row-sum loop (row_sums.h) against the order it
// promises, bit for bit: rows shorter than kLaneSumMinRow summed in order,
// longer ones in kRowSumLanes lanes folded in halves; rows of every length
// around the vector blocks and the lane groups, rows that start anywhere,
// accumulators that start nonzero, and a row alone summed as in a group;
// rows longer than kRowSumChunk summed chunk by chunk, each chunk from -0.
#include "plugins/cpu/row_sums.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace anvil::cpu {
namespace {

// What row_sums.h says a row's sum is, written out plainly.
double ExpectedSum(const float* row, int64_t inner, double acc) {
  if (inner > kRowSumChunk) {
    for (int64_t k = 0; k < inner; k += kRowSumChunk) acc += ExpectedSum(row + k, std::min(kRowSumChunk, inner - k), -0.0);
    return acc;
  }
  if (inner < kLaneSumMinRow) {
    for (int64_t k = 0; k < inner; ++k) acc += static_cast<double>(row[k]);
    return acc;
  }
  std::vector<double> lanes(kRowSumLanes, -0.0);
  for (int64_t k = 0; k < inner; ++k) lanes[static_cast<size_t>(k % kRowSumLanes)] += static_cast<double>(row[k]);
  for (int64_t w = kRowSumLanes / 2; w >= 1; w /= 2) {
    for (int64_t l = 0; l < w; ++l) lanes[static_cast<size_t>(l)] += lanes[static_cast<size_t>(l + w)];
  }
  return acc + lanes[0];
}

TEST(CpuRowSums, EveryLoopSumsEachRowInTheOrderItPromises) {
  std::mt19937 random(7);
  // Magnitudes over many binades, so that any change of order changes bits.
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  const int64_t stride = 301;  // rows not aligned to any vector
  std::vector<float> x(kSumRows * stride + 40);
  for (float& v : x) v = std::ldexp(mantissa(random), exponent(random));
  for (Isa isa : IsasThisCpuRuns()) {
    for (int64_t inner : {0, 1, 3, 4, 5, 7, 8, 9, 16, 23, 63, 64, 65, 95, 96, 97, 127, 128, 129, 300}) {
      int64_t bases[kSumRows];
      double acc[kSumRows], expected[kSumRows];
      for (int64_t j = 0; j < kSumRows; ++j) {
        bases[j] = (j * 5) % kSumRows * stride + j % 3;  // rows in no particular order
        acc[j] = 0.25 * static_cast<double>(j);
        expected[j] = ExpectedSum(x.data() + bases[j], inner, acc[j]);
      }
      SumRowsInDoubleWith(isa, x.data(), bases, inner, acc);
      for (int64_t j = 0; j < kSumRows; ++j) {
        EXPECT_EQ(0, std::memcmp(&acc[j], &expected[j], sizeof(double)))
            << "isa " << static_cast<int>(isa) << ", rows of " << inner << ", row " << j << ": " << acc[j]
            << " against " << expected[j];
        double alone = 0.25 * static_cast<double>(j);
        SumRowInDoubleWith(isa, x.data() + bases[j], inner, &alone);
        EXPECT_EQ(0, std::memcmp(&alone, &expected[j], sizeof(double)))
            << "isa " << static_cast<int>(isa) << ", a row of " << inner << " alone, row " << j;
      }
    }
  }
}

// Rows of more than kRowSumChunk: whole chunks, a last chunk in lanes, one
// too short for lanes (summed in order from -0), and one of a single
// element; each row's chunks summed alone (RowChunkSum) and added in order
// give the row's bits, which is how a reduce shares a row between threads.
TEST(CpuRowSums, LongRowsAreSummedChunkByChunk) {
  std::mt19937 random(11);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  const std::vector<int64_t> lengths = {kRowSumChunk + 1, kRowSumChunk + 63, kRowSumChunk + 64, 2 * kRowSumChunk,
                                        3 * kRowSumChunk + 1000};
  const int64_t stride = 3 * kRowSumChunk + 1003;
  std::vector<float> x(kSumRows * stride + 8);  // a row starts up to 4 in
  for (float& v : x) v = std::ldexp(mantissa(random), exponent(random));
  for (Isa isa : IsasThisCpuRuns()) {
    for (int64_t inner : lengths) {
      int64_t bases[kSumRows];
      double acc[kSumRows], expected[kSumRows];
      for (int64_t j = 0; j < kSumRows; ++j) {
        bases[j] = (j * 7) % kSumRows * stride + j % 5;
        acc[j] = 0.5 * static_cast<double>(j);
        expected[j] = ExpectedSum(x.data() + bases[j], inner, acc[j]);
      }
      SumRowsInDoubleWith(isa, x.data(), bases, inner, acc);
      for (int64_t j = 0; j < kSumRows; ++j) {
        EXPECT_EQ(0, std::memcmp(&acc[j], &expected[j], sizeof(double)))
            << "isa " << static_cast<int>(isa) << ", rows of " << inner << ", row " << j;
        double alone = 0.5 * static_cast<double>(j);
        SumRowInDoubleWith(isa, x.data() + bases[j], inner, &alone);
        EXPECT_EQ(0, std::memcmp(&alone, &expected[j], sizeof(double))) << "a row of " << inner << " alone";
      }
    }
  }
  // Chunk by chunk, as a thread of a shared row computes them (the host's
  // loop, as RowChunkSum uses).
  for (int64_t inner : lengths) {
    const float* row = x.data() + 3;
    double by_chunks = 1.5;
    ASSERT_EQ(RowChunks(inner), (inner + kRowSumChunk - 1) / kRowSumChunk);
    for (int64_t c = 0; c < RowChunks(inner); ++c) {
      by_chunks += RowChunkSum(row + c * kRowSumChunk, std::min(kRowSumChunk, inner - c * kRowSumChunk));
    }
    double whole = 1.5;
    SumRowInDouble(row, inner, &whole);
    const double expected = ExpectedSum(row, inner, 1.5);
    EXPECT_EQ(0, std::memcmp(&by_chunks, &expected, sizeof(double))) << "chunks of a row of " << inner;
    EXPECT_EQ(0, std::memcmp(&whole, &expected, sizeof(double))) << "a row of " << inner;
  }
}

}  // namespace
}  // namespace anvil::cpu
