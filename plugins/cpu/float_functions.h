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

#include "hlo/opcode.h"

namespace anvil::cpu {

// e^x for the f32 functions, computed in double with no call and no
// branch, so that the loops calling it vectorise. x = n*ln2 + r with
// |r| <= ln2/2 (n by the round-to-nearest shift of 1.5*2^52, whose low bits
// then hold n as an integer), e^r by its Taylor polynomial to r^9 (relative
// error below 2^-36 at the ends, far less near 0), and 2^n built from its
// exponent bits. Rounded to float it is correctly rounded but in rare
// near-halfway cases (within an ulp always). x is clamped to [-200, 200],
// where float results are 0 and infinity anyway; NaN stays NaN.
inline double ExpForFloat(double x) {
  x = x < -200.0 ? -200.0 : x;
  x = x > 200.0 ? 200.0 : x;
  constexpr double kShift = 0x1.8p52;
  const double t = x * 1.4426950408889634 + kShift;
  const double n = t - kShift;
  const double r = x - n * 0.6931471805599453;
  double p = 1.0 / 362880;
  p = p * r + 1.0 / 40320;
  p = p * r + 1.0 / 5040;
  p = p * r + 1.0 / 720;
  p = p * r + 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r + 1.0 / 6;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  int64_t t_bits, shift_bits;
  std::memcpy(&t_bits, &t, sizeof t);
  std::memcpy(&shift_bits, &kShift, sizeof kShift);
  const int64_t scale_bits = (t_bits - shift_bits + 1023) << 52;  // n + 1023 > 0 for |x| <= 200
  double scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  return p * scale;
}

// tanh of a float from one exp in double, (1 - e) / (1 + e) with
// e = e^-2|x|: 1 - e keeps at least 40 good bits above 2^-13, and below it
// tanh(x) rounds to x in single precision (the x^3/3 term is under half an
// ulp). Within an ulp; NaN, infinities and -0 come out as tanh's. Branch
// free, so it vectorises.
inline float FastTanh(float x) {
  const double a = std::fabs(static_cast<double>(x));
  const double e = ExpForFloat(-2 * a);
  const float t = static_cast<float>(std::copysign((1 - e) / (1 + e), static_cast<double>(x)));
  return a < 0x1p-13 ? x : t;
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
struct Maximum {
  template <typename T>
  T operator()(T x, T y) const {
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
    return (x == 0 && y == 0) ? (std::signbit(x) ? y : x) : (x > y ? x : y);
  }
};
struct Minimum {
  template <typename T>
  T operator()(T x, T y) const {
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
    return (x == 0 && y == 0) ? (std::signbit(x) ? x : y) : (x < y ? x : y);
  }
};

struct Negate { template <typename T> T operator()(T x) const { return -x; } };
struct Abs { template <typename T> T operator()(T x) const { return std::fabs(x); } };
struct Exp {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return static_cast<float>(ExpForFloat(x));
    } else {
      return std::exp(x);
    }
  }
};
struct Expm1 { template <typename T> T operator()(T x) const { return std::expm1(x); } };
struct Log { template <typename T> T operator()(T x) const { return std::log(x); } };
struct Log1p { template <typename T> T operator()(T x) const { return std::log1p(x); } };
struct Sqrt { template <typename T> T operator()(T x) const { return std::sqrt(x); } };
struct Rsqrt { template <typename T> T operator()(T x) const { return T(1) / std::sqrt(x); } };
struct Tanh {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return FastTanh(x);
    } else {
      return std::tanh(x);
    }
  }
};
struct Logistic {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return static_cast<float>(1 / (1 + ExpForFloat(-static_cast<double>(x))));
    } else {
      return T(1) / (T(1) + std::exp(-x));
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

template <typename Visit>
bool VisitFloatBinary(hlo::Opcode op, Visit&& visit) {
  using hlo::Opcode;
  switch (op) {
    case Opcode::kAdd: visit(float_fn::Add{}); return true;
    case Opcode::kSubtract: visit(float_fn::Subtract{}); return true;
    case Opcode::kMultiply: visit(float_fn::Multiply{}); return true;
    case Opcode::kDivide: visit(float_fn::Divide{}); return true;
    case Opcode::kRemainder: visit(float_fn::Remainder{}); return true;
    case Opcode::kPower: visit(float_fn::Power{}); return true;
    case Opcode::kAtan2: visit(float_fn::Atan2{}); return true;
    case Opcode::kMaximum: visit(float_fn::Maximum{}); return true;
    case Opcode::kMinimum: visit(float_fn::Minimum{}); return true;
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

}  // namespace anvil::cpu
