// Pointwise (1x1) f32 convolutions on batch-feature-spatial activations as
// one matrix product per image, streamed out (kernels_conv_pointwise.cc).
#pragma once

#include <cstdint>
#include <optional>

#include "hlo/ir.h"
#include "plugins/cpu/parallel.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {

// A pointwise convolution: `batch` images, each a row-major [cin,
// positions] input and [cout, positions] result, with the weights a
// [cout, cin] matrix (weights_out_first) or a [cin, cout] one.
struct PointwiseProblem {
  int64_t batch = 0, cin = 0, cout = 0, positions = 1;
  bool weights_out_first = true;
};

// The problem `i` poses, or nullopt where it is not pointwise on such
// activations (a window, stride, padding, dilation or group; a feature
// dimension anywhere but second; not f32).
std::optional<PointwiseProblem> PosePointwise(const hlo::Instruction& i, const ConvolutionAttributes& attributes);

// y = the convolution of x by w, split across `parallel`'s threads; every
// dimension of `p` at least 1.
void RunPointwiseConvolution(const PointwiseProblem& p, const float* x, const float* w, float* y,
                             const Parallel& parallel);

}  // namespace anvil::cpu
