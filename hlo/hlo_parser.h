// Front door 1: XLA HLO text, as XLA prints it.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "hlo/ir.h"
#include "hlo/text_cursor.h"

namespace anvil::hlo {

// Parses every module of a file (modules may be split by `// -----` lines).
StatusOr<std::vector<std::unique_ptr<Module>>> ParseHloText(std::string_view text, const SourceInfo& source = {});
// Parses text that holds exactly one module.
StatusOr<std::unique_ptr<Module>> ParseHloModule(std::string_view text, const SourceInfo& source = {});
// Parses one shape in HLO spelling (`f32[2,3]{1,0}`, `(s32[], f32[4])`).
StatusOr<Shape> ParseHloShape(std::string_view text);

}  // namespace anvil::hlo
