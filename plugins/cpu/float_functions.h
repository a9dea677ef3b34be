// The CPU plugin's floating-point elementwise functions, one function object
// per HLO op, shared by the one-op kernels (kernels_elementwise.cc) and the
// fused loops (kernels_fused.cc) so that fusing an op never changes a bit of
// its result. VisitFloatUnary / VisitFloatBinary call `visit` with the
// function object of `op` and return false for ops they do not have.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hlo/attributes.h"
#include "hlo/ir.h"
#include "hlo/opcode.h"

namespace anvil::cpu {

// a*b + c rounded once. Every instruction set the plugin compiles its loops
// for computes the same bits with it: an FMA instruction where the target
// has one (the AVX2 and AVX-512 loops), glibc's exactly rounded fmaf where
// it has not (the baseline x86-64 build), never a multiply and an add (the
// kernels are built with -ffp-contract=off, so a*b + c written out stays
// two roundings everywhere). A polynomial step in one instruction is a
// quarter to a third fewer instructions in the functions below: the f32
// exp went from 0.54 to 0.40 ns per element per core with AVX-512. The
// price is on CPUs without AVX2 and FMA (x86-64 before 2013, or a virtual
// CPU hiding FMA): there the loops of these functions call fmaf per step
// and no longer vectorise, about ten times slower (exp 2.6 -> 27 ns per
// element), and so do the one-op kernels (kernels_elementwise.cc, built
// for the baseline only) where a loop of one cannot be built. Same bits on
// every CPU was kept over speed on those.
inline float MulAdd(float a, float b, float c) { return std::fma(a, b, c); }

// c0 x^k + c1 x^(k-1) + ... + ck by Horner's rule, a MulAdd per
// coefficient after the first: ((c0 x + c1) x + c2) ...
template <typename... C>
inline float Horner(float x, float c0, C... rest) {
  float p = c0;
  ((p = MulAdd(p, x, rest)), ...);
  return p;
}

// e^r - 1 for |r| <= ln2/2 by its Taylor polynomial to r^7 in fused
// multiply-adds (truncation under 0.05 ulp of e^r), kept apart from the 1
// (ExpFloatParts adds it last, TanhFloat scales it).
inline float Expm1Reduced(float r) {
  const float p = Horner(r, 1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f);
  return MulAdd(p * r, r, r);
}

// e^x as p 2^n_low 2^n_high, ExpFloat's parts (below), for a caller that
// multiplies p by something before the scales (ErfcFloat, whose product
// may be subnormal: scaled last, it rounds once).
struct ExpParts {
  float p, low_scale, high_scale;
};
inline ExpParts ExpFloatParts(float x) {
  x = x < -104.0f ? -104.0f : x;
  x = x > 89.0f ? 89.0f : x;
  constexpr float kShift = 0x1.8p23f;
  const float t = MulAdd(x, 1.44269502f, kShift);
  const float n = t - kShift;
  const float r = MulAdd(n, -1.42860677e-6f, MulAdd(n, -0.693145752f, x));
  const float p = Expm1Reduced(r) + 1.0f;
  int32_t t_bits, shift_bits;
  std::memcpy(&t_bits, &t, sizeof t);
  std::memcpy(&shift_bits, &kShift, sizeof kShift);
  const int32_t n_int = t_bits - shift_bits;  // in [-150, 129]
  const int32_t n_low = n_int >> 1, n_high = n_int - n_low;
  const uint32_t low_bits = static_cast<uint32_t>(n_low + 127) << 23;
  const uint32_t high_bits = static_cast<uint32_t>(n_high + 127) << 23;
  ExpParts parts;
  parts.p = p;
  std::memcpy(&parts.low_scale, &low_bits, sizeof parts.low_scale);
  std::memcpy(&parts.high_scale, &high_bits, sizeof parts.high_scale);
  return parts;
}

// e^x in single precision, with no call and no branch, so that loops
// calling it vectorise at the width of floats. x = n*ln2 + r
// with |r| <= ln2/2: n by the round-to-nearest shift of 1.5*2^23, r by
// Cody-Waite with ln2 split in two (the first part has 16 significant bits,
// so n * part is exact for the n that occur), e^r by its Taylor polynomial
// to r^7 (truncation under 0.05 ulp) in fused multiply-adds (MulAdd, the
// same bits on every instruction set), and 2^n as two halves so that
// subnormal results round once. Within one ulp of the correctly rounded
// value for every float (checked exhaustively); x is clamped to
// [-104, 89], beyond which results are 0 and infinity anyway; NaN stays
// NaN.
inline float ExpFloat(float x) {
  const ExpParts e = ExpFloatParts(x);
  return e.p * e.low_scale * e.high_scale;
}

// The logistic function 1 / (1 + e^-x) in single precision, branch free:
// with e = e^-|x| in (0, 1] (ExpFloat), 1 / (1 + e) for x >= 0 and
// e / (1 + e) below, so that neither overflows nor cancels. Within two
// ulps of the correctly rounded value for every float (checked
// exhaustively; one in about 17,000 is two ulps off), as tanh is. In
// double, through an exp in double and a double divide, it was within one
// ulp but half as wide a vector and over twice the time (a fused loop's
// logistic: 2.2 ms over 2^21 floats).
inline float LogisticFloat(float x) {
  const float e = ExpFloat(-std::fabs(x));
  return (x < 0.0f ? e : 1.0f) / (1.0f + e);
}

// y = n*ln2 + r with |r| <= ln2/2, as TanhFloat and Expm1Float reduce:
// n by the round-to-nearest shift of 1.5*2^23, r by Cody-Waite with ln2
// split in two (as ExpFloat), and 2^n built from its exponent bits, for n
// in [-126, 127]. kFused: in fused multiply-adds (TanhFloat), or in
// separate multiplies and adds (Expm1Float, below).
struct Ln2Reduced {
  float r, scale;  // r, and 2^n
};
template <bool kFused>
inline Ln2Reduced ReduceByLn2(float y) {
  constexpr float kShift = 0x1.8p23f;
  const float t = kFused ? MulAdd(y, 1.44269502f, kShift) : y * 1.44269502f + kShift;
  const float n = t - kShift;
  Ln2Reduced out;
  out.r = kFused ? MulAdd(n, -1.42860677e-6f, MulAdd(n, -0.693145752f, y))
                 : (y - n * 0.693145752f) - n * 1.42860677e-6f;
  int32_t t_bits, shift_bits;
  std::memcpy(&t_bits, &t, sizeof t);
  std::memcpy(&shift_bits, &kShift, sizeof kShift);
  const uint32_t scale_bits = static_cast<uint32_t>(t_bits - shift_bits + 127) << 23;
  std::memcpy(&out.scale, &scale_bits, sizeof out.scale);
  return out;
}

// tanh of a float in single precision, branch free, from e^2|x| - 1 as
// ExpFloat computes it: with y = 2|x| = n*ln2 + r (n >= 0), e^y - 1 =
// 2^n (e^r - 1) + (2^n - 1), two terms that are never of opposite sign, so
// nothing cancels, and tanh|x| = (e^y - 1) / (e^y + 1). One exp, one divide
// and no second polynomial: 40% fewer instructions than a polynomial near 0
// beside 1 - 2 / (e^y + 1) (the elementwise chain's tanh went from 0.54 to
// 0.33 ns per element per core with AVX-512). Within two ulps of the
// correctly rounded value for every float (checked exhaustively; one in
// about 3,000 is two ulps off). |x| is clamped to 9.1, beyond which tanh
// rounds to 1 and e^y would overflow; -0, tiny values, infinities and NaN
// come out as tanh's.
inline float TanhFloat(float x) {
  float a = std::fabs(x);
  a = a > 9.1f ? 9.1f : a;
  const auto [r, scale] = ReduceByLn2<true>(a + a);  // 2^n, n in [0, 13]
  const float expm1 = MulAdd(Expm1Reduced(r), scale, scale - 1.0f);
  return std::copysign(expm1 / (expm1 + 2.0f), x);
}

// ln x in single precision, with no call and no branch, so that loops
// calling it vectorise (std::log is a call per element). x = 2^k m with m
// in [sqrt(1/2), sqrt(2)), found on the bits (subnormals scaled by 2^23
// first); with f = m - 1 and s = f / (2 + f), ln m = 2 atanh s = f - f^2/2
// + s (f^2/2 + R(s^2)), R a minimax polynomial in s^2 of degree 4 (the
// classic single-precision coefficients), and k ln 2 added in two parts
// (the first exact in k). Within one ulp of the correctly rounded value
// for every float (checked exhaustively); 0 gives -inf, negatives NaN, +inf
// and NaN themselves. No fused multiply-add, so every instruction set gives the
// same bits.
inline float LogFloat(float x) {
  const bool tiny = x < 0x1p-126f;
  const float scaled = tiny ? x * 0x1p23f : x;
  uint32_t bits;
  std::memcpy(&bits, &scaled, sizeof bits);
  constexpr uint32_t kHalfRoot2Bits = 0x3f3504f3;  // sqrt(1/2), the bottom of m's range
  // Unsigned, so that a negative x (whose result is NaN anyway) wraps
  // rather than overflows; the exponent is the signed difference's top bits.
  const uint32_t offset = bits - kHalfRoot2Bits;
  const int32_t k = (static_cast<int32_t>(offset) >> 23) - (tiny ? 23 : 0);
  const uint32_t m_bits = (offset & 0x7fffffu) + kHalfRoot2Bits;
  float m;
  std::memcpy(&m, &m_bits, sizeof m);
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s, w = z * z;
  const float r = z * (0.66666662693f + w * 0.28498786688f) + w * (0.40000972152f + w * 0.24279078841f);
  const float half_f2 = 0.5f * f * f;
  const float kf = static_cast<float>(k);
  float y = kf * 6.9313812256e-01f - ((half_f2 - (s * (half_f2 + r) + kf * 9.0580006145e-06f)) - f);
  y = x == std::numeric_limits<float>::infinity() ? x : y;
  y = x == 0.0f ? -std::numeric_limits<float>::infinity() : y;
  y = x < 0.0f ? std::numeric_limits<float>::quiet_NaN() : y;
  return x != x ? x : y;
}

// ln(1 + x) in single precision, branch free: u = 1 + x rounded, and
// ln(1 + x) = ln u + ln(1 + e/u) ~ ln u + e/u, where e = x - (u - 1) is
// what rounding u lost (exact while |x| < 1). Where u rounds to 1, x
// itself (keeping -0). Within one ulp of the correctly rounded value for
// every float (checked exhaustively); -1 gives -inf, below it NaN.
inline float Log1pFloat(float x) {
  const float u = 1.0f + x;
  const bool corrects = u != 1.0f && u != 0.0f && u < std::numeric_limits<float>::infinity() && u > 0.0f;
  const float e = corrects ? (x - (u - 1.0f)) / u : 0.0f;
  const float y = LogFloat(u) + e;
  return u == 1.0f ? x : y;
}

// e^x - 1 in single precision, branch free, as TanhFloat computes e^y - 1:
// x = n*ln2 + r, e^x - 1 = 2^n (e^r - 1) + (2^n - 1), with e^r - 1 by its
// Taylor polynomial to r^8 (so that near 0, where the result is r's own
// polynomial, nothing cancels) and 2^n - 1 exact. The two terms never
// cancel by more than a bit: for n >= 1, 2^n - 1 >= 2^(n-1) outweighs
// 2^n |e^r - 1| <= 0.3 * 2^n, and for n <= -1 the result is below
// e^(-ln2/2) - 1. x is clamped to [-30, 88], below which the result rounds
// to -1; above 88 it is ExpFloat's e^x, from which 1 is lost in rounding;
// below 2^-25 in magnitude it is x itself (keeping -0). Within one ulp of
// the correctly rounded value for every float (checked exhaustively).
// std::expm1 is a call per element: 24 ms over 2^21 floats, against 1 ms
// for ExpFloat. Unlike exp and tanh, in separate multiplies and adds (but
// above 88, where it is ExpFloat's e^x, fused as that is): in
// fused multiply-adds it is within one ulp too, and more often correctly
// rounded, but its last bit moves on about 3.4 million floats, one of them
// in StableHLO's sin_complex64_20_20, whose expected value (about 5 x 10^4,
// checked to 1e-4) has this rounding's bits; expm1 is rarely the time of
// a loop, so it keeps them.
inline float Expm1Float(float x) {
  float c = x < -30.0f ? -30.0f : x;
  c = c > 88.0f ? 88.0f : c;
  const auto [r, scale] = ReduceByLn2<false>(c);  // 2^n, n in [-43, 127]
  float p = 1.0f / 40320;
  p = p * r + 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r * r + r;  // e^r - 1
  const float y = p * scale + (scale - 1.0f);
  const float large = ExpFloat(x);
  const float z = x > 88.0f ? large : y;
  return std::fabs(x) < 0x1p-25f ? x : z;
}

// erf in single precision, branch free, from two polynomials fitted here
// (Chebyshev fits in double, coefficients rounded to float), both computed
// for every lane and one selected:
// - |x| <= 1: x + x P(x^2), P of degree 6 with P(0) = 2/sqrt(pi) - 1, so
//   that the leading x is added exactly rather than multiplied;
// - 1 < |x| <= 3.92: Q(t) of degree 15 in t = (|x| - 2.46) / 1.46, which maps
//   the interval onto [-1, 1];
// - beyond 3.92, erf rounds to +-1 (1 - erf < 2^-25).
// Within two ulps of the correctly rounded value for every float (checked
// exhaustively: 99% exact, 43 floats of each sign two ulps off); -0, tiny values,
// infinities and NaN come out as erf's. std::erf is a call per element,
// and an unfused erf split GELU's loop in three: 10 ms over 2^21 floats,
// against 1 ms for the whole fused GELU.
inline float ErfFloat(float x) {
  const float a = std::fabs(x);
  const float u = a * a;
  const float p = Horner(u, 7.882500444e-05f, -8.018859014e-04f, 5.189312812e-03f, -2.685432954e-02f,
                         1.128359749e-01f, -3.761262691e-01f, 1.28379166e-01f);
  const float near_zero = MulAdd(a, p, a);
  const float c = a > 3.92f ? 3.92f : a;
  const float t = (c - 2.46f) * 0.684931507f;
  float q = Horner(t, -1.071529883e-04f, 2.188413989e-04f, 4.148101975e-04f, -1.625864427e-03f,
                   9.846714609e-04f, 3.337015326e-03f, -8.570699140e-03f, 7.347636479e-03f, 6.306895658e-03f,
                   -2.844764744e-02f, 4.514657786e-02f, -4.504726202e-02f, 3.059628106e-02f, -1.392898387e-02f,
                   3.878204232e-03f, 9.994966464e-01f);
  q = q > 1.0f ? 1.0f : q;
  q = a > 3.92f ? 1.0f : q;
  const float r = a <= 1.0f ? near_zero : q;
  return x != x ? x : std::copysign(r, x);
}

// erfc in single precision, branch free, with the relative accuracy of
// its tail (erf's 1 - erf(x) would round to 0 from x = 3.92 on, and lose
// bits from x = 0.5):
// - x < 0.5: 1 - erf(x) (ErfFloat), which cancels at most a bit;
// - 0.5 <= x <= 10.1: e^-x^2 R(x), R(x) = e^x^2 erfc(x) fitted here (as
//   ErfFloat's polynomials): of degree 10 in x - 1.25 below 2, and as
//   w S(w), S of degree 9 in w = 1/x, from 2 on. x^2 is split into its
//   rounded value and the error of that rounding (a fused multiply-add
//   gives it exactly), so that e^-x^2 keeps its accuracy where x^2 is
//   large; e^-x^2's power of two is applied last, so that a
//   subnormal result rounds once;
// - above 10.1 (clamped there), the result rounds to 0.
// Polynomials in x - 1.25 and 1/x rather than in a variable scaled to
// [-1, 1]: that scaling's rounding alone cost two ulps. Within four ulps of
// the correctly rounded value for every float (checked exhaustively: of the
// 2^31 non-negative floats, 337 are four ulps off and about 48,500 three,
// all between 0.5 and 10.1; negative x within one ulp); infinities give 0
// and 2, NaN stays NaN. JAX's exact GELU,
// 0.5 x erfc(-x / sqrt 2), computes this one: std::erfc in double, as a
// step of its own, was 10 ms over 2^21 floats.
inline float ErfcFloat(float x) {
  const float near_zero = 1.0f - ErfFloat(x);
  float a = x < 0.5f ? 0.5f : x;
  a = a > 10.1f ? 10.1f : a;
  const float hi = a * a;
  const float lo = MulAdd(a, a, -hi);  // exactly what rounding a*a lost
  const ExpParts e = ExpFloatParts(-hi);
  const float u = a - 1.25f;
  const float r1 = Horner(u, 6.408622996e-05f, -1.924901603e-04f, 4.674191748e-04f, -1.308647356e-03f,
                          3.555050866e-03f, -9.085910624e-03f, 2.201110593e-02f, -5.021784014e-02f, 1.067955840e-01f,
                          -2.088218883e-01f, 3.678229164e-01f);
  const float w = 1.0f / a;
  float r2 = Horner(w, 9.159728686e-01f, -2.763346823e+00f, 3.394486454e+00f, -1.897238454e+00f,
                    8.444192685e-02f, 4.315881307e-01f, -3.714658563e-03f, -2.816096957e-01f, -3.010050285e-05f,
                    5.641903304e-01f);
  r2 = r2 * w;
  // e^-x^2 = e^-hi (1 - lo); the scales last, so that a subnormal result
  // rounds once.
  const float tail = (MulAdd(-e.p, lo, e.p) * (a < 2.0f ? r1 : r2)) * e.low_scale * e.high_scale;
  const float y = x < 0.5f ? near_zero : tail;
  return x != x ? x : y;
}

namespace float_fn {

struct Add { template <typename T> T operator()(T x, T y) const { return x + y; } };
struct Subtract { template <typename T> T operator()(T x, T y) const { return x - y; } };
struct Multiply { template <typename T> T operator()(T x, T y) const { return x * y; } };
struct Divide { template <typename T> T operator()(T x, T y) const { return x / y; } };
struct Remainder { template <typename T> T operator()(T x, T y) const { return std::fmod(x, y); } };
struct Power { template <typename T> T operator()(T x, T y) const { return std::pow(x, y); } };
struct Atan2 { template <typename T> T operator()(T x, T y) const { return std::atan2(x, y); } };
// NaN-propagating, and -0 below +0, as HLO's maximum and minimum are.
// Written without an early return, and with a NaN result computed from
// the operands (x + y: a quiet NaN carrying an operand's payload) rather
// than a constant: GCC threads the jumps of two such calls in a row (a
// fused pair, relu then a clamp) into control flow it cannot vectorise,
// and the pair ran element by element, 20 times slower.
struct Maximum {
  template <typename T>
  T operator()(T x, T y) const {
    const T larger = x > y ? x : y;
    const T zeros = std::signbit(x) ? y : x;  // +0 over -0 when both are zeros
    const T value = x == 0 && y == 0 ? zeros : larger;
    return x != x || y != y ? x + y : value;
  }
};
struct Minimum {
  template <typename T>
  T operator()(T x, T y) const {
    const T smaller = x < y ? x : y;
    const T zeros = std::signbit(x) ? x : y;  // -0 under +0 when both are zeros
    const T value = x == 0 && y == 0 ? zeros : smaller;
    return x != x || y != y ? x + y : value;
  }
};

struct Negate { template <typename T> T operator()(T x) const { return -x; } };
struct Abs { template <typename T> T operator()(T x) const { return std::fabs(x); } };
struct Exp {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return ExpFloat(x);
    } else {
      return std::exp(x);
    }
  }
};
struct Expm1 {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return Expm1Float(x);
    } else {
      return std::expm1(x);
    }
  }
};
struct Log {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return LogFloat(x);
    } else {
      return std::log(x);
    }
  }
};
struct Log1p {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return Log1pFloat(x);
    } else {
      return std::log1p(x);
    }
  }
};
struct Sqrt { template <typename T> T operator()(T x) const { return std::sqrt(x); } };
struct Rsqrt { template <typename T> T operator()(T x) const { return T(1) / std::sqrt(x); } };
struct Tanh {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return TanhFloat(x);
    } else {
      return std::tanh(x);
    }
  }
};
struct Logistic {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return LogisticFloat(x);
    } else {
      return T(1) / (T(1) + std::exp(-x));
    }
  }
};
struct Erf {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return ErfFloat(x);
    } else {
      return std::erf(x);
    }
  }
};
struct Erfc {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return ErfcFloat(x);
    } else {
      return std::erfc(x);
    }
  }
};
struct Floor { template <typename T> T operator()(T x) const { return std::floor(x); } };
struct Ceil { template <typename T> T operator()(T x) const { return std::ceil(x); } };
struct Sin { template <typename T> T operator()(T x) const { return std::sin(x); } };
struct Cos { template <typename T> T operator()(T x) const { return std::cos(x); } };
struct RoundNearestEven { template <typename T> T operator()(T x) const { return std::nearbyint(x); } };
struct RoundNearestAfz { template <typename T> T operator()(T x) const { return std::round(x); } };
struct Sign {
  template <typename T>
  T operator()(T x) const {
    return std::isnan(x) || x == 0 ? x : (x > 0 ? T(1) : T(-1));
  }
};
struct Copy { template <typename T> T operator()(T x) const { return x; } };

}  // namespace float_fn

