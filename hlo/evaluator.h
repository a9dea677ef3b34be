// The reference evaluator: the project's oracle. Runs a computation on
// literals with the semantics of the StableHLO spec, element by element,
// with no concern for speed. Plugins are tested against it.
#pragma once

#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"
#include "hlo/status.h"

namespace anvil::hlo {

// Evaluates `computation` with one literal per parameter. The result is the
// root's value (a tuple literal for a tuple root). UNIMPLEMENTED names an op
// the evaluator does not run yet.
StatusOr<Literal> Evaluate(const Computation& computation, const std::vector<const Literal*>& arguments);

// One instruction on its operands' values (its called computations are
// evaluated as needed). Parameters are not instructions this takes.
StatusOr<Literal> EvaluateInstruction(const Instruction& instruction, const std::vector<const Literal*>& operands);

// The entry computation of `module`.
StatusOr<Literal> EvaluateModule(const Module& module, const std::vector<const Literal*>& arguments);

}  // namespace anvil::hlo
