// A canonical HLO program made ready for a GPU plugin: parsed, its batch
// norms and scans expanded into ops the plan has kernels for, planned
// (hlo/kernel_plan.h), and its kernels emitted in a dialect.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir.h"
#include "hlo/kernel_plan.h"
#include "hlo/status.h"
#include "plugins/gpu/kernel_dialect.h"
#include "plugins/gpu/kernel_emitter.h"

namespace anvil::gpu {

struct PlannedProgram {
  std::unique_ptr<hlo::Module> module;  // what the plan points into
  hlo::ProgramPlan plan;
};

hlo::StatusOr<PlannedProgram> PlanProgram(std::string_view canonical_text);

// One kernel pass's module text, and the kernel's root for messages.
struct KernelModule {
  std::string name;  // "%fusion.3", or "%fusion.3 pass 2" for a later pass
  std::string text;
};

// Every distinct pass of every kernel of `plan`; the first kernel the
// generator refuses is the error (UNIMPLEMENTED naming it).
hlo::StatusOr<std::vector<KernelModule>> EmitProgramKernels(const hlo::ProgramPlan& plan, const KernelDialect& dialect,
                                                            const KernelOptions& options);

}  // namespace anvil::gpu