// The binary ops cheap enough that a pass over memory is a large part of
// their cost, which the fused loop pairs into one pass.
template <typename Visit>
bool VisitPairableBinary(hlo::Opcode op, Visit&& visit) {
  using hlo::Opcode;
  switch (op) {
    case Opcode::kAdd: visit(float_fn::Add{}); return true;
    case Opcode::kSubtract: visit(float_fn::Subtract{}); return true;
    case Opcode::kMultiply: visit(float_fn::Multiply{}); return true;
    case Opcode::kDivide: visit(float_fn::Divide{}); return true;
    case Opcode::kMaximum: visit(float_fn::Maximum{}); return true;
    case Opcode::kMinimum: visit(float_fn::Minimum{}); return true;
    default: return false;
  }
}

template <typename Visit>
bool VisitFloatBinary(hlo::Opcode op, Visit&& visit) {
  using hlo::Opcode;
  if (VisitPairableBinary(op, visit)) return true;
  switch (op) {
    case Opcode::kRemainder: visit(float_fn::Remainder{}); return true;
    case Opcode::kPower: visit(float_fn::Power{}); return true;
    case Opcode::kAtan2: visit(float_fn::Atan2{}); return true;
    default: return false;
  }
}

// The unary ops whose result has the operand's type (is-finite is not one).
template <typename Visit>
bool VisitFloatUnary(hlo::Opcode op, Visit&& visit) {
  using hlo::Opcode;
  switch (op) {
    case Opcode::kNegate: visit(float_fn::Negate{}); return true;
    case Opcode::kAbs: visit(float_fn::Abs{}); return true;
    case Opcode::kExp: visit(float_fn::Exp{}); return true;
    case Opcode::kExpm1: visit(float_fn::Expm1{}); return true;
    case Opcode::kLog: visit(float_fn::Log{}); return true;
    case Opcode::kLog1p: visit(float_fn::Log1p{}); return true;
    case Opcode::kSqrt: visit(float_fn::Sqrt{}); return true;
    case Opcode::kRsqrt: visit(float_fn::Rsqrt{}); return true;
    case Opcode::kTanh: visit(float_fn::Tanh{}); return true;
    case Opcode::kLogistic: visit(float_fn::Logistic{}); return true;
    case Opcode::kErf: visit(float_fn::Erf{}); return true;
    case Opcode::kFloor: visit(float_fn::Floor{}); return true;
    case Opcode::kCeil: visit(float_fn::Ceil{}); return true;
    case Opcode::kSin: visit(float_fn::Sin{}); return true;
    case Opcode::kCos: visit(float_fn::Cos{}); return true;
    case Opcode::kRoundNearestEven: visit(float_fn::RoundNearestEven{}); return true;
    case Opcode::kRoundNearestAfz: visit(float_fn::RoundNearestAfz{}); return true;
    case Opcode::kSign: visit(float_fn::Sign{}); return true;
    case Opcode::kCopy: visit(float_fn::Copy{}); return true;
    default: return false;
  }
}

