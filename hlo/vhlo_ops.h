// Turns the generic op tree of a VHLO portable artifact into the StableHLO
// syntax tree the text parser produces: `vhlo.func_v1` into functions, each
// versioned VHLO op into its StableHLO op with the attributes renamed and
// regrouped the way the StableHLO text spells them. Internal to hlo/.
#pragma once

#include <string>

#include "hlo/bytecode_reader.h"
#include "hlo/mlir_syntax.h"

namespace anvil::hlo::vhlo {

// The newest VHLO version whose ops this reader knows.
inline constexpr int kNewestMajor = 1, kNewestMinor = 20;

// Reads the module of `file`. Corrupt data fails the whole read; a function
// that uses what Anvil does not run (dynamic shapes, quantized types, an op
// Anvil lacks) gets its `error` set and the others are read.
StatusOr<mlir::ModuleSyntax> ReadModule(const bytecode::File& file, const std::string* name);

}  // namespace anvil::hlo::vhlo
