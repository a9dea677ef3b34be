// HLO convolution -> oneDNN convolution problem. In one spatial dimension,
// with window size K, stride s, window dilation D, base dilation B and
// padding (lo, hi), HLO computes
//   out[y] = sum_k in_B[y*s + k*D - lo] * w[k]   (in_B: in with B-1 zeros between elements)
// and oneDNN's forward convolution
//   dst[y] = sum_k src[y*s' - pl + k*(d'+1)] * w[k].
// Forward (B == 1): s' = s, d' = D-1, pl = lo, pr = hi.
// Backward data (B > 1, s == 1): the HLO output is oneDNN's diff_src and the
//   HLO input its diff_dst, with s' = B, d' = D-1, the weights mirrored, and
//   pl = (K-1)*D - lo, pr = (K-1)*D - hi.
// Backward weights (batch groups, or a window larger than the output): the
//   HLO input is src with batch and feature swapped, the HLO kernel is
//   diff_dst, the HLO output is diff_weights, with s' = D, d' = s-1, pl = lo
//   and pr whatever makes oneDNN's size rule hold (the elements read are the
//   same either way: those past the input are zero in both).
#include "plugins/cpu/conv_problem.h"

#include <numeric>

namespace anvil::cpu {
namespace {

using Kind = ConvProblem::Kind;

// Adds one dimension of `dims` (with its row-major stride) to an operand.
void Add(ConvOperand& operand, int64_t size, int64_t stride) {
  operand.dims.push_back(size);
  operand.strides.push_back(stride);
}

int64_t Product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

}  // namespace

std::optional<ConvProblem> PoseConvolution(const hlo::Instruction& i, const ConvolutionAttributes& attributes) {
  const hlo::ConvDimensionNumbers& dn = attributes.dn;
  const std::vector<hlo::WindowDim>& window = attributes.window;
  const size_t spatial = dn.input_spatial.size();
  if (spatial > 3 || window.size() != spatial) return std::nullopt;
  const auto& ld = i.operands[0]->shape.dims();
  const auto& rd = i.operands[1]->shape.dims();
  const auto& od = i.shape.dims();
  if (i.operands[0]->shape.ElementCount() == 0 || i.operands[1]->shape.ElementCount() == 0 || i.shape.ElementCount() == 0) {
    return std::nullopt;  // nothing for oneDNN to do; the generic kernels handle empty arrays
  }
  const std::vector<int64_t> ls = RowMajorStrides(ld), rs = RowMajorStrides(rd), os = RowMajorStrides(od);
  const int64_t feature_groups = attributes.feature_groups, batch_groups = attributes.batch_groups;

  bool base_dilated = false, reversed = false, strided = false;
  std::vector<int64_t> window_sizes, out_sizes;
  window_sizes.reserve(spatial);
  out_sizes.reserve(spatial);
  for (size_t s = 0; s < spatial; ++s) {
    base_dilated |= window[s].base_dilation != 1;
    reversed |= window[s].reversal;
    strided |= window[s].stride != 1;
    window_sizes.push_back(rd[dn.kernel_spatial[s]]);
    out_sizes.push_back(od[dn.output_spatial[s]]);
  }
  ConvProblem p;
  // Each operand has batch, features and the spatial dimensions, the
  // weights a group dimension too: sized once, as a warm compile builds
  // every convolution's problem again.
  for (ConvOperand* o : {&p.src, &p.weights, &p.dst}) {
    o->dims.reserve(spatial + 3);
    o->strides.reserve(spatial + 3);
  }
  for (std::vector<int64_t>* v : {&p.strides, &p.dilates, &p.pad_l, &p.pad_r}) v->reserve(spatial);
  p.flip.reserve(spatial);
  if (base_dilated) {
    if (strided || batch_groups != 1) return std::nullopt;
    p.kind = Kind::kBackwardData;
  } else if (batch_groups > 1 || (feature_groups == 1 && !reversed && Product(window_sizes) > Product(out_sizes))) {
    if (feature_groups != 1 || reversed) return std::nullopt;
    p.kind = Kind::kBackwardWeights;
  } else {
    p.kind = Kind::kForward;
  }

  switch (p.kind) {
    case Kind::kForward: {
      Add(p.src, ld[dn.input_batch], ls[dn.input_batch]);
      Add(p.src, ld[dn.input_feature], ls[dn.input_feature]);
      const int64_t out_features = rd[dn.kernel_output_feature], per_group = out_features / feature_groups;
      if (feature_groups > 1) Add(p.weights, feature_groups, per_group * rs[dn.kernel_output_feature]);
      Add(p.weights, per_group, rs[dn.kernel_output_feature]);
      Add(p.weights, rd[dn.kernel_input_feature], rs[dn.kernel_input_feature]);
      Add(p.dst, od[dn.output_batch], os[dn.output_batch]);
      Add(p.dst, od[dn.output_feature], os[dn.output_feature]);
      for (size_t s = 0; s < spatial; ++s) {
        const hlo::WindowDim& w = window[s];
        Add(p.src, ld[dn.input_spatial[s]], ls[dn.input_spatial[s]]);
        Add(p.weights, rd[dn.kernel_spatial[s]], rs[dn.kernel_spatial[s]]);
        Add(p.dst, od[dn.output_spatial[s]], os[dn.output_spatial[s]]);
        p.strides.push_back(w.stride);
        p.dilates.push_back(w.window_dilation - 1);
        p.pad_l.push_back(w.pad_low);
        p.pad_r.push_back(w.pad_high);
        p.flip.push_back(w.reversal);
      }
      break;
    }
    case Kind::kBackwardData: {
      // oneDNN's forward output channels are HLO's input features, its
      // forward input channels HLO's output features.
      Add(p.dst, ld[dn.input_batch], ls[dn.input_batch]);
      Add(p.dst, ld[dn.input_feature], ls[dn.input_feature]);
      const int64_t hlo_out = rd[dn.kernel_output_feature], per_group = hlo_out / feature_groups;
      if (feature_groups > 1) Add(p.weights, feature_groups, per_group * rs[dn.kernel_output_feature]);
      Add(p.weights, rd[dn.kernel_input_feature], rs[dn.kernel_input_feature]);
      Add(p.weights, per_group, rs[dn.kernel_output_feature]);
      Add(p.src, od[dn.output_batch], os[dn.output_batch]);
      Add(p.src, od[dn.output_feature], os[dn.output_feature]);
      for (size_t s = 0; s < spatial; ++s) {
        const hlo::WindowDim& w = window[s];
        const int64_t k = rd[dn.kernel_spatial[s]];
        Add(p.dst, ld[dn.input_spatial[s]], ls[dn.input_spatial[s]]);
        Add(p.weights, k, rs[dn.kernel_spatial[s]]);
        Add(p.src, od[dn.output_spatial[s]], os[dn.output_spatial[s]]);
        p.strides.push_back(w.base_dilation);
        p.dilates.push_back(w.window_dilation - 1);
        p.pad_l.push_back((k - 1) * w.window_dilation - w.pad_low);
        p.pad_r.push_back((k - 1) * w.window_dilation - w.pad_high);
        p.flip.push_back(!w.reversal);
      }
      break;
    }
    case Kind::kBackwardWeights: {
      // HLO's input batch is the forward pass's channels, its input features
      // the forward batch; batch groups are the forward pass's groups.
      Add(p.src, ld[dn.input_feature], ls[dn.input_feature]);
      Add(p.src, ld[dn.input_batch], ls[dn.input_batch]);
      Add(p.dst, rd[dn.kernel_input_feature], rs[dn.kernel_input_feature]);
      Add(p.dst, rd[dn.kernel_output_feature], rs[dn.kernel_output_feature]);
      const int64_t out_features = od[dn.output_feature], per_group = out_features / batch_groups;
      if (batch_groups > 1) Add(p.weights, batch_groups, per_group * os[dn.output_feature]);
      Add(p.weights, per_group, os[dn.output_feature]);
      Add(p.weights, od[dn.output_batch], os[dn.output_batch]);
      for (size_t s = 0; s < spatial; ++s) {
        const hlo::WindowDim& w = window[s];
        const int64_t in = ld[dn.input_spatial[s]], grad = rd[dn.kernel_spatial[s]], taps = od[dn.output_spatial[s]];
        Add(p.src, in, ls[dn.input_spatial[s]]);
        Add(p.dst, grad, rs[dn.kernel_spatial[s]]);
        Add(p.weights, taps, os[dn.output_spatial[s]]);
        p.strides.push_back(w.window_dilation);
        p.dilates.push_back(w.stride - 1);
        p.pad_l.push_back(w.pad_low);
        const int64_t reach = (taps - 1) * w.stride + 1;
        p.pad_r.push_back((grad - 1) * w.window_dilation + reach - in - w.pad_low);
        p.flip.push_back(false);
      }
      break;
    }
  }
  if (spatial == 0) {
    // oneDNN needs a spatial dimension: a unit one changes nothing.
    for (ConvOperand* operand : {&p.src, &p.weights, &p.dst}) Add(*operand, 1, 1);
    p.strides = {1};
    p.dilates = {0};
    p.pad_l = {0};
    p.pad_r = {0};
    p.flip = {false};
  }
  for (size_t s = 0; s < p.pad_l.size(); ++s) {
    if (p.pad_l[s] < 0 || p.pad_r[s] < 0) return std::nullopt;
  }
  return p;
}

}  // namespace anvil::cpu
