// Rewrites rng-bit-generator into iotas, integer arithmetic, slices and
// concatenations that compute the bit streams of THREE_FRY and PHILOX (and
// DEFAULT, which is PHILOX), element for element as the reference
// evaluator (evaluator_rng.cc) and XLA's RngBitGeneratorExpander give
// them, for code generators that have elementwise kernels and none for the
// generator (the GPU plugins: each stream then runs as one fused kernel).
// Each generator becomes the tuple (new state, bits), so its users are
// unchanged. Outputs of sub-byte or complex types are left as they are.
#pragma once

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

Status ExpandRngBitGenerators(Module& module);

}  // namespace anvil::hlo
