// Kernel source for one planned kernel (hlo/kernel_plan.h), in a dialect
// (kernel_dialect.h). Every buffer is reached through its device address:
// the kernel gets the address of a table with one address per kernel
// input, then per output, then per scratch buffer, so a kernel has no
// binding slots and no binding-size limit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/kernel_plan.h"
#include "hlo/status.h"
#include "plugins/gpu/kernel_dialect.h"

namespace anvil::gpu {

struct KernelPass {
  std::string text;          // the module, in the dialect's language
  uint64_t invocations = 0;  // how many the pass runs (a grid-stride loop covers any rest)
};

struct KernelSource {
  // Run in order, each seeing what the one before wrote.
  std::vector<KernelPass> passes;
  std::vector<const hlo::Instruction*> inputs;  // table entries 0..n-1
  std::vector<hlo::Shape> outputs;              // then one per array leaf of the root
  std::vector<uint64_t> scratch_bytes;          // then working memory the passes share
};

struct KernelOptions {
  uint32_t workgroup_size = 64;
  // The most loop iterations one invocation may run, all its loops
  // together, or 0 for no limit. lavapipe ends every loop of an invocation
  // once it has run 65535 iterations in all (llvmpipe's
  // LP_MAX_TGSI_LOOP_ITERATIONS) and says nothing; a kernel that would run
  // more is refused (UNIMPLEMENTED, naming both numbers) instead of giving
  // wrong results.
  uint64_t max_loop_iterations = 0;
};

hlo::StatusOr<KernelSource> EmitKernel(const hlo::KernelSpec& kernel, const KernelDialect& dialect,
                                       const KernelOptions& options);

}  // namespace anvil::gpu
