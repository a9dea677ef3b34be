// The chlo functions of real arguments that reach the IR as custom calls
// ("chlo.lgamma", "chlo.igamma", ...), of f64, f32, bf16 and f16: each
// element widened exactly to double, the evaluator's own function
// (hlo::ChloRealOf) applied, and the result rounded once as the evaluator
// rounds it, so the kernel's bits are the evaluator's, without its
// literals per step; chlo.next_after on the elements' bits, as the
// evaluator steps them, and chlo.mulhi of 8- to 64-bit integers. Elements
// are split across the arena.
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/literal.h"
#include "hlo/scalar_functions.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;

// Series and continued fractions: hundreds of operations an element.
constexpr int64_t kGrain = 1 << 10;

// Whether the first `count` operands are arrays of the result's type and
// dimensions, the evaluator reading operand k's element e for result
// element e (and each has a slot).
bool ReadsElementwise(const hlo::Instruction& i, const std::vector<Slot>& in, size_t count) {
  if (i.operands.size() < count || in.size() < count) return false;
  for (size_t k = 0; k < count; ++k) {
    const hlo::Shape& s = i.operands[k]->shape;
    if (!s.IsArray() || s.element_type() != i.shape.element_type() || s.dims() != i.shape.dims()) return false;
  }
  return true;
}

template <typename T, typename Widen, typename Narrow>
Kernel ChloOf(hlo::ChloReal real, std::vector<Slot> in, Slot out, int64_t n, Widen widen, Narrow narrow) {
  return [=](const Frame& frame) {
    const T* args[3] = {nullptr, nullptr, nullptr};
    for (size_t k = 0; k < real.arity; ++k) args[k] = static_cast<const T*>(frame.At(in[k]));
    T* result = static_cast<T*>(frame.At(out));
    frame.parallel->For(n, kGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t e = lo; e < hi; ++e) {
        const double a = widen(args[0][e]);
        const double b = real.arity > 1 ? widen(args[1][e]) : 0.0;
        const double c = real.arity > 2 ? widen(args[2][e]) : 0.0;
        result[e] = narrow(real.fn(a, b, c));
      }
    });
  };
}

template <typename N>
Kernel NarrowChlo(hlo::ChloReal real, const std::vector<Slot>& in, Slot out, int64_t n, ElementType type) {
  const hlo::FloatFormat* format = hlo::Info(type).float_format;
  if (!format) return nullptr;
  return ChloOf<N>(real, in, out, n, [](N x) { return static_cast<double>(ToFloat(x)); },
                   [format](double v) { return N{static_cast<uint16_t>(hlo::EncodeFloat(*format, v))}; });
}

// next_after(x, y): the value after x toward y in x's format; y where they
// are equal; the type's canonical NaN (the evaluator's, read off a
// literal) where either is NaN. U holds an element's bits.
template <typename T, typename U, typename Widen>
Kernel NextAfterOf(ElementType type, Slot x_slot, Slot y_slot, Slot out, int64_t n, Widen widen) {
  hlo::Literal nan_literal(hlo::Shape(type, {}));
  nan_literal.SetNan(0, false, std::nullopt);
  const U nan = static_cast<U>(nan_literal.GetBits(0));
  constexpr U kSign = static_cast<U>(U{1} << (8 * sizeof(U) - 1));
  return [=](const Frame& frame) {
    const T* xs = static_cast<const T*>(frame.At(x_slot));
    const T* ys = static_cast<const T*>(frame.At(y_slot));
    T* result = static_cast<T*>(frame.At(out));
    frame.parallel->For(n, kGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t e = lo; e < hi; ++e) {
        const double x = widen(xs[e]), y = widen(ys[e]);
        U bits;
        if (std::isnan(x) || std::isnan(y)) {
          bits = nan;
        } else if (x == y) {
          std::memcpy(&bits, &ys[e], sizeof bits);
        } else if (x == 0) {
          bits = static_cast<U>((std::signbit(y) ? kSign : U{0}) | U{1});
        } else {
          std::memcpy(&bits, &xs[e], sizeof bits);
          bits = (x < y) == (x > 0) ? static_cast<U>(bits + 1) : static_cast<U>(bits - 1);
        }
        std::memcpy(&result[e], &bits, sizeof bits);
      }
    });
  };
}

