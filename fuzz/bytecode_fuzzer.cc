// libFuzzer target for the third front door: any bytes read as a StableHLO
// portable artifact must give modules or a clean INVALID_ARGUMENT, never a
// crash, hang, leak or huge allocation. Seeds are the corpus's VHLO
// artifacts; the input is also read function by function, the way the
// corpus test reads it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hlo/printer.h"
#include "hlo/program_text.h"
#include "hlo/stablehlo_parser.h"
#include "hlo/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using anvil::hlo::StatusCode;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto modules = anvil::hlo::ParseProgramText(bytes, anvil::hlo::ProgramFormat::kStableHloBytecode);
  if (modules.ok()) {
    for (const auto& module : *modules) {
      if (anvil::hlo::Verify(*module).ok()) (void)anvil::hlo::Print(*module);
    }
  } else if (modules.status().code() != StatusCode::kInvalidArgument) {
    abort();  // only INVALID_ARGUMENT describes bad input
  }
  auto functions = anvil::hlo::ParseStableHloBytecodeFunctions(bytes);
  if (functions.ok()) {
    for (const auto& f : *functions) {
      if (!f.module.ok()) continue;
      if (anvil::hlo::Verify(*f.module.value()).ok()) (void)anvil::hlo::Print(*f.module.value());
    }
  }
  return 0;
}
