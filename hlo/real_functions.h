// HLO's elementwise ops on real floating-point values, computed in double:
// what the reference evaluator computes for every float type (narrower
// types are widened exactly, and the result rounded once to the type), so
// that a plugin computing an op this way matches the evaluator bit for bit.
#pragma once

#include "hlo/opcode.h"

namespace anvil::hlo {

using RealUnaryFunction = double (*)(double);
using RealBinaryFunction = double (*)(double, double);

// The function of an elementwise op on real values, or nullptr when `op`
// is none (or takes other operand counts).
RealUnaryFunction RealUnaryOf(Opcode op);
RealBinaryFunction RealBinaryOf(Opcode op);

}  // namespace anvil::hlo
