// The CPU plugin's serialised executable, what the compile cache keeps: the
// canonical module in its binary form (the plan's kernels are closures over
// its instructions, so the plan is built again from it) and oneDNN's
// choices for its convolutions (conv_layouts.h), so that the rebuild asks
// oneDNN nothing, and the compile options it was built with. Bytes of another version, truncated or corrupt, are
// INVALID_ARGUMENT naming the byte offset (core then compiles afresh).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "hlo/ir.h"
#include "hlo/status.h"
#include "plugins/cpu/compile_options.h"
#include "plugins/cpu/conv_layouts.h"

namespace anvil::cpu {

struct SerializedExecutable {
  std::unique_ptr<hlo::Module> module;
  std::unique_ptr<ConvLayoutBook> layouts;
  CompileOptions options;
};

std::string WriteExecutable(const hlo::Module& module, const ConvLayoutBook& layouts, const CompileOptions& options);
hlo::StatusOr<SerializedExecutable> ReadExecutable(std::string_view bytes);

}  // namespace anvil::cpu
