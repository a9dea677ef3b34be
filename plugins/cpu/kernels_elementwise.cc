// Typed elementwise kernels. The operation and the element type are chosen
// here, at compile time; the loops they produce are plain and vectorisable.
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hlo/attributes.h"
#include "hlo/scalar_functions.h"
#include "plugins/cpu/f16_conversions.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/float_functions.h"
#include "plugins/cpu/int_functions.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;
using hlo::Opcode;

constexpr int64_t kGrain = 1 << 15;

template <typename In, typename Out, typename F>
Kernel Unary(Slot a, Slot o, int64_t n, F f) {
  return [=](const Frame& frame) {
    const In* x = static_cast<const In*>(frame.At(a));
    Out* y = static_cast<Out*>(frame.At(o));
    frame.parallel->For(n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) y[k] = f(x[k]);
    });
  };
}

template <typename In, typename Out, typename F>
Kernel Binary(Slot a, Slot b, Slot o, int64_t n, F f) {
  return [=](const Frame& frame) {
    const In* x = static_cast<const In*>(frame.At(a));
    const In* y = static_cast<const In*>(frame.At(b));
    Out* z = static_cast<Out*>(frame.At(o));
    frame.parallel->For(n, kGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) z[k] = f(x[k], y[k]);
    });
  };
}

// An op in double by the evaluator's own functions (hlo/scalar_functions):
// elements of T widened to double (`widen`, exact) and the result rounded
// back (`narrow`) as the evaluator rounds it; nullptr for an op without one.
template <typename T, typename Widen, typename Narrow>
Kernel RealInDouble(Opcode op, const std::vector<Slot>& in, Slot o, int64_t n, Widen widen, Narrow narrow) {
  if (in.size() == 1) {
    if (hlo::RealUnaryFunction f = hlo::RealUnaryOf(op)) {
      return Unary<T, T>(in[0], o, n, [=](T x) { return narrow(f(widen(x))); });
    }
  } else if (in.size() == 2) {
    if (hlo::RealBinaryFunction f = hlo::RealBinaryOf(op)) {
      return Binary<T, T>(in[0], in[1], o, n, [=](T x, T y) { return narrow(f(widen(x), widen(y))); });
    }
  }
  return nullptr;
}

// The f32 and f64 ops float_functions.h has no function of its own for
// (atan2, asin, acosh...), as the evaluator computes them.
template <typename T>
Kernel FloatInDouble(Opcode op, const std::vector<Slot>& in, Slot o, int64_t n) {
  return RealInDouble<T>(op, in, o, n, [](T x) { return static_cast<double>(x); },
                         [](double v) { return static_cast<T>(v); });
}

template <typename T>
Kernel FloatBinary(Opcode op, Slot a, Slot b, Slot o, int64_t n) {
  Kernel kernel;
  VisitFloatBinary(op, [&](auto f) { kernel = Binary<T, T>(a, b, o, n, f); });
  if (!kernel) kernel = FloatInDouble<T>(op, {a, b}, o, n);
  return kernel;
}

// Every other bf16 and f16 op the evaluator computes in double (exp, tanh,
// power, atan2...): the same function (hlo/scalar_functions) on the exactly
// widened value and the same one rounding (hlo::EncodeFloat), so the result
// is the evaluator's bit for bit, without its literals per step.
template <typename N>
Kernel NarrowFloatInDouble(Opcode op, ElementType type, const std::vector<Slot>& in, Slot o, int64_t n) {
  const hlo::FloatFormat* format = hlo::Info(type).float_format;
  if (!format) return nullptr;
  return RealInDouble<N>(op, in, o, n, [](N x) { return static_cast<double>(ToFloat(x)); },
                         [format](double v) { return N{static_cast<uint16_t>(hlo::EncodeFloat(*format, v))}; });
}

