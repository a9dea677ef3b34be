// A program's kernels in HIP C++ (the GPU layer's generator in its HIP
// dialect), compiled offline by clang to AMD GPU code objects for one gfx
// target.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "hlo/status.h"
#include "plugins/gpu/cxx_dialect.h"
#include "plugins/gpu/kernel_emitter.h"
#include "plugins/gpu/program_kernels.h"
#include "plugins/rocm/hip_compiler.h"

namespace anvil::rocm {

// The HIP dialect and its options: 256 work-items a workgroup.
const gpu::CxxDialect& RocmDialect();
const gpu::KernelOptions& RocmKernelOptions();

struct CompiledKernel {
  std::string name;    // the kernel's root, for messages
  std::string entry;   // its function in the code object ("anvil_kernel_3")
  std::string source;  // the dialect's module text
  size_t code_object = 0;  // which of CompiledProgram::code_objects holds it
};

struct CompiledProgram {
  std::vector<CompiledKernel> kernels;
  std::vector<std::vector<char>> code_objects;  // raw ELF, EM_AMDGPU
};

// Plans `canonical_text`, emits its kernels and compiles them for `target`
// ("gfx90a") on core's host threads. clang's start-up is most of a small
// module's compile, so the kernels go to clang in `batches` translation
// units (0: one per 32 kernels, at most one per host core), each kernel in
// a namespace of its own with a unique entry. The first failure
// is the error: the generator's UNIMPLEMENTED naming the instruction, or
// clang's diagnostics for the kernel it rejects (a generator bug: INTERNAL).
hlo::StatusOr<CompiledProgram> CompileProgramKernels(std::string_view canonical_text, const std::string& target,
                                                     const HipCompiler& compiler,
                                                     const anvil_plugin_host_executor& host, size_t batches = 0);

// CompileProgramKernels' compile step: `modules` (the dialect's, emitted
// with RocmKernelOptions) for `target`.
hlo::StatusOr<CompiledProgram> CompileKernelModules(std::vector<gpu::KernelModule> modules, const std::string& target,
                                                    const HipCompiler& compiler,
                                                    const anvil_plugin_host_executor& host, size_t batches = 0);

// The modules `texts` as one HIP translation unit: HIP's header once at file
// scope, module k in namespace anvil_k<first + k> with entry anvil_kernel_<first + k>.
hlo::StatusOr<std::string> BatchModules(const std::vector<const std::string*>& texts, size_t first);

}  // namespace anvil::rocm
