// Folds elementwise arithmetic, comparisons, conversions, broadcasts and
// reshapes whose operands are all constants into constants, and
// get-tuple-element of a tuple into the element. A first folder: the
// reference evaluator will widen it to every op.
#pragma once

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

// Returns how many instructions were replaced; dead code is left for
// RemoveDeadCode.
int FoldConstants(Module& module);

// Replaces every use of `from` in `c` (operands and root) by `to`.
void ReplaceAllUses(Computation& c, Instruction* from, Instruction* to);

}  // namespace anvil::hlo
