// How an HLO convolution is posed to oneDNN. An HLO convolution is one
// formula; oneDNN (like cuDNN) offers three: the forward convolution, its
// gradient with respect to the input (backward data) and with respect to the
// weights (backward weights). Autodiff writes the two gradients as HLO
// convolutions with base dilation or with batch groups and a window as large
// as an activation map; posed as the gradient they are, oneDNN runs them with
// the kernels written for them instead of as a forward convolution with a
// 112x112 filter. XLA's GPU backend makes the same choice for cuDNN.
//
// The mapping is exact arithmetic (the same sums over the same elements), so
// which of the three is chosen changes only the speed.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/ir.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {

// One operand in oneDNN's logical dimension order ([N, C, spatial...] for
// activations, [[G,] O, I, spatial...] for weights) with the element strides
// it has in Anvil's row-major memory.
struct ConvOperand {
  std::vector<int64_t> dims, strides;
};

struct ConvProblem {
  enum class Kind { kForward, kBackwardData, kBackwardWeights };
  Kind kind = Kind::kForward;
  // oneDNN's roles: forward reads src and weights and writes dst; backward
  // data reads dst (the gradient, HLO's lhs) and weights and writes src;
  // backward weights reads src and dst (the gradient, HLO's rhs) and writes
  // weights.
  ConvOperand src, weights, dst;
  // Per spatial dimension, in oneDNN's conventions (dilation 0 is none).
  std::vector<int64_t> strides, dilates, pad_l, pad_r;
  // Spatial dimensions in which the weights are read mirrored (HLO's window
  // reversal, or the flip that turns a base-dilated convolution into a
  // backward-data one).
  std::vector<bool> flip;
};

// The oneDNN problem that computes `i` (f32, 1 to 3 spatial dimensions, no
// negative padding), or nullopt when there is none.
std::optional<ConvProblem> PoseConvolution(const hlo::Instruction& i, const ConvolutionAttributes& attributes);

}  // namespace anvil::cpu
