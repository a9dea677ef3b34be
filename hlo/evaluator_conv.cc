// Real-valued convolution for the reference evaluator, as patches times
// filters: for each output position, the input window one (feature group,
// batch group) reads is gathered once into a contiguous row (zeros where the
// window falls on padding or between dilated inputs), then dotted with the
// filter of every output feature of that group. The loops over the window
// and the input features are then plain arrays instead of index arithmetic
// per multiply-add. Sums are in double, rounded once into the result type,
// like the general loop in evaluator_linalg.cc it replaces for real operands.
#include <algorithm>
#include <numeric>

#include "hlo/evaluator_internal.h"

namespace anvil::hlo::eval {
namespace {

int64_t Product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

// For output coordinate x and window coordinate w of one spatial dimension,
// the input coordinate read, or -1 where it is padding or a dilation hole.
std::vector<int64_t> InputCoordinates(const WindowDim& w, int64_t outputs, int64_t window, int64_t input) {
  std::vector<int64_t> table(static_cast<size_t>(outputs * window), -1);
  for (int64_t x = 0; x < outputs; ++x) {
    for (int64_t k = 0; k < window; ++k) {
      const int64_t dilated = x * w.stride + k * w.window_dilation - w.pad_low;
      if (dilated < 0 || dilated % w.base_dilation != 0) continue;
      const int64_t at = dilated / w.base_dilation;
      if (at < input) table[static_cast<size_t>(x * window + k)] = at;
    }
  }
  return table;
}

// Four partial sums: the additions of one output element no longer wait on
// each other (the result is still a double sum, rounded once).
double Dot(const double* a, const double* b, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    s0 += a[j] * b[j];
    s1 += a[j + 1] * b[j + 1];
    s2 += a[j + 2] * b[j + 2];
    s3 += a[j + 3] * b[j + 3];
  }
  for (; j < n; ++j) s0 += a[j] * b[j];
  return (s0 + s1) + (s2 + s3);
}

}  // namespace

