#include "hlo/real_functions.h"

#include <algorithm>
#include <cmath>

namespace anvil::hlo {

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

}  // namespace anvil::hlo
