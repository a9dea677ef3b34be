#include "hlo/scalar_functions.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace anvil::hlo {
namespace {

template <typename Bits>
Bits ReducePrecisionBits(Bits x, int src_exponent, int src_mantissa, int exponent_bits, int mantissa_bits,
                         bool is_nan) {
  const int nbits = 1 + src_exponent + src_mantissa;
  Bits original = x;
  if (mantissa_bits < src_mantissa) {
    const Bits last = Bits{1} << (src_mantissa - mantissa_bits);
    const Bits base_bias = (last >> 1) - 1;
    const Bits x_last = (x & last) >> (src_mantissa - mantissa_bits);
    x = (x + x_last + base_bias) & ~(last - 1);
  }
  if (exponent_bits < src_exponent) {
    const Bits sign_mask = Bits{1} << (nbits - 1);
    const Bits exp_mask = ((Bits{1} << src_exponent) - 1) << src_mantissa;
    const Bits bias = (Bits{1} << (src_exponent - 1)) - 1;
    const Bits reduced_bias = (Bits{1} << (exponent_bits - 1)) - 1;
    const Bits max_exp = bias + reduced_bias;
    const Bits min_exp = bias - reduced_bias;
    const Bits e = x & exp_mask;
    if (e > (max_exp << src_mantissa)) {
      x = (x & sign_mask) | exp_mask;
    } else if (e <= (min_exp << src_mantissa)) {
      x = x & sign_mask;
    }
  }
  if (is_nan) {
    // NaN stays NaN when a mantissa bit is left to hold it; else infinity.
    const Bits exp_mask = ((Bits{1} << src_exponent) - 1) << src_mantissa;
    return mantissa_bits > 0 ? original : ((original & (Bits{1} << (nbits - 1))) | exp_mask);
  }
  return x;
}

int64_t SignExtend(uint64_t v, int width) {
  if (width >= 64) return static_cast<int64_t>(v);
  uint64_t sign = uint64_t{1} << (width - 1);
  v &= (sign << 1) - 1;
  return static_cast<int64_t>((v ^ sign) - sign);
}

uint64_t IntPower(int64_t base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return static_cast<uint64_t>(exponent % 2 == 0 ? 1 : -1);
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  auto e = static_cast<uint64_t>(exponent);
  while (e) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return result;
}

}  // namespace

std::optional<uint64_t> IntegerUnary(Opcode op, uint64_t x, ElementType t) {
  const int width = Info(t).bit_width;
  const bool is_signed = IsSignedInt(t);
  const int64_t sx = SignExtend(x, width);
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  switch (op) {
    case Opcode::kAbs: return is_signed && sx < 0 ? 0 - x : x;
    case Opcode::kNegate: return 0 - x;
    case Opcode::kSign: return is_signed ? static_cast<uint64_t>(sx > 0 ? 1 : (sx < 0 ? -1 : 0)) : (x != 0);
    case Opcode::kNot: return IsPred(t) ? !x : ~x;
    case Opcode::kPopulationCount: return static_cast<uint64_t>(std::popcount(x & mask));
    case Opcode::kClz: {
      uint64_t v = x & mask;
      return v == 0 ? static_cast<uint64_t>(width) : static_cast<uint64_t>(std::countl_zero(v) - (64 - width));
    }
    case Opcode::kCopy: return x;
    default: return std::nullopt;
  }
}

