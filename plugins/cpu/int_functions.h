// Integer elementwise ops as HLO defines them, one functor each, shared by
// the one-op kernels (kernels_elementwise.cc) and the fused loops' tiles
// (fused_tiles.inc), so that both compute the same bits. Arithmetic wraps
// (it is done unsigned: signed overflow is undefined in C++); shifts by the
// width or more, and division by zero or of the most negative value by -1,
// give what XLA gives, as the reference evaluator does.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "hlo/opcode.h"

namespace anvil::cpu::int_fn {

template <typename T>
using Unsigned = std::make_unsigned_t<T>;
template <typename T>
constexpr Unsigned<T> kBits = sizeof(T) * 8;

struct Add { template <typename T> T operator()(T x, T y) const { return T(Unsigned<T>(x) + Unsigned<T>(y)); } };
struct Subtract { template <typename T> T operator()(T x, T y) const { return T(Unsigned<T>(x) - Unsigned<T>(y)); } };
struct Multiply {
  // Unsigned types narrower than int promote to int, whose product may overflow.
  template <typename T> T operator()(T x, T y) const { return T(1u * Unsigned<T>(x) * Unsigned<T>(y)); }
};
struct Maximum { template <typename T> T operator()(T x, T y) const { return x > y ? x : y; } };
struct Minimum { template <typename T> T operator()(T x, T y) const { return x < y ? x : y; } };
struct And { template <typename T> T operator()(T x, T y) const { return T(x & y); } };
struct Or { template <typename T> T operator()(T x, T y) const { return T(x | y); } };
struct Xor { template <typename T> T operator()(T x, T y) const { return T(x ^ y); } };
struct ShiftLeft {
  template <typename T> T operator()(T x, T y) const {
    return Unsigned<T>(y) >= kBits<T> ? T(0) : T(Unsigned<T>(x) << Unsigned<T>(y));
  }
};
struct ShiftRightLogical {
  template <typename T> T operator()(T x, T y) const {
    return Unsigned<T>(y) >= kBits<T> ? T(0) : T(Unsigned<T>(x) >> Unsigned<T>(y));
  }
};
struct ShiftRightArithmetic {
  template <typename T> T operator()(T x, T y) const {
    using S = std::make_signed_t<T>;
    if (Unsigned<T>(y) >= kBits<T>) return S(x) < 0 ? T(~Unsigned<T>(0)) : T(0);
    return T(S(x) >> Unsigned<T>(y));
  }
};
struct Divide {
  template <typename T> T operator()(T x, T y) const {
    if (y == 0) return T(~Unsigned<T>(0));
    if (std::is_signed_v<T> && x == std::numeric_limits<T>::min() && y == T(-1)) return x;
    return T(x / y);
  }
};
struct Remainder {
  template <typename T> T operator()(T x, T y) const {
    if (y == 0) return x;
    if (std::is_signed_v<T> && x == std::numeric_limits<T>::min() && y == T(-1)) return T(0);
    return T(x % y);
  }
};
// Division of 32-bit integers by a divisor known when the loop is built
// (JAX's `x % 13`, index arithmetic), as multiplications and shifts, which
// vectorise, where the division instruction does not (and takes 10-20
// cycles an element). Unsigned: Granlund and Montgomery's method
// ("Division by invariant integers using multiplication", 1994, fig. 4.1),
// exact for every 32-bit x and every divisor from 1 to 2^32 - 1. Signed:
// the magnitude's unsigned quotient, negated when the signs differ, which
// truncates toward zero as HLO's division does, and wraps the most
// negative value divided by -1 to itself, as XLA does. Divide and
// Remainder above remain for a divisor of 0 and for divisors read from
// memory.
struct ConstantDivisor {
  uint32_t magic = 0;       // m' = floor(2^32 (2^l - |d|) / |d|) + 1, l = ceil(log2 |d|)
  uint32_t shift1 = 0, shift2 = 0;  // min(l, 1) and max(l - 1, 0)
  uint32_t bits = 0;        // d's two's complement bits
  bool negative = false;    // d < 0 (signed divisors)