// The unary math a bf16 value computes in f32 and rounds once to bf16, as
// XLA's CPU backend computes it, in the one-op kernels and the fused loops
// alike. The f32 functions are within two f32 ulps, so the bf16 result is
// the correctly rounded one (what the evaluator gives from double) except
// where the value lies that close to a boundary between two bf16 values,
// about one value in 16,000, which then rounds to the other of the two.
// Through double, bf16 tanh took 23 ns an element; in f32 it vectorises.
inline bool Bf16MathInFloat(hlo::Opcode op) {
  using hlo::Opcode;
  switch (op) {
    case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p: case Opcode::kTanh:
    case Opcode::kLogistic: case Opcode::kSqrt: case Opcode::kRsqrt: case Opcode::kErf:
      return true;
    default:
      return false;
  }
}

// A custom-call of chlo.erfc on one operand: erfc has no HLO opcode, and
// JAX's exact GELU, 0.5 x erfc(-x / sqrt 2), computes it.
inline bool IsErfcCall(const hlo::Instruction& i) {
  return i.opcode == hlo::Opcode::kCustomCall && i.operands.size() == 1 &&
         hlo::StringAttribute(i, "custom_call_target") == "chlo.erfc";
}

// The unary math an instruction computes elementwise: its opcode's
// (VisitFloatUnary), or erfc for a call of chlo.erfc.
template <typename Visit>
bool VisitFloatUnaryOf(const hlo::Instruction& i, Visit&& visit) {
  if (IsErfcCall(i)) {
    visit(float_fn::Erfc{});
    return true;
  }
  return VisitFloatUnary(i.opcode, visit);
}

}  // namespace anvil::cpu
