// Rewrites transpose(dot(a, b)) of a matrix product into dot(b, a), the
// product of the swapped operands, which is the transposed result (XLA's
// algebraic simplifier does the same). JAX's gradient of `x @ w` computes
// w's gradient as dot(g, x) contracting the batch, then transposes it to
// w's layout: a backward pass transposes each weight gradient once more
// than it needs to, in a scan once per step. Each element is still the sum
// of the same products along the same contracting dimension; only which
// operand is the product's left one changes.
#pragma once

#include "hlo/ir.h"

namespace anvil::hlo {

// Rewrites, in every computation, each transpose {1,0} of a 2-D dot with
// one contracting dimension a side, no batch dimensions and no other
// reader. Returns how many; the dots left unread are for RemoveDeadCode.
int FoldTransposesOfDots(Module& module);

}  // namespace anvil::hlo
