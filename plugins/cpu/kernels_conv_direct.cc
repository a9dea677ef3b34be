// f32 2-D convolution computed directly, for the shapes im2col + sgemm
// serves badly: groups with at most a few output features each, whose
// gemms would be matrix-vector products over a gathered patch table.
// Depthwise convolutions and their input gradients (long output rows, small
// windows) and their filter gradients (batch groups, tiny outputs over a
// whole activation map as the window) are such. Each output plane
// (batch, feature) is one task; the inner loop runs along whichever of the
// output row and the window row is longer, over a range computed up front so
// that it holds no bounds checks when there is no base dilation.
#include <algorithm>

#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// One spatial dimension of the convolution, in element strides.
struct Axis {
  int64_t out = 0, kernel = 0, in = 0;                   // extents
  int64_t out_stride = 0, kernel_stride = 0, in_stride = 0;
  int64_t stride = 1, pad_low = 0, window_dilation = 1, base_dilation = 1;
  bool reversal = false;
  // The (undilated) input position that output o reads through tap w, or -1.
  int64_t Input(int64_t o, int64_t w) const {
    const int64_t n = o * stride + w * window_dilation - pad_low;
    if (n < 0 || n % base_dilation != 0 || n / base_dilation >= in) return -1;
    return n / base_dilation;
  }
  int64_t KernelOffset(int64_t w) const { return (reversal ? kernel - 1 - w : w) * kernel_stride; }
};

struct DirectConvolution {
  Axis rows, cols;
  int64_t batch = 0, out_features = 0, out_per_group = 0, in_per_group = 0;
  bool feature_grouped = true;
  int64_t in_batch_stride = 0, in_feature_stride = 0;
  int64_t kernel_in_stride = 0, kernel_out_stride = 0;
  int64_t out_batch_stride = 0, out_feature_stride = 0;

  // out[o_row, o_col] = sum over taps of w * in, with the output row as the
  // inner loop (long output rows, short windows: depthwise layers).
  void AlongOutput(const float* in, const float* kernel, float* out) const {
    for (int64_t oy = 0; oy < rows.out; ++oy) {
      for (int64_t ox = 0; ox < cols.out; ++ox) out[oy * rows.out_stride + ox * cols.out_stride] = 0;
    }
    for (int64_t c = 0; c < in_per_group; ++c) {
      const float* in_c = in + c * in_feature_stride;
      const float* k_c = kernel + c * kernel_in_stride;
      for (int64_t ky = 0; ky < rows.kernel; ++ky) {
        for (int64_t kx = 0; kx < cols.kernel; ++kx) {
          const float w = k_c[rows.KernelOffset(ky) + cols.KernelOffset(kx)];
          const int64_t shift = kx * cols.window_dilation - cols.pad_low;
          // Output columns whose input column lies inside (no base dilation).
          const int64_t lo = std::max<int64_t>(0, CeilDiv(-shift, cols.stride));
          const int64_t hi = std::min<int64_t>(cols.out - 1, FloorDiv(cols.in - 1 - shift, cols.stride));
          for (int64_t oy = 0; oy < rows.out; ++oy) {
            const int64_t iy = rows.Input(oy, ky);
            if (iy < 0) continue;
            const float* in_row = in_c + iy * rows.in_stride;
            float* out_row = out + oy * rows.out_stride;
            if (cols.base_dilation == 1) {
              for (int64_t ox = lo; ox <= hi; ++ox) {
                out_row[ox * cols.out_stride] += w * in_row[(ox * cols.stride + shift) * cols.in_stride];
              }
            } else {
              for (int64_t ox = 0; ox < cols.out; ++ox) {
                const int64_t ix = cols.Input(ox, kx);
                if (ix >= 0) out_row[ox * cols.out_stride] += w * in_row[ix * cols.in_stride];
              }
            }
          }
        }
      }
    }
  }