// reduce-precision of f32, f64, bf16 and f16 by the evaluator's own
// function (hlo::ReducePrecision), 16-bit results rounded back as it rounds
// them. Bit counts outside what the type has are left to the evaluator.
Kernel ReducePrecisionKernel(const hlo::Instruction& i, ElementType t, Slot a, Slot o, int64_t n) {
  auto exponent = hlo::IntAttribute(i, "exponent_bits", std::nullopt);
  auto mantissa = hlo::IntAttribute(i, "mantissa_bits", std::nullopt);
  if (!exponent.ok() || !mantissa.ok()) return nullptr;
  const int e = static_cast<int>(*exponent), m = static_cast<int>(*mantissa);
  const int type_exponent = t == ElementType::kF64 ? 11 : 8, type_mantissa = t == ElementType::kF64 ? 52 : 23;
  if (e < 1 || e > type_exponent || m < 0 || m > type_mantissa) return nullptr;
  switch (t) {
    case ElementType::kF32:
      return Unary<float, float>(a, o, n, [=](float x) { return static_cast<float>(hlo::ReducePrecision(x, t, e, m)); });
    case ElementType::kF64:
      return Unary<double, double>(a, o, n, [=](double x) { return hlo::ReducePrecision(x, t, e, m); });
    case ElementType::kBF16:
    case ElementType::kF16: {
      const hlo::FloatFormat* format = hlo::Info(t).float_format;
      auto narrow = [=](double v) { return static_cast<uint16_t>(hlo::EncodeFloat(*format, v)); };
      if (t == ElementType::kBF16) {
        return Unary<Bf16, Bf16>(a, o, n, [=](Bf16 x) { return Bf16{narrow(hlo::ReducePrecision(ToFloat(x), t, e, m))}; });
      }
      return Unary<F16, F16>(a, o, n, [=](F16 x) { return F16{narrow(hlo::ReducePrecision(ToFloat(x), t, e, m))}; });
    }
    default: return nullptr;
  }
}

// c64 and c128 elementwise ops as the evaluator computes them: in
// std::complex<double> by the same functions (hlo/scalar_functions), each
// part rounded once to the type, so the results are its, bit for bit.
template <typename Part>
Kernel ComplexElementwise(Opcode op, const std::vector<Slot>& in, Slot o, int64_t n) {
  using Stored = std::complex<Part>;
  using C = std::complex<double>;
  auto store = [](C v) { return Stored(static_cast<Part>(v.real()), static_cast<Part>(v.imag())); };
  if (in.size() == 1) {
    if (hlo::ComplexUnaryFunction f = hlo::ComplexUnaryOf(op)) {
      return Unary<Stored, Stored>(in[0], o, n, [=](Stored x) { return store(f(C(x.real(), x.imag()))); });
    }
  } else if (in.size() == 2) {
    if (hlo::ComplexBinaryFunction f = hlo::ComplexBinaryOf(op)) {
      return Binary<Stored, Stored>(in[0], in[1], o, n, [=](Stored x, Stored y) {
        return store(f(C(x.real(), x.imag()), C(y.real(), y.imag())));
      });
    }
  }
  return nullptr;
}

// abs of c64 (to f32) and c128 (to f64). A c64's parts squared and summed
// in double lose nothing to overflow or underflow, so sqrt of that sum is
// the evaluator's hypot in double, and both round to the same float (which
// a hypot call per element, 28 ns, is not: abs of a 2048 x 513 spectrum
// went from 28 ms to under 1). An infinite part makes infinity, NaN or
// not, as hypot does. c128 keeps hypot, whose squares could overflow.
Kernel ComplexAbs(ElementType t, Slot a, Slot o, int64_t n) {
  if (t == ElementType::kC64) {
    return Unary<std::complex<float>, float>(a, o, n, [](std::complex<float> x) {
      const double re = x.real(), im = x.imag();
      const double h = std::sqrt(re * re + im * im);
      return static_cast<float>(std::isinf(re) || std::isinf(im) ? std::numeric_limits<double>::infinity() : h);
    });
  }
  if (t == ElementType::kC128) return Unary<std::complex<double>, double>(a, o, n, [](std::complex<double> x) { return std::abs(x); });
  return nullptr;
}

