// f32 2-D convolution computed directly, for the shapes im2col + sgemm
// serves badly: groups with at most a few output features each, whose
// gemms would be matrix-vector products over a gathered patch table.
// Depthwise convolutions and their input gradients (long output rows, small
// windows) and their filter gradients (batch groups, tiny outputs over a
// whole activation map as the window) are such. Each output plane
// (batch, feature) is one task; the inner loop runs along whichever of the
// output row and the window row is longer, over a range computed up front so
// that it holds no bounds checks when there is no base dilation.
//
// Where the rows are contiguous (row-major activations) the inner loops are
// conv_rows.inc's vectorised ones, per instruction set; ConvolutionKernel
// then runs wide depthwise layers here ahead of oneDNN, whose depthwise
// kernels need a blocked layout and so two reorders, each a pass over the
// activation in and out (MobileNet's 112-column layers: 1.3-1.7x faster
// here; at 56 columns and below oneDNN's blocked kernels, vectorised across
// features, stay faster).
#include <algorithm>

#include "plugins/cpu/isa.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

// The row loops for baseline x86-64, AVX2 and AVX-512, the CPU's best chosen
// at run time (as for batch norm's rows).
namespace baseline {
#include "plugins/cpu/conv_rows.inc"
}  // namespace baseline
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2")
namespace avx2 {
#include "plugins/cpu/conv_rows.inc"
}  // namespace avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw", "prefer-vector-width=512")
namespace avx512 {
#include "plugins/cpu/conv_rows.inc"
}  // namespace avx512
#pragma GCC pop_options
#endif

using Rows = baseline::Rows;

template <class IsaRows>
Rows AsRows(const IsaRows& r) {
  return Rows{{r.add_tap[0], r.add_tap[1]},
              {r.add_three_taps[0], r.add_three_taps[1]},
              {r.dot_into_lanes[0], r.dot_into_lanes[1]},
              {r.dot_three_into_lanes[0], r.dot_three_into_lanes[1]},
              r.interleave};
}

const Rows& HostRows() {
  static const Rows rows = [] {
#if defined(__x86_64__) && defined(__GNUC__)
    if (HostIsa() == Isa::kAvx512) return AsRows(avx512::Loops());
    if (HostIsa() == Isa::kAvx2) return AsRows(avx2::Loops());
#endif
    return baseline::Loops();
  }();
  return rows;
}