  // One sum per output element, with the window row as the inner loop (tiny
  // outputs over long windows: filter gradients).
  void AlongWindow(const float* in, const float* kernel, float* out) const {
    for (int64_t oy = 0; oy < rows.out; ++oy) {
      for (int64_t ox = 0; ox < cols.out; ++ox) {
        const int64_t shift = ox * cols.stride - cols.pad_low;
        const int64_t lo = std::max<int64_t>(0, CeilDiv(-shift, cols.window_dilation));
        const int64_t hi = std::min<int64_t>(cols.kernel - 1, FloorDiv(cols.in - 1 - shift, cols.window_dilation));
        float sum = 0;
        for (int64_t c = 0; c < in_per_group; ++c) {
          const float* in_c = in + c * in_feature_stride;
          const float* k_c = kernel + c * kernel_in_stride;
          for (int64_t ky = 0; ky < rows.kernel; ++ky) {
            const int64_t iy = rows.Input(oy, ky);
            if (iy < 0) continue;
            const float* in_row = in_c + iy * rows.in_stride;
            const float* k_row = k_c + rows.KernelOffset(ky);
            if (cols.base_dilation == 1) {
              for (int64_t kx = lo; kx <= hi; ++kx) {
                sum += k_row[cols.KernelOffset(kx)] * in_row[(shift + kx * cols.window_dilation) * cols.in_stride];
              }
            } else {
              for (int64_t kx = 0; kx < cols.kernel; ++kx) {
                const int64_t ix = cols.Input(ox, kx);
                if (ix >= 0) sum += k_row[cols.KernelOffset(kx)] * in_row[ix * cols.in_stride];
              }
            }
          }
        }
        out[oy * rows.out_stride + ox * cols.out_stride] = sum;
      }
    }
  }
};

}  // namespace

Kernel DirectConvolutionKernel(const hlo::Instruction& i, const ConvolutionAttributes& attributes,
                               const std::vector<Slot>& in, const Slot& out) {
  const hlo::ConvDimensionNumbers& dn = attributes.dn;
  if (dn.input_spatial.size() != 2) return nullptr;
  const std::vector<hlo::WindowDim>& window = attributes.window;
  const auto& ld = i.operands[0]->shape.dims();
  const auto& rd = i.operands[1]->shape.dims();
  const auto& od = i.shape.dims();
  const auto ls = RowMajorStrides(ld), rs = RowMajorStrides(rd), os = RowMajorStrides(od);
  DirectConvolution conv;
  const int64_t g = attributes.feature_groups * attributes.batch_groups;
  conv.out_features = od[dn.output_feature];
  conv.out_per_group = conv.out_features / g;
  conv.in_per_group = rd[dn.kernel_input_feature];
  conv.batch = ld[dn.input_batch] / attributes.batch_groups;
  conv.feature_grouped = attributes.feature_groups > 1;
  Axis* axes[2] = {&conv.rows, &conv.cols};
  for (int s = 0; s < 2; ++s) {
    Axis& a = *axes[s];
    a.out = od[dn.output_spatial[s]];
    a.kernel = rd[dn.kernel_spatial[s]];
    a.in = ld[dn.input_spatial[s]];
    a.out_stride = os[dn.output_spatial[s]];
    a.kernel_stride = rs[dn.kernel_spatial[s]];
    a.in_stride = ls[dn.input_spatial[s]];
    a.stride = window[s].stride;
    a.pad_low = window[s].pad_low;
    a.window_dilation = window[s].window_dilation;
    a.base_dilation = window[s].base_dilation;
    a.reversal = window[s].reversal;
    if (a.stride < 1 || a.window_dilation < 1 || a.base_dilation < 1) return nullptr;
  }
  // Worth it only where im2col + sgemm is poor: groups of at most a few
  // output features, whose gemms would be matrix-vector products.
  if (conv.out_per_group > 4) return nullptr;
  conv.in_batch_stride = ls[dn.input_batch];
  conv.in_feature_stride = ls[dn.input_feature];
  conv.kernel_in_stride = rs[dn.kernel_input_feature];
  conv.kernel_out_stride = rs[dn.kernel_output_feature];
  conv.out_batch_stride = os[dn.output_batch];
  conv.out_feature_stride = os[dn.output_feature];
  const bool along_output = conv.cols.out >= conv.cols.kernel;
  const Slot lhs = in[0], rhs = in[1], result = out;
  return [=](const Frame& frame) {
    const float* x = static_cast<const float*>(frame.At(lhs));
    const float* k = static_cast<const float*>(frame.At(rhs));
    float* y = static_cast<float*>(frame.At(result));
    frame.parallel->For(conv.batch * conv.out_features, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t item = lo; item < hi; ++item) {
        const int64_t b = item / conv.out_features, f = item % conv.out_features;
        const int64_t group = f / conv.out_per_group;
        const float* in_plane =
            conv.feature_grouped
                ? x + b * conv.in_batch_stride + group * conv.in_per_group * conv.in_feature_stride
                : x + (group * conv.batch + b) * conv.in_batch_stride;
        const float* kernel = k + f * conv.kernel_out_stride;
        float* out_plane = y + b * conv.out_batch_stride + f * conv.out_feature_stride;
        if (along_output) {
          conv.AlongOutput(in_plane, kernel, out_plane);
        } else {
          conv.AlongWindow(in_plane, kernel, out_plane);
        }
      }
    });
  };
}

}  // namespace anvil::cpu