// bf16 and f16 arithmetic computed in f32 and rounded once: for add,
// subtract, multiply and divide f32 has more than twice their precision
// plus two bits, so the two roundings give the correctly rounded result;
// maximum, minimum, negate and abs are exact. bf16's transcendental math
// runs in f32 (Bf16MathInFloat); other ops go through double
// (NarrowFloatInDouble).
template <typename N>
Kernel NarrowFloatArithmetic(Opcode op, ElementType type, const std::vector<Slot>& in, Slot o, int64_t n) {
  auto narrow = [](float x) { return RoundFromFloat<N>(x); };
  Kernel kernel;
  const bool exact_binary = op == Opcode::kAdd || op == Opcode::kSubtract || op == Opcode::kMultiply ||
                            op == Opcode::kDivide || op == Opcode::kMaximum || op == Opcode::kMinimum;
  if (exact_binary && in.size() == 2) {
    VisitFloatBinary(op, [&](auto f) { kernel = Binary<N, N>(in[0], in[1], o, n, ThroughFloat<N>(f)); });
  } else if (in.size() == 1 &&
             (op == Opcode::kNegate || op == Opcode::kAbs || (std::is_same_v<N, Bf16> && Bf16MathInFloat(op)))) {
    VisitFloatUnary(op, [&](auto f) { kernel = Unary<N, N>(in[0], o, n, [=](N x) { return narrow(f(ToFloat(x))); }); });
  }
  if (!kernel) kernel = NarrowFloatInDouble<N>(op, type, in, o, n);
  return kernel;
}

template <typename T>
Kernel FloatUnary(Opcode op, Slot a, Slot o, int64_t n) {
  if (op == Opcode::kIsFinite) return Unary<T, uint8_t>(a, o, n, [](T x) { return uint8_t(std::isfinite(x)); });
  Kernel kernel;
  VisitFloatUnary(op, [&](auto f) { kernel = Unary<T, T>(a, o, n, f); });
  if (!kernel) kernel = FloatInDouble<T>(op, {a}, o, n);
  return kernel;
}

// Signed and unsigned integers, as int_functions.h defines them.
template <typename T>
Kernel IntBinary(Opcode op, Slot a, Slot b, Slot o, int64_t n) {
  Kernel k;
  int_fn::VisitIntBinary(op, [&](auto f) { k = Binary<T, T>(a, b, o, n, [f](T x, T y) { return f(x, y); }); });
  return k;
}

template <typename T>
Kernel IntUnary(Opcode op, Slot a, Slot o, int64_t n) {
  using U = std::make_unsigned_t<T>;
  Kernel k;
  if (int_fn::VisitIntUnary(op, [&](auto f) { k = Unary<T, T>(a, o, n, [f](T x) { return f(x); }); })) return k;
  switch (op) {
    case Opcode::kCopy: return Unary<T, T>(a, o, n, [](T x) { return x; });
    case Opcode::kAbs:
      if constexpr (std::is_signed_v<T>) return Unary<T, T>(a, o, n, [](T x) { return x < 0 ? T(U(0) - U(x)) : x; });
      return nullptr;
    default: return nullptr;
  }
}

