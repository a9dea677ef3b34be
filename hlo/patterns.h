// Recognisers for small computation shapes that the evaluator and plugins
// both special-case.
#pragma once

#include <optional>

#include "hlo/ir.h"

namespace anvil::hlo {

// The op of a reducer `(a, b) -> a op b` when that single commutative op
// (add, multiply, maximum, minimum, and, or) is all it does.
std::optional<Opcode> SingleOpReducer(const Computation& body);

}  // namespace anvil::hlo
