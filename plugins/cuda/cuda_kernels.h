// A program's kernels in CUDA C++ (the GPU layer's generator in its CUDA
// dialect), compiled by NVRTC to cubins for one compute capability.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "hlo/status.h"
#include "plugins/cuda/nvrtc_compiler.h"

namespace anvil::cuda {

struct CompiledKernel {
  std::string name;  // the kernel's root, for messages
  std::string source;
  std::vector<char> cubin;
};

// Plans `canonical_text`, emits its kernels and compiles each distinct one
// for sm_`sm` on core's host threads. The first failure is the error: the
// generator's UNIMPLEMENTED naming the instruction, or NVRTC's log (a bug
// in the generator, reported as INTERNAL with the kernel's name).
hlo::StatusOr<std::vector<CompiledKernel>> CompileProgramKernels(std::string_view canonical_text, int sm,
                                                                 const NvrtcCompiler& nvrtc,
                                                                 const anvil_plugin_host_executor& host);

}  // namespace anvil::cuda
