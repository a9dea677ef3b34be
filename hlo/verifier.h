// Checks a module before anything runs it: every value is defined before it
// is used, every op's operands fit it, and every declared shape agrees with
// the shape inferred from the operands per the StableHLO spec.
#pragma once

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

Status Verify(const Module& module);

// The shape `instruction` must have given its operands and attributes, or an
// error naming what is wrong. For ops whose result the operands do not
// determine (custom-call, parameter, constant, rng...), the declared shape.
StatusOr<Shape> InferShape(const Instruction& instruction);

}  // namespace anvil::hlo