Kernel NextAfterKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  const ElementType t = i.shape.element_type();
  if (i.operands.size() != 2 || !ReadsElementwise(i, in, 2)) return nullptr;
  const int64_t n = i.shape.ElementCount();
  switch (t) {
    case ElementType::kF64:
      return NextAfterOf<double, uint64_t>(t, in[0], in[1], out, n, [](double v) { return v; });
    case ElementType::kF32:
      return NextAfterOf<float, uint32_t>(t, in[0], in[1], out, n, [](float v) { return static_cast<double>(v); });
    case ElementType::kBF16:
      return NextAfterOf<Bf16, uint16_t>(t, in[0], in[1], out, n, [](Bf16 v) { return static_cast<double>(ToFloat(v)); });
    case ElementType::kF16:
      return NextAfterOf<F16, uint16_t>(t, in[0], in[1], out, n, [](F16 v) { return static_cast<double>(ToFloat(v)); });
    default: return nullptr;
  }
}

// mulhi(x, y) of integers of width w: the high w bits of the 2w-bit product
// (signed or not, as the type is), as the evaluator computes it.
template <typename T>
Kernel MulHiOf(Slot x_slot, Slot y_slot, Slot out, int64_t n) {
  using Wide = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
  return [=](const Frame& frame) {
    const T* xs = static_cast<const T*>(frame.At(x_slot));
    const T* ys = static_cast<const T*>(frame.At(y_slot));
    T* result = static_cast<T*>(frame.At(out));
    frame.parallel->For(n, int64_t{1} << 15, [&](int64_t lo, int64_t hi) {
      for (int64_t e = lo; e < hi; ++e) {
        result[e] = static_cast<T>((static_cast<Wide>(xs[e]) * static_cast<Wide>(ys[e])) >> (8 * sizeof(T)));
      }
    });
  };
}

Kernel MulHiKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  const ElementType t = i.shape.element_type();
  if (i.operands.size() != 2 || !ReadsElementwise(i, in, 2)) return nullptr;
  const int64_t n = i.shape.ElementCount();
  switch (t) {
    case ElementType::kS8: return MulHiOf<int8_t>(in[0], in[1], out, n);
    case ElementType::kS16: return MulHiOf<int16_t>(in[0], in[1], out, n);
    case ElementType::kS32: return MulHiOf<int32_t>(in[0], in[1], out, n);
    case ElementType::kS64: return MulHiOf<int64_t>(in[0], in[1], out, n);
    case ElementType::kU8: return MulHiOf<uint8_t>(in[0], in[1], out, n);
    case ElementType::kU16: return MulHiOf<uint16_t>(in[0], in[1], out, n);
    case ElementType::kU32: return MulHiOf<uint32_t>(in[0], in[1], out, n);
    case ElementType::kU64: return MulHiOf<uint64_t>(in[0], in[1], out, n);
    default: return nullptr;  // sub-byte integers stay with the evaluator
  }
}

}  // namespace

Kernel ChloKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  const std::string target = hlo::StringAttribute(i, "custom_call_target");
  if (target.rfind("chlo.", 0) != 0 || !i.shape.IsArray()) return nullptr;
  if (target == "chlo.next_after") return NextAfterKernel(i, in, out);
  if (target == "chlo.mulhi") return MulHiKernel(i, in, out);
  const hlo::ChloReal real = hlo::ChloRealOf(std::string_view(target).substr(5));
  if (!real.fn || !ReadsElementwise(i, in, real.arity)) return nullptr;
  const ElementType t = i.shape.element_type();
  const int64_t n = i.shape.ElementCount();
  const std::vector<Slot> args(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(real.arity));
  switch (t) {
    case ElementType::kF64:
      return ChloOf<double>(real, args, out, n, [](double x) { return x; }, [](double v) { return v; });
    case ElementType::kF32:
      return ChloOf<float>(real, args, out, n, [](float x) { return static_cast<double>(x); },
                           [](double v) { return static_cast<float>(v); });
    case ElementType::kBF16: return NarrowChlo<Bf16>(real, args, out, n, t);
    case ElementType::kF16: return NarrowChlo<F16>(real, args, out, n, t);
    default: return nullptr;
  }
}

}  // namespace anvil::cpu
