// Common subexpression elimination, as XLA's HloCSE: an instruction that
// computes what an earlier one of its computation already computes (same
// opcode, shape with layout, operands, attributes but metadata, literal,
// and callees equal in structure) is replaced by that earlier one.
//
// JAX's lowerings repeat themselves (erfc squares its argument twice and
// takes its absolute value twice); a plugin that plans kernels per
// instruction would otherwise compute, and often store, each copy.
#pragma once

#include "hlo/ir.h"

namespace anvil::hlo {

// Rewrites every use of a duplicate to the instruction it duplicates and
// returns how many it replaced; the duplicates are left for RemoveDeadCode.
// Never merged: parameters, side-effecting and random instructions,
// custom-calls, tokens, elided constants (each is filled with data of its
// own), and instructions calling a computation that holds any of these.
int EliminateCommonSubexpressions(Module& module);

}  // namespace anvil::hlo
