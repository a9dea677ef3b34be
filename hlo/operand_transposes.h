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
//   dimensions where they were and has one contracting and one free
//   dimension (x.T @ y, or a batched swapaxes(-1, -2)): the product then
//   reads a as it is stored, which a BLAS does by its transposition flag.
//
// Each element of every result is the same function of the same elements
// as before (the evaluator computes the same bits; a BLAS reading an
// operand transposed may add a product's terms in another order).
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
