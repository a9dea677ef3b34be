// The CPU plugin's compile options: what anvil_compile_args.options holds
// for it, `name=value` pairs separated by commas or spaces ("" or NULL:
// every default). The one option so far:
//
//   flush_denormals=true|false  flush subnormal results and operands to
//                               zero while the executable runs, as XLA's
//                               CPU client does (float_mode.h); default
//                               false, IEEE's gradual underflow.
//
// An unknown name or a value that is not one of the option's is
// INVALID_ARGUMENT naming it, so that a misspelt option is not silently
// ignored.
#pragma once

#include <string_view>

#include "hlo/status.h"

namespace anvil::cpu {

struct CompileOptions {
  bool flush_denormals = false;
};

hlo::StatusOr<CompileOptions> ParseCompileOptions(std::string_view text);

}  // namespace anvil::cpu
