// Passes that bring a verified module to the canonical form core hands to
// plugins: calls and fusions inlined, tuple parameters flattened, constants folded,
// common subexpressions merged, dead code and unreachable computations dropped.
#pragma once

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

// Replaces every `call` and `fusion` by a copy of its callee's body.
Status InlineCalls(Module& module);
// Drops instructions nothing uses (side-effecting ones stay) and
// computations nothing calls.
void RemoveDeadCode(Module& module);
// Whether an instruction must run even when nothing uses its value.
bool HasSideEffect(const Instruction& instruction);

// Replaces each tuple-shaped entry parameter by one parameter per array leaf
// (numbered in order), rebuilding the tuple from them for its users.
Status FlattenTupleParameters(Module& module);

// Turns each constant of more than kMaxSplatConstantElements elements that
// all hold the same bits into a broadcast of a scalar constant (same name,
// shape and layout); returns how many it turned.
int BroadcastLargeSplats(Module& module);

// InlineCalls, FlattenTupleParameters, FoldConstants, BroadcastLargeSplats,
// EliminateCommonSubexpressions (hlo/cse.h), RemoveDeadCode, then Verify.
Status Canonicalize(Module& module);

}  // namespace anvil::hlo
