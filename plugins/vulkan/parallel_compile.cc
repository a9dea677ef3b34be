#include "plugins/vulkan/parallel_compile.h"

#include <exception>
#include <string>
#include <unordered_set>
#include <vector>

#include "plugins/gpu/host_jobs.h"
#include "plugins/vulkan/spirv_compiler.h"

namespace anvil::vulkan {
namespace {

struct Job {
  std::string key, glsl, name;
  hlo::StatusOr<std::vector<uint32_t>> words = std::vector<uint32_t>{};
};

}  // namespace

hlo::StatusOr<CompiledKernels> CompileKernels(const hlo::ProgramPlan& plan, const GlslTarget& target,
                                              Device& device, const anvil_plugin_host_executor& host) {
  CompiledKernels out;
  std::vector<Job> jobs;
  std::unordered_set<std::string> queued;
  for (const hlo::ComputationPlan& computation : plan.computations) {
    for (const hlo::PlanStep& step : computation.steps) {
      if (step.kind != hlo::PlanStep::Kind::kKernel) continue;
      auto shaders = target.Emit(step.kernel);
      if (!shaders.ok()) continue;
      for (const gpu::KernelPass& pass : shaders->passes) {
        std::string key = GlslKey(pass.text);
        if (!queued.insert(key).second || device.FindPipeline(pass.text)) continue;
        jobs.push_back(Job{std::move(key), pass.text, step.kernel.root->name});
      }
      out.shaders.emplace(&step.kernel, std::move(shaders).value());
    }
  }
  gpu::RunOnHostThreads(host, jobs.size(), [&](size_t k) {
    // No exception may leave work on core's threads.
    try {
      jobs[k].words = CompileGlsl(jobs[k].glsl, jobs[k].name);
    } catch (const std::exception& e) {
      jobs[k].words = hlo::Internal("compiling kernel " + jobs[k].name + ": " + e.what());
    }
  });
  for (Job& job : jobs) {
    if (!job.words.ok()) return job.words.status();
    out.spirv.emplace(std::move(job.key), std::move(job.words).value());
  }
  return out;
}

}  // namespace anvil::vulkan
