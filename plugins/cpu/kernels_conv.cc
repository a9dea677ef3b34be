// f32 convolution as im2col + oneDNN sgemm, per batch element and feature
// group, for any dim_labels, strides, padding, dilations and reversal (thin
// groups and tiny outputs go to kernels_conv_direct.cc instead).
// Index tables (which input element feeds which patch column) are built at
// compile time; executing only gathers and multiplies.
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>

#include "hlo/attributes.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/openmp_threads.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

// The attributes of an f32 convolution the kernels take, or nullopt (another
// element type, both kinds of groups, unreadable attributes).
std::optional<ConvolutionAttributes> ReadF32Convolution(const hlo::Instruction& i) {
  using hlo::ElementType;
  if (i.shape.element_type() != ElementType::kF32 || i.operands.size() != 2 ||
      i.operands[0]->shape.element_type() != ElementType::kF32 ||
      i.operands[1]->shape.element_type() != ElementType::kF32) {
    return std::nullopt;
  }
  const hlo::Attribute* labels = i.FindAttribute("dim_labels");
  if (!labels) return std::nullopt;
  auto dn = hlo::ParseDimLabels(labels->value);
  auto groups = hlo::IntAttribute(i, "feature_group_count", 1);
  auto batch_groups = hlo::IntAttribute(i, "batch_group_count", 1);
  if (!dn.ok() || !groups.ok() || !batch_groups.ok() || (*groups != 1 && *batch_groups != 1)) return std::nullopt;
  ConvolutionAttributes attributes{*dn, *groups, *batch_groups, {}};
  attributes.window.resize(dn->input_spatial.size());
  if (const hlo::Attribute* w = i.FindAttribute("window")) {
    auto parsed = hlo::ParseWindow(w->value);
    if (!parsed.ok() || parsed->size() != dn->input_spatial.size()) return std::nullopt;
    attributes.window = *parsed;
  }
  return attributes;
}

}  // namespace

