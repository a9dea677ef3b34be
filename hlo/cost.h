// Static cost of a program, for benchmarks and budgets: how many terms each
// element of an instruction sums (a dot's contracted size, a convolution's
// window times its input features, a reduction's reduced count), and from
// that the floating-point work of dots and convolutions (two flops per
// multiply-add, as BLAS benchmarks count them).
#pragma once

#include "hlo/ir.h"

namespace anvil::hlo {

// Terms each element of `i` sums; 1 for instructions that sum nothing.
double TermsPerElement(const Instruction& i);

// 2 x multiply-adds of the dots and convolutions of the entry computation
// and what it calls, each loop body counted once.
double MatrixFlops(const Module& module);

}  // namespace anvil::hlo
