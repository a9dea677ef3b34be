// Folds elementwise arithmetic, comparisons, selects, conversions,
// broadcasts and reshapes whose operands are all constants into constants,
// and
// get-tuple-element of a tuple into the element. A first folder: the
// reference evaluator will widen it to every op.
#pragma once

#include <cstdint>

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

// The most elements a constant with one value in every element (a splat)
// holds in canonical form. A broadcast of a scalar folds only into a splat
// this small, and a larger splat becomes a broadcast of its scalar
// (BroadcastLargeSplats). A large splat would be built in memory by every
// parse, compile and cache load (MobileNet's step held 22 MB of them, most
// of the time of loading it; JAX's exact GELU writes 29 splats of the
// argument's shape) and read from memory by every kernel, while a broadcast
// of a constant scalar costs plugins nothing: it fuses into the loops that
// read it. XLA does not fold broadcasts at all.
inline constexpr int64_t kMaxSplatConstantElements = 1 << 10;

// Returns how many instructions were replaced; dead code is left for
// RemoveDeadCode.
int FoldConstants(Module& module);

// Replaces every use of `from` in `c` (operands and root) by `to`.
void ReplaceAllUses(Computation& c, Instruction* from, Instruction* to);

}  // namespace anvil::hlo