// The contiguous paths' limits, for what they keep on the stack: an output
// row's phase buffers (floats), a window row's taps, and a filter
// gradient's outputs per plane (double sums and their lanes).
constexpr int64_t kMaxPhaseElements = 4096;
constexpr int64_t kMaxContiguousTaps = 16;
constexpr int64_t kMaxWindowOutputs = 64;
// The shortest row (input or output columns) for which a depthwise
// convolution runs here rather than in oneDNN.
constexpr int64_t kMinDirectRow = 96;

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
    if (base_dilation == 1) return n >= 0 && n < in ? n : -1;  // no divisions: this runs per row
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
  // Whether the columns are contiguous in memory and their strides and
  // dilations ones the vectorised row loops take (ContiguousAlongOutput,
  // ContiguousAlongWindow).
  bool contiguous_output = false, contiguous_window = false;

  bool OutputRowsAreContiguous() const {
    if (cols.out_stride != 1 || cols.in_stride != 1 || cols.kernel > kMaxContiguousTaps) return false;
    if (cols.base_dilation == 1) return cols.stride == 1 || cols.stride == 2;
    // (The dilation bounded first: the product must not overflow.)
    return cols.stride == 1 && cols.base_dilation <= kMaxPhaseElements &&
           cols.base_dilation * PhaseLength() <= kMaxPhaseElements;
  }
  bool WindowRowsAreContiguous() const {
    return cols.in_stride == 1 && cols.kernel_stride == 1 && !cols.reversal && cols.base_dilation == 1 &&
           rows.base_dilation == 1 &&
           (cols.window_dilation == 1 || cols.window_dilation == 2) && rows.out <= kMaxWindowOutputs &&
           cols.out <= kMaxWindowOutputs && rows.out * cols.out <= kMaxWindowOutputs;
  }
  // Output columns per phase of the base dilation (ox = phase + dilation * j).
  int64_t PhaseLength() const { return (cols.out + cols.base_dilation - 1) / cols.base_dilation; }

  // AlongOutput with contiguous columns: vectorised passes over each output
  // row, accumulated in place, one per window row where the window is 3
  // wide (its three taps at once, the row's ends tap by tap) and one per tap
  // otherwise. With base dilation (a strided convolution's input gradient),
  // each tap feeds one phase of the row (the outputs whose input lands on a
  // real element), accumulated contiguously in a buffer per phase and
  // interleaved into the row at the end.
  void ContiguousAlongOutput(const float* in, const float* kernel, float* out, const Rows& loops) const {
    const int64_t dilation = cols.base_dilation, phase_length = PhaseLength();
    ColumnTaps taps[kMaxContiguousTaps];
    for (int64_t kx = 0; kx < cols.kernel; ++kx) taps[kx] = TapOf(kx, phase_length);
    // The outputs all three taps of a 3-wide window reach (no base dilation:
    // the leftmost tap's range starts last and the rightmost's ends first).
    // (Without base dilation a tap's range moves left as kx grows, so the
    // middle tap's holds the overlap of the outer two. A tap's range or the
    // overlap may be empty: then both_hi < both_lo, and taps go one by one.)
    const bool three = dilation == 1 && cols.kernel == 3;
    const int64_t both_lo = three ? std::max(taps[0].from, taps[2].from) : 0;
    const int64_t both_hi = three ? std::min(taps[0].to, taps[2].to) : -1;
    const int64_t stride = dilation == 1 ? cols.stride : 1;
    float phases[kMaxPhaseElements];
    for (int64_t oy = 0; oy < rows.out; ++oy) {
      float* out_row = out + oy * rows.out_stride;
      float* acc = dilation == 1 ? out_row : phases;
      std::fill(acc, acc + (dilation == 1 ? cols.out : dilation * phase_length), 0.0f);
      for (int64_t c = 0; c < in_per_group; ++c) {
        const float* in_c = in + c * in_feature_stride;
        const float* k_c = kernel + c * kernel_in_stride;
        for (int64_t ky = 0; ky < rows.kernel; ++ky) {
          const int64_t iy = rows.Input(oy, ky);
          if (iy < 0) continue;
          const float* in_row = in_c + iy * rows.in_stride;
          const float* k_row = k_c + rows.KernelOffset(ky);
          auto tap = [&](const ColumnTaps& t, int64_t from, int64_t to) {
            if (to - from + 1 >= 16) {
              loops.add_tap[stride - 1](acc + t.acc_at + from, in_row + t.in_at + from * stride, k_row[t.weight], to - from + 1);
              return;
            }
            // A row's ends (a column or two): inline.
            const float w = k_row[t.weight];
            for (int64_t j = from; j <= to; ++j) acc[t.acc_at + j] += w * in_row[t.in_at + j * stride];
          };
          if (both_hi < both_lo) {
            for (int64_t kx = 0; kx < cols.kernel; ++kx) tap(taps[kx], taps[kx].from, taps[kx].to);
            continue;
          }
          const float w[3] = {k_row[taps[0].weight], k_row[taps[1].weight], k_row[taps[2].weight]};
          loops.add_three_taps[stride - 1](acc + both_lo, in_row + taps[0].in_at + both_lo * stride, cols.window_dilation, w,
                                           both_hi - both_lo + 1);
          for (int64_t kx = 0; kx < 3; ++kx) {
            tap(taps[kx], taps[kx].from, std::min(taps[kx].to, both_lo - 1));
            tap(taps[kx], std::max(taps[kx].from, both_hi + 1), taps[kx].to);
          }
        }
      }
      if (dilation == 2) {
        loops.interleave(out_row, phases, phases + phase_length, cols.out);
      } else if (dilation > 2) {
        for (int64_t phase = 0; phase < dilation; ++phase) {
          const float* from = phases + phase * phase_length;
          for (int64_t j = 0; phase + dilation * j < cols.out; ++j) out_row[phase + dilation * j] = from[j];
        }
      }
    }
  }

  // Where one tap of a window row reads and writes along a row: it adds
  // w * in_row[in_at + j * stride] into acc[acc_at + j] for j in [from, to].
  // Without base dilation acc is the output row and j the output column;
  // with it, acc holds the phases and j counts the outputs of the tap's
  // phase (ox = phase + dilation * j, reading input j + offset).
  struct ColumnTaps {
    int64_t from = 0, to = -1, in_at = 0, acc_at = 0, weight = 0;
  };
  ColumnTaps TapOf(int64_t kx, int64_t phase_length) const {
    ColumnTaps t;
    t.weight = cols.KernelOffset(kx);
    const int64_t shift = kx * cols.window_dilation - cols.pad_low;
    const int64_t dilation = cols.base_dilation;
    if (dilation == 1) {
      t.from = std::max<int64_t>(0, CeilDiv(-shift, cols.stride));
      t.to = std::min<int64_t>(cols.out - 1, FloorDiv(cols.in - 1 - shift, cols.stride));
      t.in_at = shift;
      return t;
    }
    const int64_t phase = ((-shift) % dilation + dilation) % dilation;
    const int64_t offset = (phase + shift) / dilation;
    const int64_t count = (cols.out - phase + dilation - 1) / dilation;
    t.from = std::max<int64_t>(0, -offset);
    t.to = std::min<int64_t>(count - 1, cols.in - 1 - offset);
    t.in_at = offset;
    t.acc_at = phase * phase_length;
    return t;
  }

  // AlongWindow with contiguous columns: each output a dot product of the
  // window rows and input rows, accumulated in vector lanes; three outputs
  // of a row at once where their window ranges overlap (a 3-wide filter's
  // gradient), the rest one by one. The group's planes are taken one at a
  // time (outermost), so each is read from memory once while every output
  // sums over it; each plane's lanes are added into double sums.
  void ContiguousAlongWindow(const float* in, const float* kernel, float* out, const Rows& loops) const {
    constexpr int kLanes = baseline::kDotLanes;
    double sums[kMaxWindowOutputs] = {};
    float lanes[kMaxWindowOutputs * kLanes];
    const int64_t dilation = cols.window_dilation, outputs = rows.out * cols.out;
    // Per output column, the window columns [lo, hi] that read inside the
    // input, and where they start reading.
    int64_t lo[kMaxWindowOutputs], hi[kMaxWindowOutputs], shift[kMaxWindowOutputs];
    for (int64_t ox = 0; ox < cols.out; ++ox) {
      shift[ox] = ox * cols.stride - cols.pad_low;
      lo[ox] = std::max<int64_t>(0, CeilDiv(-shift[ox], dilation));
      hi[ox] = std::min<int64_t>(cols.kernel - 1, FloorDiv(cols.in - 1 - shift[ox], dilation));
    }
    const bool three = cols.out == 3;
    const int64_t all_lo = three ? std::max({lo[0], lo[1], lo[2]}) : 0;
    const int64_t all_hi = three ? std::min({hi[0], hi[1], hi[2]}) : -1;
    for (int64_t c = 0; c < in_per_group; ++c) {
      const float* in_c = in + c * in_feature_stride;
      const float* k_c = kernel + c * kernel_in_stride;
      std::fill(lanes, lanes + outputs * kLanes, 0.0f);
      for (int64_t oy = 0; oy < rows.out; ++oy) {
        // The window rows that read inside the input: a contiguous range (no
        // base dilation), whose input rows lie window_dilation rows apart.
        int64_t ky_lo = 0;
        while (ky_lo < rows.kernel && rows.Input(oy, ky_lo) < 0) ++ky_lo;
        int64_t ky_hi = rows.kernel - 1;
        while (ky_hi >= ky_lo && rows.Input(oy, ky_hi) < 0) --ky_hi;
        if (ky_hi < ky_lo) continue;
        const int64_t window_rows = ky_hi - ky_lo + 1;
        const float* in_rows = in_c + rows.Input(oy, ky_lo) * rows.in_stride;
        const int64_t in_row_step = rows.window_dilation * rows.in_stride;
        const float* k_rows = k_c + rows.KernelOffset(ky_lo);
        const int64_t k_row_step = rows.KernelOffset(1) - rows.KernelOffset(0);
        float* row_lanes = lanes + oy * cols.out * kLanes;
        auto dot = [&](int64_t ox, int64_t from, int64_t to) {
          if (to - from + 1 >= kLanes) {
            loops.dot_into_lanes[dilation - 1](row_lanes + ox * kLanes, k_rows + from, k_row_step,
                                               in_rows + shift[ox] + from * dilation, in_row_step, to - from + 1,
                                               window_rows);
            return;
          }
          // A row's ends (a column or two): inline, into the first lane.
          for (int64_t r = 0; r < window_rows; ++r) {
            const float* k_row = k_rows + r * k_row_step;
            const float* in_row = in_rows + r * in_row_step + shift[ox];
            for (int64_t kx = from; kx <= to; ++kx) row_lanes[ox * kLanes] += k_row[kx] * in_row[kx * dilation];
          }
        };
        if (all_hi < all_lo) {
          for (int64_t ox = 0; ox < cols.out; ++ox) dot(ox, lo[ox], hi[ox]);
          continue;
        }
        loops.dot_three_into_lanes[dilation - 1](row_lanes, k_rows + all_lo, k_row_step,
                                                 in_rows + shift[0] + all_lo * dilation, in_row_step, cols.stride,
                                                 all_hi - all_lo + 1, window_rows);
        for (int64_t ox = 0; ox < 3; ++ox) {
          dot(ox, lo[ox], std::min(hi[ox], all_lo - 1));
          dot(ox, std::max(lo[ox], all_hi + 1), hi[ox]);
        }
      }
      for (int64_t o = 0; o < outputs; ++o) {
        float plane = 0;
        for (int j = 0; j < kLanes; ++j) plane += lanes[o * kLanes + j];
        sums[o] += plane;
      }
    }
    for (int64_t oy = 0; oy < rows.out; ++oy) {
      for (int64_t ox = 0; ox < cols.out; ++ox) {
        out[oy * rows.out_stride + ox * cols.out_stride] = static_cast<float>(sums[oy * cols.out + ox]);
      }
    }
  }

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
                               const std::vector<Slot>& in, const Slot& out, bool contiguous_depthwise_only) {
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
  conv.contiguous_output = along_output && conv.OutputRowsAreContiguous();
  conv.contiguous_window = !along_output && conv.WindowRowsAreContiguous();
  if (contiguous_depthwise_only) {
    // One output feature per group, read from one input feature (a
    // depthwise convolution or its input gradient) or, with batch groups,
    // a depthwise filter gradient.
    const bool depthwise = conv.out_per_group == 1 && (conv.feature_grouped ? conv.in_per_group == 1 : attributes.batch_groups > 1);
    if (!depthwise || !(conv.contiguous_output || conv.contiguous_window)) return nullptr;
    // Rows long enough that the vectorised loops outweigh their setup per
    // row. oneDNN's blocked layout vectorises across features instead,
    // which serves narrow maps better even with the reorders: MobileNet's
    // depthwise layers at 56 columns and below ran 1.2-6x slower here.
    if (std::max(conv.cols.in * conv.cols.base_dilation, conv.cols.out) < kMinDirectRow) return nullptr;
  }
  const Rows& loops = HostRows();
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
        if (conv.contiguous_output) {
          conv.ContiguousAlongOutput(in_plane, kernel, out_plane, loops);
        } else if (conv.contiguous_window) {
          conv.ContiguousAlongWindow(in_plane, kernel, out_plane, loops);
        } else if (along_output) {
          conv.AlongOutput(in_plane, kernel, out_plane);
        } else {
          conv.AlongWindow(in_plane, kernel, out_plane);
        }
      }
    });
  };
}

}  // namespace anvil::cpu
