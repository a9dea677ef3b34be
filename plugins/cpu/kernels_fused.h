// The fused loop kernel: a group of f32 elementwise ops (fusion_planner.h)
// run tile by tile. Each tile of up to kFusedTile elements goes through the
// group's ops in order, intermediate values living in a few tile-sized
// registers on the stack (in L1) instead of in memory; only the root's
// value is stored. Every op is the same function object as its one-op
// kernel (float_functions.h), so fusion changes no result.
#pragma once

#include <vector>

#include "hlo/ir.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {

inline constexpr int kMaxFusedRegisters = 8;
inline constexpr int64_t kFusedTile = 1024;

// The tile registers a group needs at most at once (members in definition
// order, root last; each non-root member has its one user in the group).
int FusedRegistersNeeded(const std::vector<const hlo::Instruction*>& members);

// The kernel for a group whose `inputs` (the values it reads from memory)
// are at `input_slots`, storing the root's value at `out`; nullptr if some
// member is not a fusible op.
Kernel FusedElementwiseKernel(const std::vector<const hlo::Instruction*>& members,
                              const std::vector<const hlo::Instruction*>& inputs, const std::vector<Slot>& input_slots,
                              const Slot& out);

}  // namespace anvil::cpu
