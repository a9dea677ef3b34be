#include "hlo/program_text.h"

#include <fstream>
#include <sstream>

#include "hlo/bytecode_reader.h"
#include "hlo/hlo_parser.h"
#include "hlo/stablehlo_parser.h"

namespace anvil::hlo {

std::optional<ProgramFormat> ProgramFormatFromName(std::string_view name) {
  if (name == "hlo") return ProgramFormat::kHloText;
  if (name == "stablehlo" || name == "mlir") return ProgramFormat::kStableHloText;
  if (name == "stablehlo-bytecode") return ProgramFormat::kStableHloBytecode;
  return std::nullopt;
}

std::optional<ProgramFormat> ProgramFormatFromPath(std::string_view path) {
  auto ends_with = [&](std::string_view s) {
    return path.size() >= s.size() && path.substr(path.size() - s.size()) == s;
  };
  if (ends_with(".hlo") || ends_with(".hlo.txt")) return ProgramFormat::kHloText;
  if (ends_with(".mlir.bc") || ends_with(".mlirbc")) return ProgramFormat::kStableHloBytecode;
  if (ends_with(".mlir")) return ProgramFormat::kStableHloText;
  return std::nullopt;
}

StatusOr<std::vector<std::unique_ptr<Module>>> ParseProgramText(std::string_view text, ProgramFormat format,
                                                                const SourceInfo& source) {
  switch (format) {
    case ProgramFormat::kHloText: return ParseHloText(text, source);
    case ProgramFormat::kStableHloText:
      if (bytecode::HasBytecodeMagic(text)) return ParseStableHloBytecode(text, source);
      return ParseStableHloText(text, source);
    case ProgramFormat::kStableHloBytecode: return ParseStableHloBytecode(text, source);
  }
  return InvalidArgument("unknown program format");
}

StatusOr<std::vector<std::unique_ptr<Module>>> ParseProgramFile(const std::string& path,
                                                                std::optional<ProgramFormat> format) {
  if (!format) format = ProgramFormatFromPath(path);
  if (!format) {
    return InvalidArgument(path + ": cannot tell the format from the extension (expected .hlo, .mlir or .mlir.bc); pass --format");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  return ParseProgramText(text, *format, SourceInfo{path, 1});
}

}  // namespace anvil::hlo
