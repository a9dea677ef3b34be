#include "plugins/gpu/program_kernels.h"

#include <unordered_set>

#include "hlo/batch_norm_expander.h"
#include "hlo/hlo_parser.h"
#include "hlo/rng_bit_generator_expander.h"
#include "hlo/scan_expander.h"

namespace anvil::gpu {

hlo::StatusOr<PlannedProgram> PlanProgram(std::string_view canonical_text) {
  PlannedProgram program;
  ANVIL_ASSIGN_OR_RETURN(program.module, hlo::ParseHloModule(canonical_text, {"canonical", 1}));
  ANVIL_RETURN_IF_ERROR(hlo::ExpandBatchNorm(*program.module));
  ANVIL_RETURN_IF_ERROR(hlo::ExpandScans(*program.module));
  ANVIL_RETURN_IF_ERROR(hlo::ExpandRngBitGenerators(*program.module));
  ANVIL_ASSIGN_OR_RETURN(program.plan, hlo::PlanKernels(*program.module));
  return program;
}

hlo::StatusOr<EmittedProgram> EmitProgram(const hlo::ProgramPlan& plan, const KernelDialect& dialect,
                                          const KernelOptions& options) {
  EmittedProgram program;
  std::unordered_set<std::string> seen;
  for (const hlo::ComputationPlan& computation : plan.computations) {
    for (const hlo::PlanStep& step : computation.steps) {
      if (step.kind != hlo::PlanStep::Kind::kKernel) continue;
      ANVIL_ASSIGN_OR_RETURN(KernelSource source, EmitKernel(step.kernel, dialect, options));
      for (size_t p = 0; p < source.passes.size(); ++p) {
        if (!seen.insert(source.passes[p].text).second) continue;
        std::string name = "%" + step.kernel.root->name + (p ? " pass " + std::to_string(p + 1) : "");
        program.modules.push_back({std::move(name), source.passes[p].text});
      }
      program.sources.emplace(&step.kernel, std::move(source));
    }
  }
  return program;
}

hlo::StatusOr<std::vector<KernelModule>> EmitProgramKernels(const hlo::ProgramPlan& plan, const KernelDialect& dialect,
                                                            const KernelOptions& options) {
  ANVIL_ASSIGN_OR_RETURN(EmittedProgram program, EmitProgram(plan, dialect, options));
  return std::move(program.modules);
}

}  // namespace anvil::gpu