std::optional<uint64_t> IntegerBinary(Opcode op, uint64_t a, uint64_t b, ElementType t) {
  const int width = Info(t).bit_width;
  const bool is_signed = IsSignedInt(t);
  const int64_t sa = SignExtend(a, width), sb = SignExtend(b, width);
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const uint64_t ua = a & mask, ub = b & mask;
  const int64_t min_signed = width >= 64 ? INT64_MIN : -(int64_t{1} << (width - 1));
  if (IsPred(t)) {
    switch (op) {
      case Opcode::kAdd: case Opcode::kOr: case Opcode::kMaximum: return (a | b) & 1;
      case Opcode::kMultiply: case Opcode::kAnd: case Opcode::kMinimum: return (a & b) & 1;
      case Opcode::kXor: return (a ^ b) & 1;
      default: return std::nullopt;
    }
  }
  switch (op) {
    case Opcode::kAdd: return a + b;
    case Opcode::kSubtract: return a - b;
    case Opcode::kMultiply: return a * b;
    case Opcode::kAnd: return a & b;
    case Opcode::kOr: return a | b;
    case Opcode::kXor: return a ^ b;
    case Opcode::kMaximum: return is_signed ? static_cast<uint64_t>(std::max(sa, sb)) : std::max(ua, ub);
    case Opcode::kMinimum: return is_signed ? static_cast<uint64_t>(std::min(sa, sb)) : std::min(ua, ub);
    case Opcode::kDivide:
      // XLA's choices where the spec leaves it to the implementation.
      if (ub == 0) return ~uint64_t{0};
      if (is_signed) return sa == min_signed && sb == -1 ? a : static_cast<uint64_t>(sa / sb);
      return ua / ub;
    case Opcode::kRemainder:
      if (ub == 0) return a;
      if (is_signed) return sa == min_signed && sb == -1 ? 0 : static_cast<uint64_t>(sa % sb);
      return ua % ub;
    case Opcode::kPower:
      return is_signed ? IntPower(sa, sb) : IntPower(static_cast<int64_t>(ua), static_cast<int64_t>(ub));
    case Opcode::kShiftLeft: return ub >= static_cast<uint64_t>(width) ? 0 : ua << ub;
    case Opcode::kShiftRightLogical: return ub >= static_cast<uint64_t>(width) ? 0 : ua >> ub;
    case Opcode::kShiftRightArithmetic:
      if (ub >= static_cast<uint64_t>(width)) return sa < 0 ? ~uint64_t{0} : 0;
      return static_cast<uint64_t>(sa >> ub);
    default: return std::nullopt;
  }
}

double ReducePrecision(double v, ElementType t, int exponent_bits, int mantissa_bits) {
  if (t == ElementType::kF64) {
    auto bits = std::bit_cast<uint64_t>(v);
    return std::bit_cast<double>(ReducePrecisionBits<uint64_t>(bits, 11, 52, exponent_bits, mantissa_bits, std::isnan(v)));
  }
  // Narrower floats are exact in f32.
  auto bits = std::bit_cast<uint32_t>(static_cast<float>(v));
  return std::bit_cast<float>(ReducePrecisionBits<uint32_t>(bits, 8, 23, exponent_bits, mantissa_bits, std::isnan(v)));
}


RealUnaryFunction RealUnaryOf(Opcode op) {
  switch (op) {
    case Opcode::kAbs: return [](double x) { return std::fabs(x); };
    case Opcode::kNegate: return [](double x) { return -x; };
    case Opcode::kSign: return [](double x) { return std::isnan(x) ? x : (x == 0 ? x : (x > 0 ? 1.0 : -1.0)); };
    case Opcode::kFloor: return [](double x) { return std::floor(x); };
    case Opcode::kCeil: return [](double x) { return std::ceil(x); };
    case Opcode::kRoundNearestAfz: return [](double x) { return std::round(x); };
    case Opcode::kRoundNearestEven: return [](double x) { return std::nearbyint(x); };
    case Opcode::kSqrt: return [](double x) { return std::sqrt(x); };
    case Opcode::kRsqrt: return [](double x) { return 1.0 / std::sqrt(x); };
    case Opcode::kCbrt: return [](double x) { return std::cbrt(x); };
    case Opcode::kExp: return [](double x) { return std::exp(x); };
    case Opcode::kExpm1: return [](double x) { return std::expm1(x); };
    case Opcode::kLog: return [](double x) { return std::log(x); };
    case Opcode::kLog1p: return [](double x) { return std::log1p(x); };
    case Opcode::kLogistic: return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    case Opcode::kSin: return [](double x) { return std::sin(x); };
    case Opcode::kCos: return [](double x) { return std::cos(x); };
    case Opcode::kTan: return [](double x) { return std::tan(x); };
    case Opcode::kTanh: return [](double x) { return std::tanh(x); };
    case Opcode::kAsin: return [](double x) { return std::asin(x); };
    case Opcode::kAcos: return [](double x) { return std::acos(x); };
    case Opcode::kAtan: return [](double x) { return std::atan(x); };
    case Opcode::kSinh: return [](double x) { return std::sinh(x); };
    case Opcode::kCosh: return [](double x) { return std::cosh(x); };
    case Opcode::kAsinh: return [](double x) { return std::asinh(x); };
    case Opcode::kAcosh: return [](double x) { return std::acosh(x); };
    case Opcode::kAtanh: return [](double x) { return std::atanh(x); };
    case Opcode::kErf: return [](double x) { return std::erf(x); };
    default: return nullptr;
  }
}

