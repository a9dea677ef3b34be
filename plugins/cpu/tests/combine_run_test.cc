// combine_run.h's CombineContiguousRows (narrow rows combined a block of
// rows at a time) against one CombineRun per row, and reducers.h's float
// maximum and minimum on the values whose order HLO fixes: NaN, signed
// zeros, infinities.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <xmmintrin.h>

#include "plugins/cpu/combine_run.h"
#include "plugins/cpu/reducers.h"

namespace anvil::cpu {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

uint32_t Bits(float v) { return std::bit_cast<uint32_t>(v); }

TEST(Reducers, FloatMaximumPropagatesNaNAndOrdersMinusZeroBelowPlusZero) {
  const reducer::Maximum<float> max;
  EXPECT_EQ(Bits(max(0.0f, -0.0f)), Bits(0.0f));
  EXPECT_EQ(Bits(max(-0.0f, 0.0f)), Bits(0.0f));
  EXPECT_EQ(Bits(max(-0.0f, -0.0f)), Bits(-0.0f));
  EXPECT_EQ(max(-1.0f, -2.0f), -1.0f);
  EXPECT_EQ(max(3.0f, 3.0f), 3.0f);
  EXPECT_EQ(max(-kInf, 5.0f), 5.0f);
  EXPECT_EQ(max(kInf, 5.0f), kInf);
  EXPECT_TRUE(std::isnan(max(kNaN, 1.0f)));
  EXPECT_TRUE(std::isnan(max(1.0f, kNaN)));
  EXPECT_TRUE(std::isnan(max(kNaN, kInf)));
  EXPECT_EQ(Bits(max(-kNaN, 1.0f)), Bits(kNaN));  // the canonical quiet NaN, whatever the operand's sign
  const reducer::Maximum<double> max64;
  EXPECT_EQ(std::bit_cast<uint64_t>(max64(-0.0, 0.0)), std::bit_cast<uint64_t>(0.0));
  EXPECT_TRUE(std::isnan(max64(2.0, std::nan(""))));
}

TEST(Reducers, FloatMinimumPropagatesNaNAndOrdersMinusZeroBelowPlusZero) {
  const reducer::Minimum<float> min;
  EXPECT_EQ(Bits(min(0.0f, -0.0f)), Bits(-0.0f));
  EXPECT_EQ(Bits(min(-0.0f, 0.0f)), Bits(-0.0f));
  EXPECT_EQ(Bits(min(0.0f, 0.0f)), Bits(0.0f));
  EXPECT_EQ(min(-1.0f, -2.0f), -2.0f);
  EXPECT_EQ(min(3.0f, 3.0f), 3.0f);
  EXPECT_EQ(min(-kInf, 5.0f), -kInf);
  EXPECT_TRUE(std::isnan(min(kNaN, -kInf)));
  EXPECT_TRUE(std::isnan(min(1.0f, kNaN)));
  const reducer::Minimum<double> min64;
  EXPECT_EQ(std::bit_cast<uint64_t>(min64(0.0, -0.0)), std::bit_cast<uint64_t>(-0.0));
}

// With subnormals treated as zero (the CPU plugin's flush_denormals, on by
// default under JAX) they compare equal to zeros and to each other: the
// result is still one of the operands, the one the elementwise maximum and
// minimum pick (a bits-and version made 0x1 of 0x3 and 0x80000001).
TEST(Reducers, FloatMaximumAndMinimumGiveAnOperandWithSubnormalsFlushed) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040);  // flush to zero, denormals are zero
  // Volatile: compared at run time, under the flags, not folded.
  volatile float p3 = std::bit_cast<float>(0x00000003u), n1 = std::bit_cast<float>(0x80000001u),
                 n2 = std::bit_cast<float>(0x80000002u), p1 = std::bit_cast<float>(0x00000001u);
  const reducer::Maximum<float> max;
  const reducer::Minimum<float> min;
  const uint32_t max_pn = Bits(max(p3, n1)), max_np = Bits(max(n1, p3)), max_pp = Bits(max(p3, p1));
  const uint32_t min_nn = Bits(min(n2, n1)), min_pn = Bits(min(p3, n1)), min_np = Bits(min(n1, p3));
  _mm_setcsr(saved);
  EXPECT_EQ(max_pn, 0x00000003u);
  EXPECT_EQ(max_np, 0x00000003u);
  EXPECT_EQ(max_pp, 0x00000003u);
  EXPECT_EQ(min_nn, 0x80000002u);
  EXPECT_EQ(min_pn, 0x80000001u);
  EXPECT_EQ(min_np, 0x80000001u);
}

// Every column's rows combined one by one, in order.
template <typename T, typename Combine>
std::vector<T> ByRows(const std::vector<T>& start, const std::vector<T>& rows, int64_t n, Combine combine) {
  std::vector<T> acc = start;
  const int64_t count = static_cast<int64_t>(start.size());
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < count; ++j) acc[j] = combine(acc[j], rows[r * count + j]);
  }
  return acc;
}

TEST(CombineContiguousRows, GivesEachColumnTheCombineOfItsRowsForEveryWidthAndTail) {
  for (Isa isa : IsasThisCpuRuns()) {
    for (int64_t count : {1, 3, 8, 50, 64, 100, 127}) {
      const int64_t block = kColumnRun / count;
      // Fewer rows than two blocks (one run per row), exactly two, and
      // ragged tails after whole blocks.
      for (int64_t n : {block, 2 * block, 2 * block + 1, 5 * block - 1, 7 * block + 3}) {
        std::vector<float> rows(static_cast<size_t>(n * count));
        for (size_t k = 0; k < rows.size(); ++k) rows[k] = std::sin(static_cast<float>(k) * 0.37f) * 100.0f;
        // A NaN in one column, signed zeros in another, the largest value last.
        rows[static_cast<size_t>((n / 2) * count)] = kNaN;
        if (count > 2) {
          for (int64_t r = 0; r < n; ++r) rows[static_cast<size_t>(r * count + 1)] = r % 2 ? 0.0f : -0.0f;
        }
        rows[rows.size() - 1] = 1e6f;
        std::vector<float> start(static_cast<size_t>(count), -kInf);
        start[static_cast<size_t>(count - 1)] = 2e6f;  // larger than every row
        const reducer::Maximum<float> max;
        std::vector<float> acc = start;
        CombineContiguousRows(isa, acc.data(), rows.data(), n, count, max);
        const std::vector<float> expected = ByRows(start, rows, n, max);
        for (int64_t j = 0; j < count; ++j) {
          EXPECT_EQ(Bits(acc[j]), Bits(expected[j])) << "isa " << static_cast<int>(isa) << " columns " << count
                                                     << " rows " << n << " column " << j;
        }
        // An integer sum, which wraps.
        std::vector<int32_t> ints(rows.size());
        for (size_t k = 0; k < ints.size(); ++k) ints[k] = static_cast<int32_t>(k * 2654435761u);
        std::vector<int32_t> int_acc(static_cast<size_t>(count), 5);
        const reducer::Add<int32_t> add;
        CombineContiguousRows(isa, int_acc.data(), ints.data(), n, count, add);
        EXPECT_EQ(int_acc, ByRows(std::vector<int32_t>(static_cast<size_t>(count), 5), ints, n, add))
            << "columns " << count << " rows " << n;
      }
    }
  }
}

}  // namespace
}  // namespace anvil::cpu