template <typename T>
Kernel Compare(const std::string& direction, Slot a, Slot b, Slot o, int64_t n) {
  if (direction == "EQ") return Binary<T, uint8_t>(a, b, o, n, [](T x, T y) { return uint8_t(x == y); });
  if (direction == "NE") return Binary<T, uint8_t>(a, b, o, n, [](T x, T y) { return uint8_t(x != y); });
  if (direction == "LT") return Binary<T, uint8_t>(a, b, o, n, [](T x, T y) { return uint8_t(x < y); });
  if (direction == "LE") return Binary<T, uint8_t>(a, b, o, n, [](T x, T y) { return uint8_t(x <= y); });
  if (direction == "GT") return Binary<T, uint8_t>(a, b, o, n, [](T x, T y) { return uint8_t(x > y); });
  if (direction == "GE") return Binary<T, uint8_t>(a, b, o, n, [](T x, T y) { return uint8_t(x >= y); });
  return nullptr;
}

template <typename T>
Kernel Select(Slot p, Slot a, Slot b, Slot o, int64_t n) {
  return [=](const Frame& frame) {
    const uint8_t* c = static_cast<const uint8_t*>(frame.At(p));
    const T* x = static_cast<const T*>(frame.At(a));
    const T* y = static_cast<const T*>(frame.At(b));
    T* z = static_cast<T*>(frame.At(o));
    frame.parallel->For(n, kGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) z[k] = c[k] ? x[k] : y[k];
    });
  };
}

template <typename From, typename To>
Kernel Convert(Slot a, Slot o, int64_t n) {
  return Unary<From, To>(a, o, n, [](From x) { return static_cast<To>(x); });
}

// Calls fn.template operator()<T>() for T matching `t`, for the types with
// typed kernels; returns nullptr for the others.
template <typename Fn>
Kernel ForType(ElementType t, Fn fn) {
  switch (t) {
    case ElementType::kF32: return fn.template operator()<float>();
    case ElementType::kF64: return fn.template operator()<double>();
    case ElementType::kS8: return fn.template operator()<int8_t>();
    case ElementType::kS16: return fn.template operator()<int16_t>();
    case ElementType::kS32: return fn.template operator()<int32_t>();
    case ElementType::kS64: return fn.template operator()<int64_t>();
    case ElementType::kU8: return fn.template operator()<uint8_t>();
    case ElementType::kU16: return fn.template operator()<uint16_t>();
    case ElementType::kU32: return fn.template operator()<uint32_t>();
    case ElementType::kU64: return fn.template operator()<uint64_t>();
    case ElementType::kPred: return fn.template operator()<uint8_t>();
    default: return nullptr;
  }
}

// Float to integer as XLA defines it: NaN is 0, values past the type's
// range saturate, others truncate toward zero.
template <typename To>
To SaturatingFromDouble(double x) {
  if (std::isnan(x)) return To(0);
  constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
  // 2^w (unsigned) or 2^(w-1) (signed): the first value past the range, exact in double.
  constexpr double past = std::is_signed_v<To> ? -lo : 2.0 * (static_cast<double>(std::numeric_limits<To>::max() / 2) + 1);
  if (x <= lo) return std::numeric_limits<To>::min();
  if (x >= past) return std::numeric_limits<To>::max();
  return static_cast<To>(std::trunc(x));
}

template <typename From, typename Read>
Kernel FloatToInteger(ElementType to, Slot a, Slot o, int64_t n, Read read) {
  return ForType(to, [&]<typename To>() -> Kernel {
    if constexpr (std::is_integral_v<To>) {
      if (to == ElementType::kPred) return Unary<From, uint8_t>(a, o, n, [read](From x) { return uint8_t(read(x) != 0); });
      return Unary<From, To>(a, o, n, [read](From x) { return SaturatingFromDouble<To>(read(x)); });
    }
    return nullptr;
  });
}

