#include "plugins/cuda/cuda_kernels.h"

#include <exception>

#include "plugins/gpu/host_jobs.h"

namespace anvil::cuda {

const gpu::CxxDialect& CudaDialect() {
  static const gpu::CxxDialect dialect(gpu::CxxDialect::Language::kCuda, "the CUDA plugin");
  return dialect;
}

const gpu::KernelOptions& CudaKernelOptions() {
  static const gpu::KernelOptions options{256};
  return options;
}

hlo::StatusOr<std::vector<CompiledKernel>> CompileKernelModules(std::vector<gpu::KernelModule> modules, int sm,
                                                                const NvrtcCompiler& nvrtc,
                                                                const anvil_plugin_host_executor& host) {
  std::vector<CompiledKernel> kernels(modules.size());
  std::vector<hlo::Status> failures(modules.size());
  gpu::RunOnHostThreads(host, modules.size(), [&](size_t k) {
    kernels[k].name = modules[k].name;
    kernels[k].source = std::move(modules[k].text);
    // No exception may leave work on core's threads.
    try {
      // No contraction of a*b+c into a fused multiply-add: it rounds once
      // where the HLO rounds twice, and the CPU and Vulkan plugins, the
      // reference evaluator and exact (0-ulp) checks all round twice.
      auto cubin = nvrtc.Compile(kernels[k].source, kernels[k].name, sm, {"--fmad=false"});
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

hlo::StatusOr<std::vector<CompiledKernel>> CompileProgramKernels(std::string_view canonical_text, int sm,
                                                                 const NvrtcCompiler& nvrtc,
                                                                 const anvil_plugin_host_executor& host) {
  ANVIL_ASSIGN_OR_RETURN(gpu::PlannedProgram program, gpu::PlanProgram(canonical_text));
  ANVIL_ASSIGN_OR_RETURN(std::vector<gpu::KernelModule> modules,
                         gpu::EmitProgramKernels(program.plan, CudaDialect(), CudaKernelOptions()));
  return CompileKernelModules(std::move(modules), sm, nvrtc, host);
}

}  // namespace anvil::cuda
