// The reference evaluator: the project's oracle. Runs a computation on
// literals with the semantics of the StableHLO spec, element by element,
// with no concern for speed. Plugins are tested against it.
#pragma once

#include <cstdint>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"
#include "hlo/status.h"

namespace anvil::hlo {

// The state an rng-get-and-update-state starts from, as XLA's CPU runtime
// has it (a nonzero value, so a first PHILOX draw keyed by it is not the
// all-zero key's). Each such op keeps its own 128-bit state: every run
// returns the state as u64[2] {low, high} and then adds its `delta`. The
// evaluator keeps states for one evaluation; a plugin for its executable.
inline constexpr uint64_t kRngStateInitialValue = 0x7012395;

// Evaluates `computation` with one literal per parameter. The result is the
// root's value (a tuple literal for a tuple root). UNIMPLEMENTED names an op
// the evaluator does not run yet.
StatusOr<Literal> Evaluate(const Computation& computation, const std::vector<const Literal*>& arguments);

// One instruction on its operands' values (its called computations are
// evaluated as needed). Parameters are not instructions this takes.
StatusOr<Literal> EvaluateInstruction(const Instruction& instruction, const std::vector<const Literal*>& operands);

// Whether the evaluator knows what custom-call `instruction` computes (its
// target, or a called computation carrying its implementation). A plugin
// that hands such a call to the evaluator can refuse the others when it
// compiles, rather than fail when it runs.
bool EvaluatorRunsCustomCall(const Instruction& instruction);

// The entry computation of `module`.
StatusOr<Literal> EvaluateModule(const Module& module, const std::vector<const Literal*>& arguments);

}  // namespace anvil::hlo
