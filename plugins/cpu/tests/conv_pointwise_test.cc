// Pointwise convolutions as per-image products streamed out
// (kernels_conv_pointwise.cc), against a plain sum in double: both weight
// orders, result rows that end mid-vector and blocks of columns that end
// mid-image (the last block of each image short), one image or several,
// on one thread and split across threads, and every element written (the
// result starts as NaN); and which convolutions PosePointwise takes, with
// their weight order, by their dimension labels and windows.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/hlo_parser.h"
#include "plugins/cpu/conv_pointwise.h"
#include "plugins/cpu/tests/thread_executor.h"

namespace anvil::cpu {
namespace {

void ExpectProduct(const PointwiseProblem& p, const anvil_plugin_host_executor* executor = nullptr) {
  std::vector<float> x(static_cast<size_t>(p.batch * p.cin * p.positions)), w(static_cast<size_t>(p.cin * p.cout));
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(static_cast<int64_t>(k * 7919 % 2001) - 1000) / 613.0f;
  for (size_t k = 0; k < w.size(); ++k) w[k] = static_cast<float>(static_cast<int64_t>(k * 104729 % 1999) - 999) / 877.0f;
  std::vector<float> y(static_cast<size_t>(p.batch * p.cout * p.positions), std::numeric_limits<float>::quiet_NaN());
  const Parallel parallel(executor);
  RunPointwiseConvolution(p, x.data(), w.data(), y.data(), parallel);
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

TEST(PointwiseConvolution, SplitAcrossThreads) {
  ThreadExecutor threads;
  ExpectProduct({.batch = 5, .cin = 7, .cout = 40, .positions = 3000, .weights_out_first = true}, threads.api());
}

// The problem a convolution poses, or nullopt.
std::optional<PointwiseProblem> Pose(const std::string& lhs, const std::string& rhs, const std::string& out,
                                     const std::string& attributes, int64_t feature_groups = 1) {
  auto module = hlo::ParseHloModule("HloModule m\nENTRY e {\n  x = f32[" + lhs + "] parameter(0)\n  w = f32[" + rhs +
                                    "] parameter(1)\n  ROOT c = f32[" + out + "] convolution(x, w), " + attributes +
                                    "\n}\n");
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return std::nullopt;
  const hlo::Instruction& c = *(*module)->entry->root;
  const hlo::Attribute* labels = c.FindAttribute("dim_labels");
  const hlo::Attribute* window = c.FindAttribute("window");
  if (!labels || !window) {
    ADD_FAILURE() << "no dim_labels or window in " << attributes;
    return std::nullopt;
  }
  auto dn = hlo::ParseDimLabels(labels->value);
  auto parsed_window = hlo::ParseWindow(window->value);
  if (!dn.ok() || !parsed_window.ok()) {
    ADD_FAILURE() << "unreadable attributes " << attributes;
    return std::nullopt;
  }
  ConvolutionAttributes a;
  a.dn = *dn;
  a.window = *parsed_window;
  a.feature_groups = feature_groups;
  return PosePointwise(c, a);
}

TEST(PointwiseConvolution, PosesOnlyUnitWindowsOnBatchFeatureSpatialActivations) {
  const auto oi = Pose("2,16,5,7", "96,16,1,1", "2,96,5,7", "window={size=1x1}, dim_labels=bf01_oi01->bf01");
  ASSERT_TRUE(oi.has_value());
  EXPECT_EQ(oi->batch, 2);
  EXPECT_EQ(oi->cin, 16);
  EXPECT_EQ(oi->cout, 96);
  EXPECT_EQ(oi->positions, 35);
  EXPECT_TRUE(oi->weights_out_first);
  const auto io = Pose("2,16,5,7", "16,96,1,1", "2,96,5,7", "window={size=1x1}, dim_labels=bf01_io01->bf01");
  ASSERT_TRUE(io.has_value());
  EXPECT_FALSE(io->weights_out_first);
  // JAX's and XLA's gradients put the window first.
  const auto spatial_first = Pose("2,16,5,7", "1,1,96,16", "2,96,5,7", "window={size=1x1}, dim_labels=bf01_01oi->bf01");
  ASSERT_TRUE(spatial_first.has_value());
  EXPECT_TRUE(spatial_first->weights_out_first);
  const auto one_d = Pose("3,4,9", "4,8,1", "3,8,9", "window={size=1}, dim_labels=bf0_io0->bf0");
  ASSERT_TRUE(one_d.has_value());
  EXPECT_EQ(one_d->positions, 9);
  EXPECT_FALSE(one_d->weights_out_first);
  // Channels last, a stride, padding, a larger window, groups: not this kernel's.
  EXPECT_FALSE(Pose("2,5,7,16", "1,1,16,96", "2,5,7,96", "window={size=1x1}, dim_labels=b01f_01io->b01f"));
  EXPECT_FALSE(Pose("2,16,6,8", "96,16,1,1", "2,96,3,4", "window={size=1x1 stride=2x2}, dim_labels=bf01_oi01->bf01"));
  EXPECT_FALSE(Pose("2,16,5,7", "96,16,1,1", "2,96,7,9", "window={size=1x1 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01"));
  EXPECT_FALSE(Pose("2,16,5,7", "96,16,3,3", "2,96,3,5", "window={size=3x3}, dim_labels=bf01_oi01->bf01"));
  EXPECT_FALSE(Pose("2,16,5,7", "96,8,1,1", "2,96,5,7", "window={size=1x1}, dim_labels=bf01_oi01->bf01, feature_group_count=2", 2));
}

}  // namespace
}  // namespace anvil::cpu
