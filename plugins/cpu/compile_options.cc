#include "plugins/cpu/compile_options.h"

#include <string>

namespace anvil::cpu {

hlo::StatusOr<CompileOptions> ParseCompileOptions(std::string_view text) {
  CompileOptions options;
  auto separator = [](char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n'; };
  size_t at = 0;
  while (at < text.size()) {
    if (separator(text[at])) {
      ++at;
      continue;
    }
    size_t end = at;
    while (end < text.size() && !separator(text[end])) ++end;
    const std::string_view pair = text.substr(at, end - at);
    at = end;
    const size_t equals = pair.find('=');
    const std::string_view name = pair.substr(0, equals);
    const std::string_view value = equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1);
    if (name == "flush_denormals") {
      if (value == "true" || value == "1") {
        options.flush_denormals = true;
      } else if (value == "false" || value == "0") {
        options.flush_denormals = false;
      } else {
        return hlo::InvalidArgument("CPU plugin option flush_denormals: '" + std::string(value) +
                                    "' is not true, false, 1 or 0");
      }
      continue;
    }
    return hlo::InvalidArgument("unknown CPU plugin option '" + std::string(name) +
                                "' (the CPU plugin knows flush_denormals=true|false)");
  }
  return options;
}

}  // namespace anvil::cpu
