// Rewrites a sort that only serves a top-k into a `topk` (what XLA's
// TopkRewriter does): a sort along the last dimension of keys and an iota
// of that dimension, by one compare of the two keys (the total order for
// floats), whose results are read only by slices of their first k along
// that dimension. JAX sends lax.top_k to plugins this way (the chlo.top_k
// composite's decomposition, inlined by core), and a plugin with a topk
// kernel then selects k of n instead of sorting all n. Both compute the
// same values and indices: the sort is the evaluator's stable merge sort,
// and topk ranks by the same order with ties by index.
#pragma once

#include "hlo/ir.h"

namespace anvil::hlo {

// Rewrites every such sort of every computation; returns how many. The
// slices become get-tuple-elements of the new topk; the sort, and the iota
// if nothing else reads it, are left for RemoveDeadCode.
int RewriteSortsAsTopK(Module& module);

}  // namespace anvil::hlo
