// Deterministic data for programs that need some: parameters (`anvil run
// --random-inputs`, the .hlo conformance runs) and elided constants (`{...}`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"

namespace anvil::conformance {

// Values in [-1, 1) for floats ((0, 1] for float scalars), small integers for
// integers; the same seed
// always gives the same literal.
hlo::Literal DeterministicLiteral(const hlo::Shape& shape, uint64_t seed);
// Gives every elided constant of `module` deterministic values.
void FillElidedConstants(hlo::Module& module);
uint64_t HashString(const std::string& s);
// `arguments` with every finite nonzero float element moved one unit in the
// last place of its type away from zero (others unchanged).
std::vector<hlo::Literal> NudgedByOneUlp(std::vector<hlo::Literal> arguments);

}  // namespace anvil::conformance
