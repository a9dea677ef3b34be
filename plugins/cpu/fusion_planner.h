// Which instructions of a computation the CPU plugin fuses into loops: f32
// elementwise ops (and broadcasts of f32 scalars) whose value has one user,
// that user an f32 elementwise op of the same element count, are computed
// inside their user's loop, tile by tile, instead of being stored and read
// back. Each maximal such tree is a group, run by one fused kernel rooted at
// the instruction whose value is stored.
#pragma once

#include <vector>

#include "hlo/ir.h"

namespace anvil::cpu {

struct FusionGroup {
  // The group's instructions in definition order; the root (stored) last.
  std::vector<const hlo::Instruction*> members;
  // Values the group reads from memory, in first-read order.
  std::vector<const hlo::Instruction*> inputs;
};

struct FusionPlan {
  std::vector<FusionGroup> groups;
  // For each instruction of the computation, by its index there: the group
  // it belongs to, or -1.
  std::vector<int> group_of;
  bool IsRoot(size_t index, const hlo::Instruction* i) const {
    return group_of[index] >= 0 && groups[group_of[index]].members.back() == i;
  }
};

// The groups of `computation`; `outputs` are the instructions whose values
// leave it (the root's leaves), which are always stored.
FusionPlan PlanElementwiseFusion(const hlo::Computation& computation,
                                 const std::vector<const hlo::Instruction*>& outputs);

}  // namespace anvil::cpu
