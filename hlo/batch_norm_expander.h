// Rewrites batch-norm-training, batch-norm-inference and batch-norm-grad
// into reductions, broadcasts and elementwise ops (as XLA's
// BatchNormExpander does), for code generators that have kernels for those
// and none for batch norm itself. Each batch-norm instruction becomes the
// tuple of its results (or its one result), so its users are unchanged.
#pragma once

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

Status ExpandBatchNorm(Module& module);

}  // namespace anvil::hlo
