// How a reduce's dimensions are split into kept and reduced ones
// (reduced_dims.h): dimensions of size 1 dropped, neighbours of one kind
// merged, and the walk over a merged split visiting the same offsets in the
// same order as over the dimensions as written.
#include "plugins/cpu/reduced_dims.h"

#include <gtest/gtest.h>

#include <vector>

namespace anvil::cpu {
namespace {

using Dims = std::vector<int64_t>;

// The element offsets of output 0's reduced positions, in walk order.
std::vector<int64_t> Walked(const ReducedDims& r) {
  int64_t n = 1;
  for (int64_t d : r.reduced_dims) n *= d;
  std::vector<int64_t> out;
  ReducedWalk walk(r.reduced_dims, r.reduced_strides);
  for (int64_t k = 0; k < n; ++k, walk.Next()) out.push_back(walk.offset());
  return out;
}

TEST(CpuReducedDims, AWholeArrayIsOneContiguousRow) {
  const ReducedDims r = SplitReduced({64, 32}, {0, 1});
  EXPECT_EQ(r.reduced_dims, Dims({2048}));
  EXPECT_EQ(r.reduced_strides, Dims({1}));
  EXPECT_TRUE(r.kept_dims.empty());
}

TEST(CpuReducedDims, NeighboursOfOneKindMergeAndSizeOneDimensionsDrop) {
  // [2, 3, 1, 4, 5] reducing {1, 2, 3}: kept 2 (stride 60), reduced 3x1x4
  // merged into 12 with the stride of the 4 (5).
  ReducedDims r = SplitReduced({2, 3, 1, 4, 5}, {1, 2, 3});
  EXPECT_EQ(r.kept_dims, Dims({2, 5}));
  EXPECT_EQ(r.kept_strides, Dims({60, 1}));
  EXPECT_EQ(r.reduced_dims, Dims({12}));
  EXPECT_EQ(r.reduced_strides, Dims({5}));
  // A kept dimension of size 1 between reduced ones: they become neighbours.
  r = SplitReduced({6, 1, 7}, {0, 2});
  EXPECT_TRUE(r.kept_dims.empty());
  EXPECT_EQ(r.reduced_dims, Dims({42}));
  EXPECT_EQ(r.reduced_strides, Dims({1}));
  // Reducing only dimensions of size 1 leaves one reduced dimension of 1.
  r = SplitReduced({5, 1}, {1});
  EXPECT_EQ(r.kept_dims, Dims({5}));
  EXPECT_EQ(r.reduced_dims, Dims({1}));
  EXPECT_EQ(r.reduced_strides, Dims({1}));
  // Alternating kinds stay apart.
  r = SplitReduced({2, 3, 4, 5}, {0, 2});
  EXPECT_EQ(r.kept_dims, Dims({3, 5}));
  EXPECT_EQ(r.reduced_dims, Dims({2, 4}));
  EXPECT_EQ(r.reduced_strides, Dims({60, 5}));
}

TEST(CpuReducedDims, EdgesKeepTheirMeaning) {
  // Kept dimensions merge across a reduced one of size 1.
  ReducedDims r = SplitReduced({2, 1, 3}, {1});
  EXPECT_EQ(r.kept_dims, Dims({6}));
  EXPECT_EQ(r.kept_strides, Dims({1}));
  EXPECT_EQ(r.reduced_dims, Dims({1}));
  // No reduced dimension: nothing reduced, everything kept (the kernels
  // decline such a reduce).
  r = SplitReduced({4, 5}, {});
  EXPECT_EQ(r.kept_dims, Dims({20}));
  EXPECT_TRUE(r.reduced_dims.empty());
  // A rank-0 operand.
  r = SplitReduced({}, {});
  EXPECT_TRUE(r.kept_dims.empty());
  EXPECT_TRUE(r.reduced_dims.empty());
  // Zero-size dimensions stay, and so their products are 0.
  r = SplitReduced({3, 0, 4}, {1, 2});
  EXPECT_EQ(r.kept_dims, Dims({3}));
  EXPECT_EQ(r.reduced_dims, Dims({0}));
  r = SplitReduced({0, 4}, {1});
  EXPECT_EQ(r.kept_dims, Dims({0}));
  EXPECT_EQ(r.reduced_dims, Dims({4}));
}

TEST(CpuReducedDims, AMergedWalkVisitsTheOffsetsOfTheWrittenDimensionsInOrder) {
  // Row-major over the reduced dimensions as written, computed plainly.
  const Dims dims = {3, 1, 4, 2, 5};
  const Dims reduced = {0, 1, 2, 4};
  const Dims strides = RowMajorStrides(dims);
  std::vector<int64_t> expected;
  for (int64_t a = 0; a < 3; ++a) {
    for (int64_t c = 0; c < 4; ++c) {
      for (int64_t e = 0; e < 5; ++e) expected.push_back(a * strides[0] + c * strides[2] + e * strides[4]);
    }
  }
  EXPECT_EQ(Walked(SplitReduced(dims, reduced)), expected);
}

}  // namespace
}  // namespace anvil::cpu
