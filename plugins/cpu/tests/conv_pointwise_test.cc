// Pointwise convolutions as per-image products streamed out
// (kernels_conv_pointwise.cc), against a plain sum in double: both weight
// orders, result rows that end mid-vector and blocks of columns that end
// mid-image (the last block of each image short), one image or several,
// and every element written (the result starts as NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "plugins/cpu/conv_pointwise.h"

namespace anvil::cpu {
namespace {

void ExpectProduct(const PointwiseProblem& p) {
  std::vector<float> x(static_cast<size_t>(p.batch * p.cin * p.positions)), w(static_cast<size_t>(p.cin * p.cout));
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(static_cast<int64_t>(k * 7919 % 2001) - 1000) / 613.0f;
  for (size_t k = 0; k < w.size(); ++k) w[k] = static_cast<float>(static_cast<int64_t>(k * 104729 % 1999) - 999) / 877.0f;
  std::vector<float> y(static_cast<size_t>(p.batch * p.cout * p.positions), std::numeric_limits<float>::quiet_NaN());
  const Parallel serial(nullptr);
  RunPointwiseConvolution(p, x.data(), w.data(), y.data(), serial);
  int wrong = 0;
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t o = 0; o < p.cout; ++o) {
      for (int64_t q = 0; q < p.positions; ++q) {
        double sum = 0, magnitude = 0;
        for (int64_t i = 0; i < p.cin; ++i) {
          const double weight = p.weights_out_first ? w[o * p.cin + i] : w[i * p.cout + o];
          const double term = weight * x[(n * p.cin + i) * p.positions + q];
          sum += term;
          magnitude += std::fabs(term);
        }
        const float got = y[(n * p.cout + o) * p.positions + q];
        if (!(std::fabs(got - sum) <= 1e-5 * magnitude + 1e-30) && wrong++ < 5) {
          ADD_FAILURE() << "image " << n << ", feature " << o << ", position " << q << ": " << got << ", expected " << sum;
        }
      }
    }
  }
  EXPECT_EQ(wrong, 0);
}

TEST(PointwiseConvolution, ProductsOfEitherWeightOrder) {
  for (const bool out_first : {true, false}) {
    ExpectProduct({.batch = 3, .cin = 5, .cout = 37, .positions = 1500, .weights_out_first = out_first});
  }
}

TEST(PointwiseConvolution, BlocksOfColumnsAcrossManyOutputFeatures) {
  // 64K / 1040 rounds to 48 columns a block: 1001 positions are 20 whole
  // blocks and one of 41.
  ExpectProduct({.batch = 2, .cin = 16, .cout = 1040, .positions = 1001, .weights_out_first = true});
}

TEST(PointwiseConvolution, OneInputFeatureAndOnePosition) {
  ExpectProduct({.batch = 4, .cin = 1, .cout = 19, .positions = 1, .weights_out_first = false});
}

}  // namespace
}  // namespace anvil::cpu