template <typename From>
Kernel ConvertFrom(ElementType to, Slot a, Slot o, int64_t n) {
  if (std::is_same_v<From, float> && to != ElementType::kPred && to != ElementType::kF32 && to != ElementType::kF64) {
    return ForType(to, [&]<typename To>() -> Kernel {
      if constexpr (std::is_integral_v<To>) {
        return Unary<float, To>(a, o, n, [](float x) { return int_fn::FromFloat<To>(x); });
      }
      return nullptr;
    });
  }
  if (std::is_floating_point_v<From> && to != ElementType::kF32 && to != ElementType::kF64) {
    return FloatToInteger<From>(to, a, o, n, [](From x) { return static_cast<double>(x); });
  }
  if (to == ElementType::kPred) {
    return Unary<From, uint8_t>(a, o, n, [](From x) { return uint8_t(x != From(0)); });
  }
  return ForType(to, [&]<typename To>() -> Kernel { return Convert<From, To>(a, o, n); });
}

// Converts to and from c64 and c128 as the evaluator does: complex to
// complex part by part; a real value (float or integer, widened to double
// first) becomes the real part, with a zero imaginary part; complex to f32
// or f64 keeps the real part. Complex to integers, pred or 16-bit floats is
// left to the evaluator.
Kernel ComplexConvert(ElementType from, ElementType to, Slot a, Slot o, int64_t n) {
  using C64 = std::complex<float>;
  using C128 = std::complex<double>;
  const bool from_complex = from == ElementType::kC64 || from == ElementType::kC128;
  const bool to_complex = to == ElementType::kC64 || to == ElementType::kC128;
  if (!from_complex && !to_complex) return nullptr;
  // A real value of type From, widened to double, as the real part.
  auto real_to_complex = [&]<typename From>(auto widen) -> Kernel {
    if (to == ElementType::kC64) {
      return Unary<From, C64>(a, o, n, [=](From x) { return C64(static_cast<float>(widen(x)), 0.0f); });
    }
    return Unary<From, C128>(a, o, n, [=](From x) { return C128(widen(x), 0.0); });
  };
  auto exact = [](auto x) { return static_cast<double>(x); };
  if (from_complex && to_complex) {
    if (from == to && from == ElementType::kC64) return Unary<C64, C64>(a, o, n, [](C64 x) { return x; });
    if (from == to) return Unary<C128, C128>(a, o, n, [](C128 x) { return x; });
    if (from == ElementType::kC64) return Unary<C64, C128>(a, o, n, [](C64 x) { return C128(x.real(), x.imag()); });
    return Unary<C128, C64>(a, o, n, [](C128 x) { return C64(static_cast<float>(x.real()), static_cast<float>(x.imag())); });
  }
  if (from_complex) {
    if (to == ElementType::kF32) {
      if (from == ElementType::kC64) return Unary<C64, float>(a, o, n, [](C64 x) { return x.real(); });
      return Unary<C128, float>(a, o, n, [](C128 x) { return static_cast<float>(x.real()); });
    }
    if (to == ElementType::kF64) {
      if (from == ElementType::kC64) return Unary<C64, double>(a, o, n, [](C64 x) { return static_cast<double>(x.real()); });
      return Unary<C128, double>(a, o, n, [](C128 x) { return x.real(); });
    }
    return nullptr;
  }
  if (from == ElementType::kBF16) return real_to_complex.template operator()<Bf16>([](Bf16 x) { return static_cast<double>(ToFloat(x)); });
  if (from == ElementType::kF16) return real_to_complex.template operator()<F16>([](F16 x) { return static_cast<double>(ToFloat(x)); });
  return ForType(from, [&]<typename From>() -> Kernel { return real_to_complex.template operator()<From>(exact); });
}

// A conversion of whole arrays (f16_conversions.h's), chunk by chunk.
template <typename In, typename Out, typename F>
Kernel ArrayConversion(Slot a, Slot o, int64_t n, F convert) {
  return [=](const Frame& frame) {
    const In* x = static_cast<const In*>(frame.At(a));
    Out* y = static_cast<Out*>(frame.At(o));
    frame.parallel->For(n, kGrain, [&](int64_t b, int64_t e) { convert(x + b, y + b, e - b); });
  };
}

