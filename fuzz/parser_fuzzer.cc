// libFuzzer target for both front doors: any bytes must give a module or a
// clean error, never a crash, hang or leak. The first byte picks the format.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hlo/printer.h"
#include "hlo/program_text.h"
#include "hlo/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using anvil::hlo::ProgramFormat;
  ProgramFormat format = (data[0] & 1) ? ProgramFormat::kStableHloText : ProgramFormat::kHloText;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto modules = anvil::hlo::ParseProgramText(text, format);
  if (!modules.ok()) return 0;
  for (const auto& module : *modules) {
    if (anvil::hlo::Verify(*module).ok()) (void)anvil::hlo::Print(*module);
  }
  return 0;
}
