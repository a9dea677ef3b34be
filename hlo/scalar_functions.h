// HLO's elementwise ops on scalars, computed in double (real floats) or
// std::complex<double> (complex): what the reference evaluator computes for
// every float and complex type (narrower types are widened exactly, and the
// result rounded once to the type, part by part for complex), so that a
// plugin computing an op this way matches the evaluator bit for bit.
#pragma once

#include <complex>

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

// reduce-precision of a value of float type `t` (given in double) to
// `exponent_bits` and `mantissa_bits`: rounded to nearest even in the
// mantissa, then overflowing to infinity and underflowing to zero in the
// exponent; a NaN stays NaN while a mantissa bit is left. f64 values are
// reduced in f64's bits, narrower ones in f32's (where they are exact).
double ReducePrecision(double v, ElementType t, int exponent_bits, int mantissa_bits);

}  // namespace anvil::hlo
