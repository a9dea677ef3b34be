// Deterministic data for programs that need some: parameters (`anvil run
// --random-inputs`, the .hlo conformance runs) and elided constants (`{...}`).
#pragma once

#include <cstdint>
#include <string>

#include "hlo/ir.h"
#include "hlo/literal.h"

namespace anvil::conformance {

// Values in [-1, 1) for floats, small integers for integers; the same seed
// always gives the same literal.
hlo::Literal DeterministicLiteral(const hlo::Shape& shape, uint64_t seed);
// Gives every elided constant of `module` deterministic values.
void FillElidedConstants(hlo::Module& module);
uint64_t HashString(const std::string& s);

}  // namespace anvil::conformance