Kernel ConvolutionKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out, Temp* temp,
                         ConvLayoutBook* layouts) {
  const std::optional<ConvolutionAttributes> attributes = ReadF32Convolution(i);
  if (!attributes || in.size() != 2) return nullptr;
  // Wide depthwise convolutions run directly on Anvil's row-major arrays:
  // oneDNN's depthwise kernels take only blocked (or channels-last) layouts,
  // and the reorders in and out cost twice the convolution's own memory
  // traffic (kernels_conv_direct.cc says where that pays).
  if (Kernel depthwise = DirectConvolutionKernel(i, *attributes, in, out, /*contiguous_depthwise_only=*/true)) {
    return depthwise;
  }
  if (Kernel streamed = StreamedPointwiseConvolutionKernel(i, *attributes, in, out)) return streamed;
  if (Kernel library = OnednnConvolutionKernel(i, *attributes, in, out, temp, layouts)) return library;
  if (Kernel direct = DirectConvolutionKernel(i, *attributes, in, out, /*contiguous_depthwise_only=*/false)) return direct;
  const hlo::ConvDimensionNumbers& dn = attributes->dn;
  const std::vector<hlo::WindowDim>& window = attributes->window;
  const size_t spatial = dn.input_spatial.size();
  const auto& ld = i.operands[0]->shape.dims();
  const auto& rd = i.operands[1]->shape.dims();
  const auto& od = i.shape.dims();
  const auto ls = RowMajorStrides(ld), rs = RowMajorStrides(rd), os = RowMajorStrides(od);
  // Output features come in g groups: feature groups (each reading its own
  // slice of input features) or batch groups (each reading its own slice of
  // the input batch); at most one kind is > 1.
  const int64_t bgroups = attributes->batch_groups;
  const int64_t g = attributes->feature_groups * bgroups;
  const int64_t batch = ld[dn.input_batch] / bgroups;  // output batch
  const int64_t cin_g = rd[dn.kernel_input_feature];
  const int64_t cout = rd[dn.kernel_output_feature], cout_g = cout / g;
  const bool feature_grouped = attributes->feature_groups > 1;
  std::vector<int64_t> out_spatial_dims, kernel_spatial_dims;
  for (size_t s = 0; s < spatial; ++s) {
    out_spatial_dims.push_back(od[dn.output_spatial[s]]);
    kernel_spatial_dims.push_back(rd[dn.kernel_spatial[s]]);
  }
  const int64_t positions = std::accumulate(out_spatial_dims.begin(), out_spatial_dims.end(), int64_t{1}, std::multiplies<>());
  const int64_t taps = std::accumulate(kernel_spatial_dims.begin(), kernel_spatial_dims.end(), int64_t{1}, std::multiplies<>());
  if (positions * taps > (int64_t{1} << 28)) return nullptr;  // index table too large: the evaluator's
  // input_offset[p * taps + w]: the input's spatial offset for output position
  // p and kernel tap w, or -1 where the tap reads padding or a dilation hole.
  std::vector<int64_t> input_offset(static_cast<size_t>(positions * taps));
  std::vector<int64_t> output_offset(static_cast<size_t>(positions)), kernel_offset(static_cast<size_t>(taps));
  std::vector<int64_t> p_index(spatial), w_index(spatial);
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p, o_off = 0;
    for (int s = static_cast<int>(spatial) - 1; s >= 0; --s) {
      p_index[s] = rest % out_spatial_dims[s];
      rest /= out_spatial_dims[s];
      o_off += p_index[s] * os[dn.output_spatial[s]];
    }
    output_offset[p] = o_off;
    for (int64_t w = 0; w < taps; ++w) {
      int64_t wrest = w, off = 0;
      bool inside = true;
      for (int s = static_cast<int>(spatial) - 1; s >= 0; --s) {
        w_index[s] = wrest % kernel_spatial_dims[s];
        wrest /= kernel_spatial_dims[s];
        const hlo::WindowDim& wd = window[s];
        int64_t x = p_index[s] * wd.stride + w_index[s] * wd.window_dilation - wd.pad_low;
        if (x < 0 || x % wd.base_dilation != 0 || x / wd.base_dilation >= ld[dn.input_spatial[s]]) {
          inside = false;
        } else {
          off += (x / wd.base_dilation) * ls[dn.input_spatial[s]];
        }
      }
      input_offset[p * taps + w] = inside ? off : -1;
    }
  }
  for (int64_t w = 0; w < taps; ++w) {
    int64_t wrest = w, off = 0;
    for (int s = static_cast<int>(spatial) - 1; s >= 0; --s) {
      int64_t k = wrest % kernel_spatial_dims[s];
      wrest /= kernel_spatial_dims[s];
      if (window[s].reversal) k = kernel_spatial_dims[s] - 1 - k;
      off += k * rs[dn.kernel_spatial[s]];
    }
    kernel_offset[w] = off;
  }
  const int64_t in_batch_stride = ls[dn.input_batch], in_feature_stride = ls[dn.input_feature];
  const int64_t k_in_stride = rs[dn.kernel_input_feature], k_out_stride = rs[dn.kernel_output_feature];
  const int64_t out_batch_stride = os[dn.output_batch], out_feature_stride = os[dn.output_feature];
  const int64_t depth = taps * cin_g;  // the gemm's K
  const Slot lhs = in[0], rhs = in[1], result = out;
  return [=](const Frame& frame) {
    const float* x = static_cast<const float*>(frame.At(lhs));
    const float* k = static_cast<const float*>(frame.At(rhs));
    float* y = static_cast<float*>(frame.At(result));
    // The kernel as g matrices [depth x cout_g].
    std::vector<float> weights(static_cast<size_t>(g * depth * cout_g));
    for (int64_t grp = 0; grp < g; ++grp) {
      for (int64_t w = 0; w < taps; ++w) {
        for (int64_t c = 0; c < cin_g; ++c) {
          for (int64_t o = 0; o < cout_g; ++o) {
            weights[static_cast<size_t>((grp * depth + w * cin_g + c) * cout_g + o)] =
                k[kernel_offset[w] + c * k_in_stride + (grp * cout_g + o) * k_out_stride];
          }
        }
      }
    }
    frame.parallel->For(batch * g, 1, [&](int64_t lo, int64_t hi) {
      // Each item's sgemm on this thread alone, in its float mode: the
      // items are split across the arena already.
      const OpenMpThreads one(1);
      std::vector<float> patches(static_cast<size_t>(positions * depth)), product(static_cast<size_t>(positions * cout_g));
      for (int64_t item = lo; item < hi; ++item) {
        const int64_t b = item / g, grp = item % g;
        const float* base = feature_grouped ? x + b * in_batch_stride + grp * cin_g * in_feature_stride
                                            : x + (grp * batch + b) * in_batch_stride;
        for (int64_t p = 0; p < positions; ++p) {
          float* row = patches.data() + p * depth;
          for (int64_t w = 0; w < taps; ++w) {
            const int64_t off = input_offset[static_cast<size_t>(p * taps + w)];
            for (int64_t c = 0; c < cin_g; ++c) row[w * cin_g + c] = off < 0 ? 0.0f : base[off + c * in_feature_stride];
          }
        }
        dnnl_sgemm('N', 'N', positions, cout_g, depth, 1.0f, patches.data(), depth,
                   weights.data() + grp * depth * cout_g, cout_g, 0.0f, product.data(), cout_g);
        float* dst = y + b * out_batch_stride + grp * cout_g * out_feature_stride;
        for (int64_t p = 0; p < positions; ++p) {
          for (int64_t o = 0; o < cout_g; ++o) {
            dst[output_offset[static_cast<size_t>(p)] + o * out_feature_stride] = product[static_cast<size_t>(p * cout_g + o)];
          }
        }
      }
    });
  };
}

