// The binary ops a reduction, reduce-window or scatter body may be (the
// bodies hlo::SingleOpReducer recognises), as function objects on one
// element type, computing what the reference evaluator computes: integers
// wrap, float maximum and minimum propagate NaN and order -0 below +0, and
// pred add and multiply are or and and.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "hlo/opcode.h"

namespace anvil::cpu::reducer {

// Integer arithmetic in an unsigned type at least as wide as int, where
// overflow wraps instead of being undefined.
template <typename T>
using Wrapping = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

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
    if constexpr (std::is_floating_point_v<T>) {
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
    if constexpr (std::is_floating_point_v<T>) {
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

}  // namespace anvil::cpu::reducer
