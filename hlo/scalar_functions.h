// HLO's elementwise ops on scalars, computed in double (real floats) or
// std::complex<double> (complex): what the reference evaluator computes for
// every float and complex type (narrower types are widened exactly, and the
// result rounded once to the type, part by part for complex), so that a
// plugin computing an op this way matches the evaluator bit for bit.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>
#include <string_view>

#include "hlo/element_type.h"
#include "hlo/opcode.h"

namespace anvil::hlo {

using RealUnaryFunction = double (*)(double);
using RealBinaryFunction = double (*)(double, double);

using ComplexUnaryFunction = std::complex<double> (*)(std::complex<double>);
using ComplexBinaryFunction = std::complex<double> (*)(std::complex<double>, std::complex<double>);

// The function of an elementwise op on real or complex values, or nullptr
// when `op` is none (or takes other operand counts).
RealUnaryFunction RealUnaryOf(Opcode op);
RealBinaryFunction RealBinaryOf(Opcode op);
ComplexUnaryFunction ComplexUnaryOf(Opcode op);
ComplexBinaryFunction ComplexBinaryOf(Opcode op);

// An elementwise op on integers or pred of type `t`, each value given as
// the evaluator holds it (signed types sign-extended to 64 bits, unsigned
// and pred zero-extended): the result's bits (wrapped; the caller stores
// the low bits of its type), or nullopt when `op` is not an op of that
// many integer operands. Whether an op is defined never depends on the
// values (division by zero has XLA's answers).
std::optional<uint64_t> IntegerUnary(Opcode op, uint64_t x, ElementType t);
std::optional<uint64_t> IntegerBinary(Opcode op, uint64_t a, uint64_t b, ElementType t);

// reduce-precision of a value of float type `t` (given in double) to
// `exponent_bits` and `mantissa_bits`: rounded to nearest even in the
// mantissa, then overflowing to infinity and underflowing to zero in the
// exponent; a NaN stays NaN while a mantissa bit is left. f64 values are
// reduced in f64's bits, narrower ones in f32's (where they are exact).
double ReducePrecision(double v, ElementType t, int exponent_bits, int mantissa_bits);

// The chlo functions of real arguments that reach the IR as custom calls
// "chlo.NAME" (lgamma, digamma, erf_inv, erfc, erf, bessel_i1e, zeta,
// polygamma, igamma, igamma_grad_a, random_gamma_grad,
// regularized_incomplete_beta), in double: the function of NAME and how
// many of its three arguments it reads, or {nullptr, 0}
// (special_functions.cc).
using ChloRealFunction = double (*)(double, double, double);
struct ChloReal {
  ChloRealFunction fn = nullptr;
  size_t arity = 0;
};
ChloReal ChloRealOf(std::string_view name);

}  // namespace anvil::hlo
