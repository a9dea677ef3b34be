// libFuzzer target for the two text front doors: any bytes must give a
// module or a clean error, never a crash, hang or leak. Each input goes
// through both parsers, so seeds of either format reach both.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hlo/printer.h"
#include "hlo/program_text.h"
#include "hlo/stablehlo_parser.h"
#include "hlo/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using anvil::hlo::ProgramFormat;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (ProgramFormat format : {ProgramFormat::kHloText, ProgramFormat::kStableHloText}) {
    auto modules = anvil::hlo::ParseProgramText(text, format);
    if (!modules.ok()) continue;
    for (const auto& module : *modules) {
      if (anvil::hlo::Verify(*module).ok()) (void)anvil::hlo::Print(*module);
    }
  }
  // Function by function, the text parser recovers after a function it
  // cannot read: that path too must end cleanly.
  auto functions = anvil::hlo::ParseStableHloFunctions(text);
  if (functions.ok()) {
    for (const auto& f : *functions) {
      if (f.module.ok() && anvil::hlo::Verify(*f.module.value()).ok()) (void)anvil::hlo::Print(*f.module.value());
    }
  }
  return 0;
}
