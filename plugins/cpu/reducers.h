// The binary ops a reduction, reduce-window or scatter body may be (the
// bodies hlo::SingleOpReducer recognises), as function objects on one
// element type, computing what the reference evaluator computes: integers
// wrap, float maximum and minimum propagate NaN and order -0 below +0, and
// pred add and multiply are or and and.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "hlo/element_type.h"
#include "hlo/opcode.h"

namespace anvil::cpu::reducer {

// Integer arithmetic in an unsigned type at least as wide as int, where
// overflow wraps instead of being undefined.
template <typename T>
using Wrapping = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// std::signbit as a compare of the bits as a signed integer, which GCC
// vectorises as one instruction (std::signbit cost a tall max 60%).
template <typename T>
bool SignBitSet(T v) {
  using Signed = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  return std::bit_cast<Signed>(v) < 0;
}

template <typename T>
struct Add {
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) {
      return a || b;
    } else if constexpr (std::is_integral_v<T>) {
      return T(Wrapping<T>(a) + Wrapping<T>(b));
    } else {
      return a + b;
    }
  }
};

template <typename T>
struct Multiply {
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) {
      return a && b;
    } else if constexpr (std::is_integral_v<T>) {
      return T(Wrapping<T>(a) * Wrapping<T>(b));
    } else {
      return a * b;
    }
  }
};

template <typename T>
struct Maximum {
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      // Of two equal values the one without a sign bit: +0 over -0, and
      // with subnormals flushed (flush_denormals), where they compare equal
      // to zero, the operand the elementwise maximum (float_functions.h)
      // picks; always one of the operands. One mask and one select: with an
      // early return and std::signbit GCC's vector loop spent 20
      // instructions, most of them on mask registers, per 16 floats (a tall
      // [1M, 8]'s max was bound by them); this is 8.
      const bool pick_a = (a > b) | ((a == b) & !SignBitSet(a));  // no short circuit: one mask
      const T value = pick_a ? a : b;
      return a != a || b != b ? std::numeric_limits<T>::quiet_NaN() : value;
    } else if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
      return (a == 0 && b == 0) ? (std::signbit(a) ? b : a) : (a > b ? a : b);
    } else {
      return a > b ? a : b;
    }
  }
};

template <typename T>
struct Minimum {
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      // As Maximum: of two equal values the one with a sign bit.
      const bool pick_a = (a < b) | ((a == b) & SignBitSet(a));
      const T value = pick_a ? a : b;
      return a != a || b != b ? std::numeric_limits<T>::quiet_NaN() : value;
    } else if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
      return (a == 0 && b == 0) ? (std::signbit(a) ? a : b) : (a < b ? a : b);
    } else {
      return a < b ? a : b;
    }
  }
};

template <typename T>
struct And {
  T operator()(T a, T b) const { return T(a & b); }
};

template <typename T>
struct Or {
  T operator()(T a, T b) const { return T(a | b); }
};

// Calls visit(functor) for `op` on T and returns true, or returns false
// when T has no such op (and/or of floats, anything else).
template <typename T, typename F>
bool Visit(hlo::Opcode op, F&& visit) {
  using hlo::Opcode;
  switch (op) {
    case Opcode::kAdd: visit(Add<T>{}); return true;
    case Opcode::kMultiply: visit(Multiply<T>{}); return true;
    case Opcode::kMaximum: visit(Maximum<T>{}); return true;
    case Opcode::kMinimum: visit(Minimum<T>{}); return true;
    case Opcode::kAnd:
      if constexpr (std::is_integral_v<T>) {
        visit(And<T>{});
        return true;
      }
      return false;
    case Opcode::kOr:
      if constexpr (std::is_integral_v<T>) {
        visit(Or<T>{});
        return true;
      }
      return false;
    default: return false;
  }
}

// Calls fn.template operator()<T>() for the element types the reducers take
// as they are (f32, f64, every integer width, pred as bool) and returns
// its result, or a default R for any other type.
template <typename R, typename Fn>
R ForNativeType(hlo::ElementType t, Fn fn) {
  using hlo::ElementType;
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
    case ElementType::kPred: return fn.template operator()<bool>();
    default: return R{};
  }
}

}  // namespace anvil::cpu::reducer
