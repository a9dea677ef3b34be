// Front doors 2 and 3: StableHLO MLIR text (pretty and generic op forms,
// func.func, func.call, check.* ops) and StableHLO portable artifacts (MLIR
// bytecode of the VHLO dialect, as JAX serialises programs), both lowered
// into the same IR as HLO text.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir.h"
#include "hlo/text_cursor.h"

namespace anvil::hlo {

// Parses every module of a file; chunks split by `// -----` are separate modules.
StatusOr<std::vector<std::unique_ptr<Module>>> ParseStableHloText(std::string_view text, const SourceInfo& source = {});

// Reads a portable artifact (the bytes, which may hold NULs) into one module.
// Corrupt or truncated bytes give INVALID_ARGUMENT naming the byte offset.
StatusOr<std::vector<std::unique_ptr<Module>>> ParseStableHloBytecode(std::string_view bytes,
                                                                      const SourceInfo& source = {});

// One public function lowered as the entry of a module of its own (with the
// functions it calls), or why it cannot be: reading function by function
// lets one function Anvil cannot run fail alone.
struct FunctionModule {
  std::string name;
  StatusOr<std::unique_ptr<Module>> module;
};
StatusOr<std::vector<FunctionModule>> ParseStableHloFunctions(std::string_view text, const SourceInfo& source = {});
StatusOr<std::vector<FunctionModule>> ParseStableHloBytecodeFunctions(std::string_view bytes,
                                                                      const SourceInfo& source = {});

}  // namespace anvil::hlo
