// f32 clamp and batch normalisation (training, inference, gradient) kernels.
// Statistics accumulate in double per feature; the parallel split is over
// features.
#include <cmath>
#include <cstdlib>

#include "hlo/attributes.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;

// x[outer][feature][inner]
struct FeatureLayout {
  int64_t outer = 1, features = 0, inner = 1;
};

FeatureLayout LayoutOf(const hlo::Shape& s, int64_t feature) {
  FeatureLayout l;
  l.features = s.dim(static_cast<int>(feature));
  for (int d = 0; d < s.rank(); ++d) {
    if (d < feature) l.outer *= s.dim(d);
    if (d > feature) l.inner *= s.dim(d);
  }
  return l;
}

}  // namespace

Kernel ClampKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.shape.element_type() != hlo::ElementType::kF32 || in.size() != 3) return nullptr;
  const int64_t n = i.shape.ElementCount();
  const bool lo_scalar = i.operands[0]->shape.rank() == 0, hi_scalar = i.operands[2]->shape.rank() == 0;
  const Slot lo = in[0], x = in[1], hi = in[2];
  return [=](const Frame& frame) {
    const float* l = static_cast<const float*>(frame.At(lo));
    const float* v = static_cast<const float*>(frame.At(x));
    const float* h = static_cast<const float*>(frame.At(hi));
    float* y = static_cast<float*>(frame.At(out));
    frame.parallel->For(n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        const float a = l[lo_scalar ? 0 : k], c = h[hi_scalar ? 0 : k], z = v[k];
        y[k] = std::isnan(z) || std::isnan(a) || std::isnan(c) ? NAN : std::min(std::max(z, a), c);
      }
    });
  };
}

// batch-norm-training -> (y, mean, var); batch-norm-grad -> (dx, dscale,
// doffset); batch-norm-inference -> y. `out` lists the result leaves.
Kernel BatchNormKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out) {
  const hlo::Shape& xs = i.operands[0]->shape;
  if (xs.element_type() != hlo::ElementType::kF32) return nullptr;
  auto feature = hlo::IntAttribute(i, "feature_index", std::nullopt);
  if (!feature.ok()) return nullptr;
  const double epsilon = std::strtod(hlo::StringAttribute(i, "epsilon").c_str(), nullptr);
  const FeatureLayout L = LayoutOf(xs, *feature);
  const double count = static_cast<double>(L.outer * L.inner);
  const hlo::Opcode op = i.opcode;
  return [=](const Frame& frame) {
    const float* x = static_cast<const float*>(frame.At(in[0]));
    const float* scale = static_cast<const float*>(frame.At(in[1]));
    auto at = [&](int64_t o, int64_t f, int64_t k) { return (o * L.features + f) * L.inner + k; };
    frame.parallel->For(L.features, 1, [&](int64_t f0, int64_t f1) {
      for (int64_t f = f0; f < f1; ++f) {
        double mean = 0, var = 0;
        if (op == hlo::Opcode::kBatchNormInference) {
          mean = static_cast<const float*>(frame.At(in[3]))[f];
          var = static_cast<const float*>(frame.At(in[4]))[f];
        } else if (op == hlo::Opcode::kBatchNormGrad) {
          mean = static_cast<const float*>(frame.At(in[2]))[f];
          var = static_cast<const float*>(frame.At(in[3]))[f];
        } else {
          for (int64_t o = 0; o < L.outer; ++o)
            for (int64_t k = 0; k < L.inner; ++k) mean += x[at(o, f, k)];
          mean /= count;
          for (int64_t o = 0; o < L.outer; ++o)
            for (int64_t k = 0; k < L.inner; ++k) {
              const double d = x[at(o, f, k)] - mean;
              var += d * d;
            }
          var /= count;
        }
        const double inv = 1.0 / std::sqrt(var + epsilon);
        if (op == hlo::Opcode::kBatchNormGrad) {
          const float* dy = static_cast<const float*>(frame.At(in[4]));
          double grad_offset = 0, grad_scale = 0;
          for (int64_t o = 0; o < L.outer; ++o)
            for (int64_t k = 0; k < L.inner; ++k) {
              grad_offset += dy[at(o, f, k)];
              grad_scale += dy[at(o, f, k)] * (x[at(o, f, k)] - mean) * inv;
            }
          float* dx = static_cast<float*>(frame.At(out[0]));
          for (int64_t o = 0; o < L.outer; ++o)
            for (int64_t k = 0; k < L.inner; ++k) {
              const double x_hat = (x[at(o, f, k)] - mean) * inv;
              dx[at(o, f, k)] = static_cast<float>(scale[f] * inv *
                                                   (dy[at(o, f, k)] - grad_offset / count - x_hat * grad_scale / count));
            }
          static_cast<float*>(frame.At(out[1]))[f] = static_cast<float>(grad_scale);
          static_cast<float*>(frame.At(out[2]))[f] = static_cast<float>(grad_offset);
          continue;
        }
        const float* offset = static_cast<const float*>(frame.At(in[2]));
        float* y = static_cast<float*>(frame.At(out[0]));
        for (int64_t o = 0; o < L.outer; ++o)
          for (int64_t k = 0; k < L.inner; ++k) {
            y[at(o, f, k)] = static_cast<float>(scale[f] * (x[at(o, f, k)] - mean) * inv + offset[f]);
          }
        if (op == hlo::Opcode::kBatchNormTraining) {
          static_cast<float*>(frame.At(out[1]))[f] = static_cast<float>(mean);
          static_cast<float*>(frame.At(out[2]))[f] = static_cast<float>(var);
        }
      }
    });
  };
}

}  // namespace anvil::cpu
