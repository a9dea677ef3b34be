// One entry point for the three front doors: parse a program in a named
// format (HLO text, StableHLO text, StableHLO portable artifact) into
// modules of the one IR.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir.h"
#include "hlo/text_cursor.h"

namespace anvil::hlo {

enum class ProgramFormat { kHloText, kStableHloText, kStableHloBytecode };

// "hlo" / "stablehlo" (also "mlir") / "stablehlo-bytecode"; nullopt for
// anything else.
std::optional<ProgramFormat> ProgramFormatFromName(std::string_view name);
// From a file name's extension: `.hlo`, `.mlir`, or `.mlir.bc` / `.mlirbc`.
std::optional<ProgramFormat> ProgramFormatFromPath(std::string_view path);

// Parses every module in `text` (text files may hold several, split by
// `// -----`). `text` is bytes: a portable artifact holds NULs. StableHLO
// text that starts with the bytecode magic is read as bytecode.
StatusOr<std::vector<std::unique_ptr<Module>>> ParseProgramText(std::string_view text, ProgramFormat format,
                                                                const SourceInfo& source = {});

// Reads and parses a file; the format comes from the extension unless given.
StatusOr<std::vector<std::unique_ptr<Module>>> ParseProgramFile(const std::string& path,
                                                                std::optional<ProgramFormat> format = std::nullopt);

}  // namespace anvil::hlo