StatusOr<Literal> EvalRealConvolution(const Instruction& i, const Literal& lhs, const Literal& rhs,
                                      const ConvDimensionNumbers& dn, const std::vector<WindowDim>& window,
                                      int64_t feature_groups, int64_t batch_groups) {
  const auto& ld = lhs.shape().dims();
  const auto& rd = rhs.shape().dims();
  const auto ls = Strides(ld), rs = Strides(rd);
  Literal out(Shape(i.shape.element_type(), i.shape.dims()));
  const auto& od = out.shape().dims();
  const auto os = Strides(od);
  const size_t spatial = dn.input_spatial.size();
  const int64_t out_features = od[static_cast<size_t>(dn.output_feature)];
  const int64_t out_batch = od[static_cast<size_t>(dn.output_batch)];
  const int64_t kernel_in = rd[static_cast<size_t>(dn.kernel_input_feature)];
  if (feature_groups <= 0 || batch_groups <= 0 || out_features % feature_groups != 0 ||
      out_features % batch_groups != 0) {
    return InvalidArgument("convolution: " + std::to_string(out_features) +
                           " output features do not split into the feature and batch groups");
  }
  std::vector<int64_t> window_dims(spatial), out_spatial(spatial);
  for (size_t s = 0; s < spatial; ++s) {
    window_dims[s] = rd[static_cast<size_t>(dn.kernel_spatial[s])];
    out_spatial[s] = od[static_cast<size_t>(dn.output_spatial[s])];
  }
  const int64_t window_count = Product(window_dims);
  const int64_t positions = Product(out_spatial);
  const int64_t row = window_count * kernel_in;

  // The multi-index of each window position, decoded once.
  std::vector<std::vector<int64_t>> window_index(static_cast<size_t>(window_count));
  for (int64_t wk = 0; wk < window_count; ++wk) Unflatten(wk, window_dims, window_index[static_cast<size_t>(wk)]);

  // Filters as [output feature][window position][input feature], with the
  // window reversed where the convolution says so.
  std::vector<double> filters(static_cast<size_t>(out_features * row));
  for (int64_t o = 0; o < out_features; ++o) {
    for (int64_t wk = 0; wk < window_count; ++wk) {
      const std::vector<int64_t>& w_index = window_index[static_cast<size_t>(wk)];
      int64_t at = o * rs[static_cast<size_t>(dn.kernel_output_feature)];
      for (size_t s = 0; s < spatial; ++s) {
        const int64_t pos = window[s].reversal ? window_dims[s] - 1 - w_index[s] : w_index[s];
        at += pos * rs[static_cast<size_t>(dn.kernel_spatial[s])];
      }
      double* dst = filters.data() + (o * window_count + wk) * kernel_in;
      for (int64_t c = 0; c < kernel_in; ++c) {
        dst[c] = rhs.GetDouble(at + c * rs[static_cast<size_t>(dn.kernel_input_feature)]);
      }
    }
  }
  std::vector<double> input(static_cast<size_t>(lhs.element_count()));
  for (int64_t k = 0, k_end = lhs.element_count(); k < k_end; ++k) input[static_cast<size_t>(k)] = lhs.GetDouble(k);

  std::vector<std::vector<int64_t>> coordinates(spatial);
  for (size_t s = 0; s < spatial; ++s) {
    coordinates[s] = InputCoordinates(window[s], out_spatial[s], window_dims[s],
                                      ld[static_cast<size_t>(dn.input_spatial[s])]);
  }
  const int64_t feature_stride = ls[static_cast<size_t>(dn.input_feature)];
  const int64_t per_feature_group = out_features / feature_groups;
  const int64_t per_batch_group = out_features / batch_groups;
  std::vector<double> patch(static_cast<size_t>(row));
  std::vector<int64_t> p_index(spatial);

  // The window of input batch `batch` at output position p_index, input
  // features [first, first + kernel_in).
  auto gather_patch = [&](int64_t batch, int64_t first) {
    for (int64_t wk = 0; wk < window_count; ++wk) {
      const std::vector<int64_t>& w_index = window_index[static_cast<size_t>(wk)];
      int64_t at = batch * ls[static_cast<size_t>(dn.input_batch)] + first * feature_stride;
      bool inside = true;
      for (size_t s = 0; s < spatial && inside; ++s) {
        const int64_t x = coordinates[s][static_cast<size_t>(p_index[s] * window_dims[s] + w_index[s])];
        inside = x >= 0;
        at += x * ls[static_cast<size_t>(dn.input_spatial[s])];
      }
      double* dst = patch.data() + wk * kernel_in;
      if (!inside) {
        std::fill(dst, dst + kernel_in, 0.0);
        continue;
      }
      for (int64_t c = 0; c < kernel_in; ++c) dst[c] = input[static_cast<size_t>(at + c * feature_stride)];
    }
  };

  for (int64_t b = 0; b < out_batch; ++b) {
    for (int64_t p = 0; p < positions; ++p) {
      Unflatten(p, out_spatial, p_index);
      int64_t out_at = b * os[static_cast<size_t>(dn.output_batch)];
      for (size_t s = 0; s < spatial; ++s) out_at += p_index[s] * os[static_cast<size_t>(dn.output_spatial[s])];
      int64_t gathered = -1;  // the (feature group, batch group) the patch holds
      for (int64_t o = 0; o < out_features; ++o) {
        const int64_t feature_group = o / per_feature_group, batch_group = o / per_batch_group;
        const int64_t group = feature_group * batch_groups + batch_group;
        if (group != gathered) {
          gather_patch(batch_group * out_batch + b, feature_group * kernel_in);
          gathered = group;
        }
        const double sum = Dot(patch.data(), filters.data() + o * row, row);
        out.SetDouble(out_at + o * os[static_cast<size_t>(dn.output_feature)], sum);
      }
    }
  }
  return out;
}

}  // namespace anvil::hlo::eval