RealBinaryFunction RealBinaryOf(Opcode op) {
  switch (op) {
    case Opcode::kAdd: return [](double a, double b) { return a + b; };
    case Opcode::kSubtract: return [](double a, double b) { return a - b; };
    case Opcode::kMultiply: return [](double a, double b) { return a * b; };
    case Opcode::kDivide: return [](double a, double b) { return a / b; };
    case Opcode::kRemainder: return [](double a, double b) { return std::fmod(a, b); };
    case Opcode::kPower: return [](double a, double b) { return std::pow(a, b); };
    case Opcode::kAtan2: return [](double a, double b) { return std::atan2(a, b); };
    // NaN if either is NaN; of two zeros, maximum takes +0 and minimum -0.
    case Opcode::kMaximum:
      return [](double a, double b) {
        if (std::isnan(a) || std::isnan(b)) return std::nan("");
        if (a == 0 && b == 0) return std::signbit(a) ? b : a;
        return std::max(a, b);
      };
    case Opcode::kMinimum:
      return [](double a, double b) {
        if (std::isnan(a) || std::isnan(b)) return std::nan("");
        if (a == 0 && b == 0) return std::signbit(a) ? a : b;
        return std::min(a, b);
      };
    default: return nullptr;
  }
}

ComplexUnaryFunction ComplexUnaryOf(Opcode op) {
  using C = std::complex<double>;
  switch (op) {
    case Opcode::kNegate: return [](C x) { return -x; };
    case Opcode::kSign: return [](C x) { return std::abs(x) == 0 ? C(0, 0) : x / std::abs(x); };
    case Opcode::kSqrt: return [](C x) { return std::sqrt(x); };
    case Opcode::kRsqrt: return [](C x) { return 1.0 / std::sqrt(x); };
    case Opcode::kExp: return [](C x) { return std::exp(x); };
    case Opcode::kExpm1: return [](C x) { return std::exp(x) - 1.0; };
    case Opcode::kLog: return [](C x) { return std::log(x); };
    case Opcode::kLog1p: return [](C x) { return std::log(1.0 + x); };
    case Opcode::kLogistic: return [](C x) { return 1.0 / (1.0 + std::exp(-x)); };
    case Opcode::kSin: return [](C x) { return std::sin(x); };
    case Opcode::kCos: return [](C x) { return std::cos(x); };
    case Opcode::kTan: return [](C x) { return std::tan(x); };
    case Opcode::kTanh: return [](C x) { return std::tanh(x); };
    case Opcode::kAsin: return [](C x) { return std::asin(x); };
    case Opcode::kAcos: return [](C x) { return std::acos(x); };
    case Opcode::kAtan: return [](C x) { return std::atan(x); };
    case Opcode::kSinh: return [](C x) { return std::sinh(x); };
    case Opcode::kCosh: return [](C x) { return std::cosh(x); };
    case Opcode::kAsinh: return [](C x) { return std::asinh(x); };
    case Opcode::kAcosh: return [](C x) { return std::acosh(x); };
    case Opcode::kAtanh: return [](C x) { return std::atanh(x); };
    case Opcode::kCbrt: return [](C x) { return std::pow(x, 1.0 / 3.0); };
    case Opcode::kCopy: return [](C x) { return x; };
    default: return nullptr;
  }
}

ComplexBinaryFunction ComplexBinaryOf(Opcode op) {
  using C = std::complex<double>;
  switch (op) {
    case Opcode::kAdd: return [](C a, C b) { return a + b; };
    case Opcode::kSubtract: return [](C a, C b) { return a - b; };
    case Opcode::kMultiply: return [](C a, C b) { return a * b; };
    case Opcode::kDivide: return [](C a, C b) { return a / b; };
    case Opcode::kPower: return [](C a, C b) { return std::pow(a, b); };
    // atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)), for complex y and x.
    case Opcode::kAtan2:
      return [](C a, C b) {
        const C i1(0, 1);
        return -i1 * std::log((b + i1 * a) / std::sqrt(b * b + a * a));
      };
    // Lexicographic order: real parts, then imaginary parts.
    case Opcode::kMaximum:
      return [](C a, C b) { return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag()) ? b : a; };
    case Opcode::kMinimum:
      return [](C a, C b) { return b.real() < a.real() || (b.real() == a.real() && b.imag() < a.imag()) ? b : a; };
    default: return nullptr;
  }
}

}  // namespace anvil::hlo
