// Rewrites chlo.scan custom calls into while loops (a counter, the inputs,
// the outputs being filled and the carries as the loop state; the body
// slices the inputs at the step, calls the scan's body and writes the
// step's outputs back with dynamic-update-slice), for code generators that
// run while loops and have no scan of their own. Each scan becomes the
// tuple of its results, so its users are unchanged.
#pragma once

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

Status ExpandScans(Module& module);

}  // namespace anvil::hlo
