// HLO's elementwise ops on scalars, computed in double (real floats) or
// std::complex<double> (complex): what the reference evaluator computes for
// every float and complex type (narrower types are widened exactly, and the
// result rounded once to the type, part by part for complex), so that a
// plugin computing an op this way matches the evaluator bit for bit.
#pragma once

#include <complex>

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

}  // namespace anvil::hlo
