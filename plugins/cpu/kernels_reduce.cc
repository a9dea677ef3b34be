// Reductions whose body is one commutative binary op (add, multiply, max,
// min, and, or; reducers.h) on one input: the body is recognised at compile
// time and becomes a typed accumulation loop.
#include <cmath>
#include <type_traits>

#include "hlo/attributes.h"
#include "hlo/patterns.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/reducers.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;
using hlo::Opcode;

// Acc: the accumulator's type (double for f32 sums, see ReduceOf).
template <typename T, typename Acc = T, typename Combine>
Kernel Reduce(Slot in, Slot init, Slot out, std::vector<int64_t> kept_dims, std::vector<int64_t> kept_strides,
              std::vector<int64_t> reduced_dims, std::vector<int64_t> reduced_strides, Combine combine) {
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(in));
    const T start = *static_cast<const T*>(frame.At(init));
    T* y = static_cast<T*>(frame.At(out));
    int64_t outputs = 1, inner = 1;
    for (int64_t d : kept_dims) outputs *= d;
    for (int64_t d : reduced_dims) inner *= d;
    const int kept = static_cast<int>(kept_dims.size()), reduced = static_cast<int>(reduced_dims.size());
    const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, inner));
    frame.parallel->For(outputs, grain, [&](int64_t lo, int64_t hi) {
      std::vector<int64_t> index(static_cast<size_t>(kept)), r(static_cast<size_t>(reduced));
      for (int64_t o = lo; o < hi; ++o) {
        int64_t rest = o, base = 0;
        for (int d = kept - 1; d >= 0; --d) {
          base += (rest % kept_dims[d]) * kept_strides[d];
          rest /= kept_dims[d];
        }
        Acc acc = start;
        if (reduced == 1) {
          const int64_t stride = reduced_strides[0];
          for (int64_t k = 0; k < inner; ++k) acc = combine(acc, x[base + k * stride]);
        } else {
          std::fill(r.begin(), r.end(), 0);
          for (int64_t k = 0; k < inner; ++k) {
            int64_t at = base;
            for (int d = 0; d < reduced; ++d) at += r[d] * reduced_strides[d];
            acc = combine(acc, x[at]);
            for (int d = reduced - 1; d >= 0; --d) {
              if (++r[d] < reduced_dims[d]) break;
              r[d] = 0;
            }
          }
        }
        y[o] = static_cast<T>(acc);
      }
    });
  };
}

template <typename T>
Kernel ReduceOf(Opcode op, Slot in, Slot init, Slot out, std::vector<int64_t> kd, std::vector<int64_t> ks,
                std::vector<int64_t> rd, std::vector<int64_t> rs) {
  if constexpr (std::is_same_v<T, float>) {
    // f32 sums carry a double and round once: a batch-norm or bias
    // gradient sums a million terms, where an f32 running sum loses up to
    // n/2 ULP to rounding.
    if (op == Opcode::kAdd) {
      return Reduce<T, double>(in, init, out, kd, ks, rd, rs, [](double a, double b) { return a + b; });
    }
  }
  Kernel kernel;
  reducer::Visit<T>(op, [&](auto combine) { kernel = Reduce<T>(in, init, out, kd, ks, rd, rs, combine); });
  return kernel;
}

// bf16 and f16 reductions round every step, as the evaluator's bf16 and
// f16 arithmetic does: each step in f32, rounded once (reducers.h's ops).
template <typename N>
Kernel NarrowReduceOf(Opcode op, Slot in, Slot init, Slot out, std::vector<int64_t> kd, std::vector<int64_t> ks,
                      std::vector<int64_t> rd, std::vector<int64_t> rs) {
  Kernel kernel;
  reducer::Visit<float>(op, [&](auto f) { kernel = Reduce<N>(in, init, out, kd, ks, rd, rs, ThroughFloat<N>(f)); });
  return kernel;
}

}  // namespace

Kernel ReduceKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.operands.size() != 2 || !i.shape.IsArray() || i.called_computations.size() != 1) return nullptr;
  auto op = hlo::SingleOpReducer(*i.called_computations[0]);
  if (!op) return nullptr;
  auto reduced = hlo::IntListAttribute(i, "dimensions");
  if (!reduced.ok()) return nullptr;
  const auto& dims = i.operands[0]->shape.dims();
  std::vector<int64_t> strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  std::vector<int64_t> kd, ks, rd, rs;
  for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
    bool is_reduced = std::find(reduced->begin(), reduced->end(), d) != reduced->end();
    (is_reduced ? rd : kd).push_back(dims[d]);
    (is_reduced ? rs : ks).push_back(strides[d]);
  }
  if (rd.empty()) return nullptr;
  switch (i.shape.element_type()) {
    case ElementType::kBF16: return NarrowReduceOf<Bf16>(*op, in[0], in[1], out, kd, ks, rd, rs);
    case ElementType::kF16: return NarrowReduceOf<F16>(*op, in[0], in[1], out, kd, ks, rd, rs);
    default:
      return reducer::ForNativeType<Kernel>(i.shape.element_type(), [&]<typename T>() {
        return ReduceOf<T>(*op, in[0], in[1], out, kd, ks, rd, rs);
      });
  }
}

}  // namespace anvil::cpu
