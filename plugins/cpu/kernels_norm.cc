// Batch normalisation (training, inference, gradient) kernels.
// Statistics accumulate in double per feature; the parallel split is over
// features.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "hlo/attributes.h"
#include "plugins/cpu/isa.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/streamed_stores.h"

namespace anvil::cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;
// Elements of a row normalised into L1 at a time before
// they stream to memory (streamed_stores.h).
constexpr int64_t kStagedElements = 2048;

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

namespace {

// The row loops for baseline x86-64, AVX2 and AVX-512, the CPU's best
// chosen at run time (as for the fused tiles; -ffp-contract=off keeps every
// variant's rounding the same).
namespace baseline {
#include "plugins/cpu/norm_rows.inc"
}  // namespace baseline
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2")
namespace avx2 {
#include "plugins/cpu/norm_rows.inc"
}  // namespace avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw", "prefer-vector-width=512")
namespace avx512 {
#include "plugins/cpu/norm_rows.inc"
}  // namespace avx512
#pragma GCC pop_options
#endif

const baseline::Rows& HostRows() {
  static const baseline::Rows rows = [] {
#if defined(__x86_64__) && defined(__GNUC__)
    if (HostIsa() == Isa::kAvx512) {
      const avx512::Rows r = avx512::Loops();
      return baseline::Rows{r.sum, r.squared_deviations, r.gradient_sums, r.normalise, r.gradient};
    }
    if (HostIsa() == Isa::kAvx2) {
      const avx2::Rows r = avx2::Loops();
      return baseline::Rows{r.sum, r.squared_deviations, r.gradient_sums, r.normalise, r.gradient};
    }
#endif
    return baseline::Loops();
  }();
  return rows;
}

}  // namespace

// batch-norm-training -> (y, mean, var); batch-norm-grad -> (dx, dscale,
// doffset); batch-norm-inference -> y. `out` lists the result leaves.
// Training reads x twice: once for the statistics (each row's mean and
// squared deviations while the row is in cache, combined across rows by
// Chan's rule, which keeps the variance's digits where sum(x^2) - n*mean^2
// would cancel) and once to normalise; the gradient reads x and dy twice.
Kernel BatchNormKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out) {
  const hlo::Shape& xs = i.operands[0]->shape;
  if (xs.element_type() != hlo::ElementType::kF32) return nullptr;
  auto feature = hlo::IntAttribute(i, "feature_index", std::nullopt);
  if (!feature.ok()) return nullptr;
  const double epsilon = std::strtod(hlo::StringAttribute(i, "epsilon").c_str(), nullptr);
  const FeatureLayout L = LayoutOf(xs, *feature);
  const double count = static_cast<double>(L.outer * L.inner);
  const hlo::Opcode op = i.opcode;
  // The normalised y streams past the caches when it and x are too large to
  // stay there for its reader (MobileNet's step: its batch-norm-training
  // steps 663 -> 634 ms, sums of per-step minima). The gradient's dx does
  // not: streaming it measured no faster.
  const int64_t array_bytes = xs.ByteSize();
  // Rows shorter than a cache line (features last) would stream nothing.
  const bool streams = op != hlo::Opcode::kBatchNormGrad && L.inner >= 16 && ResultStreams(array_bytes, 2 * array_bytes);
  return [=](const Frame& frame) {
    const float* x = static_cast<const float*>(frame.At(in[0]));
    const float* scale = static_cast<const float*>(frame.At(in[1]));
    const int64_t n = L.inner;
    auto row = [&](const float* base, int64_t o, int64_t f) { return base + (o * L.features + f) * n; };
    const baseline::Rows& loops = HostRows();
    // A row of y written by `write` (a row loop taking where to write and
    // the range of the row): in place, or staged in L1 and streamed.
    auto write_row = [&](float* result_row, const auto& write) {
      if (!streams) {
        write(result_row, 0, n);
        return;
      }
      alignas(64) float staged[kStagedElements];
      for (int64_t k = 0; k < n; k += kStagedElements) {
        const int64_t len = std::min(kStagedElements, n - k);
        write(staged, k, len);
        StreamTile(staged, result_row + k, len);
      }
    };
    frame.parallel->For(L.features, 1, [&](int64_t f0, int64_t f1) {
      for (int64_t f = f0; f < f1; ++f) {
        double mean = 0, var = 0;
        if (op == hlo::Opcode::kBatchNormInference) {
          mean = static_cast<const float*>(frame.At(in[3]))[f];
          var = static_cast<const float*>(frame.At(in[4]))[f];
        } else if (op == hlo::Opcode::kBatchNormGrad) {
          mean = static_cast<const float*>(frame.At(in[2]))[f];
          var = static_cast<const float*>(frame.At(in[3]))[f];
        } else if (n > 0) {
          double seen = 0, m2 = 0;
          for (int64_t o = 0; o < L.outer; ++o) {
            const float* r = row(x, o, f);
            const double row_mean = loops.sum(r, n) / static_cast<double>(n);
            const double row_m2 = loops.squared_deviations(r, n, row_mean);
            const double total = seen + static_cast<double>(n), delta = row_mean - mean;
            mean += delta * static_cast<double>(n) / total;
            m2 += row_m2 + delta * delta * seen * static_cast<double>(n) / total;
            seen = total;
          }
          var = m2 / count;
        }
        const double inv = 1.0 / std::sqrt(var + epsilon);
        if (op == hlo::Opcode::kBatchNormGrad) {
          const float* dy = static_cast<const float*>(frame.At(in[4]));
          double grad_offset = 0, grad_centered = 0;
          for (int64_t o = 0; o < L.outer; ++o) {
            loops.gradient_sums(row(dy, o, f), row(x, o, f), n, mean, grad_offset, grad_centered);
          }
          const double grad_scale = grad_centered * inv;
          float* dx = static_cast<float*>(frame.At(out[0]));
          const double a = scale[f] * inv, b = grad_offset / count, c = grad_scale / count;
          for (int64_t o = 0; o < L.outer; ++o) {
            loops.gradient(row(x, o, f), row(dy, o, f), dx + (o * L.features + f) * n, n, mean, inv, a, b, c);
          }
          static_cast<float*>(frame.At(out[1]))[f] = static_cast<float>(grad_scale);
          static_cast<float*>(frame.At(out[2]))[f] = static_cast<float>(grad_offset);
          continue;
        }
        const float* offset = static_cast<const float*>(frame.At(in[2]));
        float* y = static_cast<float*>(frame.At(out[0]));
        const double a = scale[f] * inv, shift = offset[f];
        for (int64_t o = 0; o < L.outer; ++o) {
          const float* x_row = row(x, o, f);
          write_row(y + (o * L.features + f) * n,
                    [&](float* to, int64_t k, int64_t len) { loops.normalise(x_row + k, to, len, mean, a, shift); });
        }
        if (op == hlo::Opcode::kBatchNormTraining) {
          static_cast<float*>(frame.At(out[1]))[f] = static_cast<float>(mean);
          static_cast<float*>(frame.At(out[2]))[f] = static_cast<float>(var);
        }
      }
      if (streams) FenceStreamedStores();  // this thread's rows, before its share is done
    });
  };
}

}  // namespace anvil::cpu
