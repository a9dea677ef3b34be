#include "plugins/vulkan/parallel_compile.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "plugins/vulkan/spirv_compiler.h"

namespace anvil::vulkan {
namespace {

struct Job {
  std::string key, glsl, name;
  hlo::StatusOr<std::vector<uint32_t>> words = std::vector<uint32_t>{};
};

// Shared by the caller and the helpers it enqueued: each takes the next
// job until none is left; the caller waits until every job is finished.
struct Batch {
  std::vector<Job> jobs;
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  size_t finished = 0;

  void Work() {
    for (size_t k; (k = next.fetch_add(1)) < jobs.size();) {
      // No exception may leave work on core's threads.
      try {
        jobs[k].words = CompileGlsl(jobs[k].glsl, jobs[k].name);
      } catch (const std::exception& e) {
        jobs[k].words = hlo::Internal("compiling kernel " + jobs[k].name + ": " + e.what());
      }
      std::lock_guard<std::mutex> lock(mu);
      if (++finished == jobs.size()) cv.notify_all();
    }
  }
};

}  // namespace

hlo::StatusOr<CompiledKernels> CompileKernels(const hlo::ProgramPlan& plan, const GlslTarget& target,
                                              Device& device, const anvil_plugin_host_executor& host) {
  CompiledKernels out;
  auto batch = std::make_shared<Batch>();
  std::unordered_set<std::string> queued;
  for (const hlo::ComputationPlan& computation : plan.computations) {
    for (const hlo::PlanStep& step : computation.steps) {
      if (step.kind != hlo::PlanStep::Kind::kKernel) continue;
      auto shaders = target.Emit(step.kernel);
      if (!shaders.ok()) continue;
      for (const gpu::KernelPass& pass : shaders->passes) {
        std::string key = GlslKey(pass.text);
        if (!queued.insert(key).second || device.FindPipeline(pass.text)) continue;
        batch->jobs.push_back(Job{std::move(key), pass.text, step.kernel.root->name});
      }
      out.shaders.emplace(&step.kernel, std::move(shaders).value());
    }
  }
  const size_t threads = std::max(1u, std::thread::hardware_concurrency());
  for (size_t h = 1; h < threads && h < batch->jobs.size(); ++h) {
    auto* helper = new std::shared_ptr<Batch>(batch);
    host.enqueue(
        host.executor,
        [](void* arg) {
          std::unique_ptr<std::shared_ptr<Batch>> owned(static_cast<std::shared_ptr<Batch>*>(arg));
          (*owned)->Work();
        },
        helper);
  }
  batch->Work();  // the caller compiles too, so no job waits for a free worker
  {
    std::unique_lock<std::mutex> lock(batch->mu);
    batch->cv.wait(lock, [&] { return batch->finished == batch->jobs.size(); });
  }
  for (Job& job : batch->jobs) {
    if (!job.words.ok()) return job.words.status();
    out.spirv.emplace(std::move(job.key), std::move(job.words).value());
  }
  return out;
}

}  // namespace anvil::vulkan
