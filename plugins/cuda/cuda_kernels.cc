#include "plugins/cuda/cuda_kernels.h"

#include <exception>

#include "plugins/gpu/cxx_dialect.h"
#include "plugins/gpu/host_jobs.h"
#include "plugins/gpu/program_kernels.h"

namespace anvil::cuda {

hlo::StatusOr<std::vector<CompiledKernel>> CompileProgramKernels(std::string_view canonical_text, int sm,
                                                                 const NvrtcCompiler& nvrtc,
                                                                 const anvil_plugin_host_executor& host) {
  ANVIL_ASSIGN_OR_RETURN(gpu::PlannedProgram program, gpu::PlanProgram(canonical_text));
  const gpu::CxxDialect dialect(gpu::CxxDialect::Language::kCuda, "the CUDA plugin");
  // 256 threads a block: a multiple of the 32-thread warp that keeps several
  // blocks resident per multiprocessor.
  gpu::KernelOptions options;
  options.workgroup_size = 256;
  ANVIL_ASSIGN_OR_RETURN(std::vector<gpu::KernelModule> modules, gpu::EmitProgramKernels(program.plan, dialect, options));
  std::vector<CompiledKernel> kernels(modules.size());
  std::vector<hlo::Status> failures(modules.size());
  gpu::RunOnHostThreads(host, modules.size(), [&](size_t k) {
    kernels[k].name = modules[k].name;
    kernels[k].source = std::move(modules[k].text);
    // No exception may leave work on core's threads.
    try {
      auto cubin = nvrtc.Compile(kernels[k].source, kernels[k].name, sm);
      if (cubin.ok()) {
        kernels[k].cubin = std::move(cubin).value();
      } else {
        failures[k] = hlo::Internal("NVRTC rejects the CUDA plugin's kernel " + kernels[k].name + " for sm_" +
                                    std::to_string(sm) + ": " + cubin.status().message());
      }
    } catch (const std::exception& e) {
      failures[k] = hlo::Internal("compiling kernel " + kernels[k].name + ": " + e.what());
    }
  });
  for (const hlo::Status& failure : failures) ANVIL_RETURN_IF_ERROR(failure);
  return kernels;
}

}  // namespace anvil::cuda
