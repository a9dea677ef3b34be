// Clamp: f32 branch-free, so that it vectorises; f64, bf16 and f16 as the
// evaluator computes it (in double, NaN anywhere giving NaN, rounded once
// to the type, so bit for bit its result); integers by min and max. A
// scalar bound is read once for every element.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;

// y[k] = f(lo, x, hi) over n elements, the bounds scalar or not.
template <typename T, typename F>
Kernel ClampLoop(const std::vector<Slot>& in, const Slot& out, int64_t n, bool lo_scalar, bool hi_scalar, F f) {
  const Slot lo = in[0], x = in[1], hi = in[2];
  return [=](const Frame& frame) {
    const T* l = static_cast<const T*>(frame.At(lo));
    const T* v = static_cast<const T*>(frame.At(x));
    const T* h = static_cast<const T*>(frame.At(hi));
    T* y = static_cast<T*>(frame.At(out));
    frame.parallel->For(n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) y[k] = f(l[lo_scalar ? 0 : k], v[k], h[hi_scalar ? 0 : k]);
    });
  };
}

double ClampInDouble(double l, double v, double h) {
  return std::isnan(v) || std::isnan(l) || std::isnan(h) ? std::nan("") : std::min(std::max(v, l), h);
}

template <typename N>
Kernel NarrowClamp(hlo::ElementType type, const std::vector<Slot>& in, const Slot& out, int64_t n, bool ls, bool hs) {
  const hlo::FloatFormat* format = hlo::Info(type).float_format;
  return ClampLoop<N>(in, out, n, ls, hs, [format](N l, N v, N h) {
    return N{static_cast<uint16_t>(hlo::EncodeFloat(
        *format, ClampInDouble(static_cast<double>(ToFloat(l)), static_cast<double>(ToFloat(v)),
                               static_cast<double>(ToFloat(h)))))};
  });
}

template <typename I>
Kernel IntegerClamp(const std::vector<Slot>& in, const Slot& out, int64_t n, bool ls, bool hs) {
  return ClampLoop<I>(in, out, n, ls, hs, [](I l, I v, I h) { return std::min(std::max(v, l), h); });
}

}  // namespace

Kernel ClampKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (in.size() != 3 || !i.shape.IsArray()) return nullptr;
  for (const hlo::Instruction* o : i.operands) {
    if (o->shape.element_type() != i.shape.element_type()) return nullptr;
  }
  const int64_t n = i.shape.ElementCount();
  const bool ls = i.operands[0]->shape.rank() == 0, hs = i.operands[2]->shape.rank() == 0;
  using hlo::ElementType;
  switch (i.shape.element_type()) {
    case ElementType::kF32:
      return ClampLoop<float>(in, out, n, ls, hs, [](float a, float z, float c) {
        // Branch-free so that it vectorises; a NaN anywhere gives NaN.
        const float low = z < a ? a : z, clamped = low > c ? c : low;
        return (z != z) | (a != a) | (c != c) ? std::numeric_limits<float>::quiet_NaN() : clamped;
      });
    case ElementType::kF64: return ClampLoop<double>(in, out, n, ls, hs, &ClampInDouble);
    case ElementType::kBF16: return NarrowClamp<Bf16>(ElementType::kBF16, in, out, n, ls, hs);
    case ElementType::kF16: return NarrowClamp<F16>(ElementType::kF16, in, out, n, ls, hs);
    case ElementType::kS8: return IntegerClamp<int8_t>(in, out, n, ls, hs);
    case ElementType::kS16: return IntegerClamp<int16_t>(in, out, n, ls, hs);
    case ElementType::kS32: return IntegerClamp<int32_t>(in, out, n, ls, hs);
    case ElementType::kS64: return IntegerClamp<int64_t>(in, out, n, ls, hs);
    case ElementType::kU8: return IntegerClamp<uint8_t>(in, out, n, ls, hs);
    case ElementType::kU16: return IntegerClamp<uint16_t>(in, out, n, ls, hs);
    case ElementType::kU32: return IntegerClamp<uint32_t>(in, out, n, ls, hs);
    case ElementType::kU64: return IntegerClamp<uint64_t>(in, out, n, ls, hs);
    default: return nullptr;  // pred, sub-byte and complex clamps: the evaluator's
  }
}

}  // namespace anvil::cpu
