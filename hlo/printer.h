// Prints the IR as canonical XLA HLO text: the contract between core and the
// plugins. `ParseHloModule(Print(m))` yields a module Equal to `m`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hlo/ir.h"

namespace anvil::hlo {

std::string Print(const Module& module);
// Several modules (a file of split-input chunks), separated by `// -----`
// lines, so that ParseHloText of the result reads every one of them again.
std::string PrintModules(const std::vector<std::unique_ptr<Module>>& modules);
std::string PrintInstruction(const Instruction& instruction);

}  // namespace anvil::hlo
