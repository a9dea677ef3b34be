// A program's kernels in CUDA C++ (the GPU layer's generator in its CUDA
// dialect), compiled by NVRTC to cubins for one compute capability.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "hlo/status.h"
#include "plugins/cuda/nvrtc_compiler.h"
#include "plugins/gpu/cxx_dialect.h"
#include "plugins/gpu/kernel_emitter.h"
#include "plugins/gpu/program_kernels.h"

namespace anvil::cuda {

// The CUDA dialect and its options: 256 threads a block, a multiple of the
// 32-thread warp that keeps several blocks resident per multiprocessor.
const gpu::CxxDialect& CudaDialect();
const gpu::KernelOptions& CudaKernelOptions();

struct CompiledKernel {
  std::string name;  // the kernel's root, for messages
  std::string source;
  std::vector<char> cubin;
};

// Compiles each of `modules` for sm_`sm` on core's host threads. The
// first failure is the error: NVRTC's log (a bug in the generator,
// reported as INTERNAL with the kernel's name).
hlo::StatusOr<std::vector<CompiledKernel>> CompileKernelModules(std::vector<gpu::KernelModule> modules, int sm,
                                                                const NvrtcCompiler& nvrtc,
                                                                const anvil_plugin_host_executor& host);

// Plans `canonical_text`, emits its kernels and compiles each distinct one
// (CompileKernelModules). A kernel the generator refuses is its
// UNIMPLEMENTED naming the instruction.
hlo::StatusOr<std::vector<CompiledKernel>> CompileProgramKernels(std::string_view canonical_text, int sm,
                                                                 const NvrtcCompiler& nvrtc,
                                                                 const anvil_plugin_host_executor& host);

}  // namespace anvil::cuda
