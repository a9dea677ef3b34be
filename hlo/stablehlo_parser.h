// Front door 2: StableHLO MLIR text (pretty and generic op forms, func.func,
// func.call, check.* ops), lowered into the same IR as HLO text.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "hlo/ir.h"
#include "hlo/text_cursor.h"

namespace anvil::hlo {

// Parses every module of a file; chunks split by `// -----` are separate modules.
StatusOr<std::vector<std::unique_ptr<Module>>> ParseStableHloText(std::string_view text, const SourceInfo& source = {});

}  // namespace anvil::hlo