  // `d` is the divisor's value (signed or not as the type is); d != 0.
  static ConstantDivisor Of(int64_t d, bool is_signed) {
    ConstantDivisor c;
    c.bits = static_cast<uint32_t>(d);
    c.negative = is_signed && static_cast<int32_t>(c.bits) < 0;
    const uint64_t magnitude = c.negative ? uint64_t{0} - static_cast<int64_t>(static_cast<int32_t>(c.bits)) : c.bits;
    uint32_t l = 0;
    while ((uint64_t{1} << l) < magnitude) ++l;
    c.magic = static_cast<uint32_t>((((uint64_t{1} << l) - magnitude) << 32) / magnitude + 1);
    c.shift1 = l < 1 ? l : 1;
    c.shift2 = l > 0 ? l - 1 : 0;
    return c;
  }
  uint32_t DivideUnsigned(uint32_t x) const {
    const uint32_t t = static_cast<uint32_t>((uint64_t{x} * magic) >> 32);
    return (t + ((x - t) >> shift1)) >> shift2;
  }
  template <typename T> T Quotient(T x) const {
    if constexpr (std::is_unsigned_v<T>) {
      return DivideUnsigned(x);
    } else {
      const uint32_t magnitude = x < 0 ? 0u - static_cast<uint32_t>(x) : static_cast<uint32_t>(x);
      const uint32_t q = DivideUnsigned(magnitude);
      return static_cast<T>((x < 0) != negative ? 0u - q : q);
    }
  }
  template <typename T> T Remainder(T x) const {
    return static_cast<T>(static_cast<uint32_t>(x) - static_cast<uint32_t>(Quotient(x)) * bits);
  }
};

struct Negate { template <typename T> T operator()(T x) const { return T(Unsigned<T>(0) - Unsigned<T>(x)); } };
struct Not { template <typename T> T operator()(T x) const { return T(~x); } };

// f32 to an integer type as XLA defines it: NaN is 0, values past the
// type's range saturate, others truncate toward zero. The range's ends
// (-2^(w-1), or 0, and 2^w or 2^(w-1) past it) are powers of two, exact in
// float, so the compares need no double, and a loop of it is a vector loop
// of clamps and truncations (f32 to s8 of 2M elements: 4.4 ms through
// double, 1.5 ms so).
template <typename To>
To FromFloat(float x) {
  if constexpr (sizeof(To) < 4) {
    // Both ends of an 8- or 16-bit range are floats: clamp, then truncate
    // through int32 (x86 converts float to int32 in one instruction, and
    // the narrowing is a pack), with no compare made a byte mask.
    constexpr float lo = static_cast<float>(std::numeric_limits<To>::min());
    constexpr float hi = static_cast<float>(std::numeric_limits<To>::max());
    float clamped = x < lo ? lo : x;
    clamped = clamped > hi ? hi : clamped;
    return static_cast<To>(static_cast<int32_t>(x != x ? 0.0f : clamped));
  }
  constexpr float lo = static_cast<float>(std::numeric_limits<To>::min());
  constexpr float past =
      std::is_signed_v<To> ? -lo : 2.0f * (static_cast<float>(std::numeric_limits<To>::max() / 2) + 1.0f);
  // What is truncated is always in range (the cast of anything else is
  // undefined): x > lo ? x : lo is one vector maximum, which also takes NaN
  // to lo, and a value past the range becomes lo too; the two selects after
  // the truncation give NaN and the values past the range their results.
  // The same results as picking the input first (checked on every float,
  // for s32, u32, s64 and u64) with half the vector instructions: an f32
  // to s32 loop, in cache, 0.63 -> 0.11 ns per element with AVX-512.
  float inside = x > lo ? x : lo;
  inside = inside < past ? inside : lo;
  const To truncated = static_cast<To>(inside);
  const To saturated = x >= past ? std::numeric_limits<To>::max() : truncated;
  return x != x ? To(0) : saturated;
}

// Calls visit(functor) for the binary integer op `op`; false when it is none.
template <typename Visit>
bool VisitIntBinary(hlo::Opcode op, Visit&& visit) {
  using hlo::Opcode;
  switch (op) {
    case Opcode::kAdd: visit(Add{}); return true;
    case Opcode::kSubtract: visit(Subtract{}); return true;
    case Opcode::kMultiply: visit(Multiply{}); return true;
    case Opcode::kMaximum: visit(Maximum{}); return true;
    case Opcode::kMinimum: visit(Minimum{}); return true;
    case Opcode::kAnd: visit(And{}); return true;
    case Opcode::kOr: visit(Or{}); return true;
    case Opcode::kXor: visit(Xor{}); return true;
    case Opcode::kShiftLeft: visit(ShiftLeft{}); return true;
    case Opcode::kShiftRightLogical: visit(ShiftRightLogical{}); return true;
    case Opcode::kShiftRightArithmetic: visit(ShiftRightArithmetic{}); return true;
    case Opcode::kDivide: visit(Divide{}); return true;
    case Opcode::kRemainder: visit(Remainder{}); return true;
    default: return false;
  }
}

// Negate and not (the unary ops every integer type has).
template <typename Visit>
bool VisitIntUnary(hlo::Opcode op, Visit&& visit) {
  switch (op) {
    case hlo::Opcode::kNegate: visit(Negate{}); return true;
    case hlo::Opcode::kNot: visit(Not{}); return true;
    default: return false;
  }
}

}  // namespace anvil::cpu::int_fn
