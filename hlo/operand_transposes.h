// Rewrites that let a transpose's reader read the transposed array in place
// instead of a copy of it (XLA's algebraic simplifier and transpose folding
// do the same):
//
// - slice(transpose(x)) becomes transpose(slice(x)): the slice moves before
//   the transpose, which then moves only what is kept (JAX's x.T[:n, :m]
//   transposed all of x to keep a corner of it);
// - dot(transpose(a), b), or with b transposed, becomes a dot of a itself,
//   its dimension numbers mapped through the permutation, where the
//   transpose swaps an operand's last two dimensions and leaves its batch
//   dimensions where they were (x.T @ y, or a batched
//   swapaxes(-1, -2)): the product then reads a as it is stored, which a
//   BLAS does by its transposition flag.
//
// Each element of every result is computed from the same elements in the
// same order as before.
#pragma once

#include "hlo/ir.h"

namespace anvil::hlo {

// Moves each slice of a transpose that nothing else reads before it, in
// every computation. Returns how many.
int MoveSlicesBeforeTransposes(Module& module);

// Makes each dot read, in place of an operand that is such a transpose (see
// above), the transpose's operand. Returns how many operands; the
// transposes left unread are for RemoveDeadCode.
int FoldTransposedDotOperands(Module& module);

}  // namespace anvil::hlo