// Converts to and from the 16-bit floats through f32, which holds every
// bf16 and f16 value exactly: widening is exact, and narrowing from f32 (or
// between bf16 and f16) rounds once, to nearest even. Narrowing from f64
// would round twice through f32: left to the evaluator.
Kernel NarrowFloatConvert(ElementType from, ElementType to, Slot a, Slot o, int64_t n) {
  const bool from_narrow = from == ElementType::kBF16 || from == ElementType::kF16;
  const bool to_narrow = to == ElementType::kBF16 || to == ElementType::kF16;
  if (!from_narrow && !to_narrow) return nullptr;
  auto widen = [&]<typename N>() -> Kernel {
    if (to == ElementType::kF32) return Unary<N, float>(a, o, n, [](N x) { return ToFloat(x); });
    if (to == ElementType::kF64) return Unary<N, double>(a, o, n, [](N x) { return double(ToFloat(x)); });
    if (to == ElementType::kBF16) return Unary<N, Bf16>(a, o, n, [](N x) { return ToBf16(ToFloat(x)); });
    if (to == ElementType::kF16) return Unary<N, F16>(a, o, n, [](N x) { return ToF16(ToFloat(x)); });
    return nullptr;
  };
  const bool to_integer = !to_narrow && to != ElementType::kF32 && to != ElementType::kF64;
  if (from == ElementType::kBF16 && to_integer) {
    return FloatToInteger<Bf16>(to, a, o, n, [](Bf16 x) { return static_cast<double>(ToFloat(x)); });
  }
  if (from == ElementType::kF16 && to_integer) {
    return FloatToInteger<F16>(to, a, o, n, [](F16 x) { return static_cast<double>(ToFloat(x)); });
  }
  if (from == ElementType::kBF16) return widen.template operator()<Bf16>();
  if (from == ElementType::kF16 && to == ElementType::kF32) {
    return ArrayConversion<F16, float>(a, o, n, [](const F16* x, float* y, int64_t m) { WidenF16(x, y, m); });
  }
  if (from == ElementType::kF16) return widen.template operator()<F16>();
  // Integers of up to 16 bits are exact in f32: one rounding, to the narrow float.
  const bool small_int = from == ElementType::kS8 || from == ElementType::kU8 || from == ElementType::kS16 ||
                         from == ElementType::kU16;
  if (small_int && to_narrow) {
    return ForType(from, [&]<typename I>() -> Kernel {
      if (to == ElementType::kBF16) return Unary<I, Bf16>(a, o, n, [](I x) { return ToBf16(float(x)); });
      return Unary<I, F16>(a, o, n, [](I x) { return ToF16(float(x)); });
    });
  }
  if (from == ElementType::kF32 && to == ElementType::kBF16) return Unary<float, Bf16>(a, o, n, [](float x) { return ToBf16(x); });
  if (from == ElementType::kF32 && to == ElementType::kF16) {
    return ArrayConversion<float, F16>(a, o, n, [](const float* x, F16* y, int64_t m) { NarrowToF16(x, y, m); });
  }
  return nullptr;
}

}  // namespace