namespace {

// The f32 shapes a bf16 or f16 convolution is computed in, kept alive for
// the kernel's life.
struct WidenedConvolution {
  hlo::Instruction lhs, rhs, conv;
};

template <typename T>
Kernel WidenAround(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out, Temp* temp,
                   ConvLayoutBook* layouts) {
  auto widened = std::make_shared<WidenedConvolution>();
  widened->lhs.shape = i.operands[0]->shape;
  widened->rhs.shape = i.operands[1]->shape;
  widened->conv = i;
  widened->lhs.shape.set_element_type(hlo::ElementType::kF32);
  widened->rhs.shape.set_element_type(hlo::ElementType::kF32);
  widened->conv.shape.set_element_type(hlo::ElementType::kF32);
  widened->conv.operands = {&widened->lhs, &widened->rhs};
  Kernel inner = ConvolutionKernel(widened->conv, {Slot{Slot::Kind::kParameter, 0, 0}, Slot{Slot::Kind::kParameter, 1, 0}},
                                   Slot{Slot::Kind::kOutput, 0, 0}, temp, layouts);
  if (!inner) return nullptr;
  const int64_t lhs_count = i.operands[0]->shape.ElementCount(), rhs_count = i.operands[1]->shape.ElementCount();
  const int64_t out_count = i.shape.ElementCount();
  // The widened operands and f32 result live in the plan's temp region after
  // the f32 convolution's own temporaries (memory the executable keeps, not
  // vectors allocated, zeroed and faulted in at every execution).
  auto floats = [](int64_t count) { return (count * static_cast<int64_t>(sizeof(float)) + 63) / 64 * 64; };
  const int64_t x_at = (temp->bytes + 63) / 64 * 64, y_at = x_at + floats(lhs_count), z_at = y_at + floats(rhs_count);
  temp->bytes = z_at + floats(out_count);
  const Slot a = in[0], b = in[1], c = out, region = temp->slot;
  return [=](const Frame& frame) {
    (void)widened;  // owns the shapes `inner` was built from
    char* base = static_cast<char*>(frame.At(region));
    float* x = reinterpret_cast<float*>(base + x_at);
    float* y = reinterpret_cast<float*>(base + y_at);
    float* z = reinterpret_cast<float*>(base + z_at);
    frame.parallel->For(lhs_count, 1 << 15, [&](int64_t lo, int64_t hi) { WidenToFloat<T>(frame.At(a), x, lo, hi); });
    frame.parallel->For(rhs_count, 1 << 15, [&](int64_t lo, int64_t hi) { WidenToFloat<T>(frame.At(b), y, lo, hi); });
    Frame f32_frame = frame;
    f32_frame.parameters = {x, y};
    f32_frame.outputs = {z};
    inner(f32_frame);
    frame.parallel->For(out_count, 1 << 15, [&](int64_t lo, int64_t hi) { NarrowFromFloat<T>(z, frame.At(c), lo, hi); });
  };
}

}  // namespace

Kernel NarrowFloatConvolutionKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out,
                                    Temp* temp, ConvLayoutBook* layouts) {
  // bf16 and f16 convolutions accumulate in f32, as the reference evaluator
  // computes them: widen, convolve in f32, round once.
  const hlo::ElementType t = i.shape.element_type();
  if (i.operands.size() != 2 || in.size() != 2 || i.operands[0]->shape.element_type() != t ||
      i.operands[1]->shape.element_type() != t) {
    return nullptr;
  }
  if (t == hlo::ElementType::kBF16) return WidenAround<Bf16>(i, in, out, temp, layouts);
  if (t == hlo::ElementType::kF16) return WidenAround<F16>(i, in, out, temp, layouts);
  return nullptr;
}

}  // namespace anvil::cpu
