// Prints the IR as canonical XLA HLO text: the contract between core and the
// plugins. `ParseHloModule(Print(m))` yields a module Equal to `m`.
#pragma once

#include <string>

#include "hlo/ir.h"

namespace anvil::hlo {

std::string Print(const Module& module);
std::string PrintInstruction(const Instruction& instruction);

}  // namespace anvil::hlo