Kernel ElementwiseKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (!i.shape.IsArray()) return nullptr;
  const int64_t n = i.shape.ElementCount();
  const Opcode op = i.opcode;
  if (in.empty() || i.operands.empty()) return nullptr;
  const ElementType t = i.operands[0]->shape.element_type();
  const bool is_float = t == ElementType::kF32 || t == ElementType::kF64;
  const bool is_pred = t == ElementType::kPred;
  if (op == Opcode::kSelect) {
    if (i.operands[0]->shape.rank() != i.shape.rank()) return nullptr;
    // Select moves the bytes an element is stored in (sub-byte values sit
    // one to a byte), whatever they mean: any element of 1, 2, 4, 8 or 16 bytes.
    switch (hlo::Info(i.shape.element_type()).byte_size) {
      case 1: return Select<uint8_t>(in[0], in[1], in[2], out, n);
      case 2: return Select<uint16_t>(in[0], in[1], in[2], out, n);
      case 4: return Select<uint32_t>(in[0], in[1], in[2], out, n);
      case 8: return Select<uint64_t>(in[0], in[1], in[2], out, n);
      case 16: return Select<Bytes16>(in[0], in[1], in[2], out, n);
      default: return nullptr;
    }
  }
  if (op == Opcode::kConvert) {
    if (Kernel complex = ComplexConvert(t, i.shape.element_type(), in[0], out, n)) return complex;
    if (Kernel narrow = NarrowFloatConvert(t, i.shape.element_type(), in[0], out, n)) return narrow;
    return ForType(t, [&]<typename From>() -> Kernel { return ConvertFrom<From>(i.shape.element_type(), in[0], out, n); });
  }
  if (op == Opcode::kCompare) {
    if (!hlo::StringAttribute(i, "type").empty() && hlo::StringAttribute(i, "type") != "FLOAT" &&
        hlo::StringAttribute(i, "type") != "SIGNED" && hlo::StringAttribute(i, "type") != "UNSIGNED") {
      return nullptr;  // TOTALORDER: the evaluator's
    }
    const std::string direction = hlo::StringAttribute(i, "direction");
    return ForType(t, [&]<typename T>() -> Kernel { return Compare<T>(direction, in[0], in[1], out, n); });
  }
  if (op == Opcode::kAbs && in.size() == 1 && hlo::IsComplex(t)) return ComplexAbs(t, in[0], out, n);
  if (i.shape.element_type() != t && op != Opcode::kIsFinite) return nullptr;
  if (op == Opcode::kReducePrecision) return ReducePrecisionKernel(i, t, in[0], out, n);
  if (t == ElementType::kC64) return ComplexElementwise<float>(op, in, out, n);
  if (t == ElementType::kC128) return ComplexElementwise<double>(op, in, out, n);
  if (t == ElementType::kBF16) return NarrowFloatArithmetic<Bf16>(op, t, in, out, n);
  if (t == ElementType::kF16) return NarrowFloatArithmetic<F16>(op, t, in, out, n);
  if (hlo::IsElementwiseBinary(op) && in.size() == 2) {
    if (is_float) {
      return t == ElementType::kF32 ? FloatBinary<float>(op, in[0], in[1], out, n)
                                    : FloatBinary<double>(op, in[0], in[1], out, n);
    }
    if (is_pred) {
      // pred: add is or, multiply is and.
      Opcode logical = op == Opcode::kAdd ? Opcode::kOr : (op == Opcode::kMultiply ? Opcode::kAnd : op);
      if (logical != Opcode::kAnd && logical != Opcode::kOr && logical != Opcode::kXor) return nullptr;
      return IntBinary<uint8_t>(logical, in[0], in[1], out, n);
    }
    return ForType(t, [&]<typename T>() -> Kernel {
      if constexpr (std::is_integral_v<T>) return IntBinary<T>(op, in[0], in[1], out, n);
      return nullptr;
    });
  }
  if (hlo::IsElementwiseUnary(op) && in.size() == 1) {
    if (is_float) {
      return t == ElementType::kF32 ? FloatUnary<float>(op, in[0], out, n) : FloatUnary<double>(op, in[0], out, n);
    }
    if (is_pred) {
      if (op == Opcode::kNot) return Unary<uint8_t, uint8_t>(in[0], out, n, [](uint8_t x) { return uint8_t(!x); });
      if (op == Opcode::kCopy) return Unary<uint8_t, uint8_t>(in[0], out, n, [](uint8_t x) { return x; });
      return nullptr;
    }
    return ForType(t, [&]<typename T>() -> Kernel {
      if constexpr (std::is_integral_v<T>) return IntUnary<T>(op, in[0], out, n);
      return nullptr;
    });
  }
  return nullptr;
}

}  // namespace anvil::cpu
