// A canonical HLO program made ready for a GPU plugin: parsed, its batch
// norms and scans expanded into ops the plan has kernels for, planned
// (hlo/kernel_plan.h), and its kernels emitted in a dialect.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
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

// Every kernel of a plan, emitted once: each kernel's source by its spec
// (what a KernelLoader's Emit hands the device program's builder), and
// every distinct pass once (what a compiler compiles).
struct EmittedProgram {
  std::unordered_map<const hlo::KernelSpec*, KernelSource> sources;
  std::vector<KernelModule> modules;
};

// The first kernel the generator refuses is the error (UNIMPLEMENTED
// naming it).
hlo::StatusOr<EmittedProgram> EmitProgram(const hlo::ProgramPlan& plan, const KernelDialect& dialect,
                                          const KernelOptions& options);
// EmitProgram's distinct passes alone.
hlo::StatusOr<std::vector<KernelModule>> EmitProgramKernels(const hlo::ProgramPlan& plan, const KernelDialect& dialect,
                                                            const KernelOptions& options);

}  // namespace anvil::gpu
