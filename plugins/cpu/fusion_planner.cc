#include "plugins/cpu/fusion_planner.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

#include "plugins/cpu/float_functions.h"
#include "plugins/cpu/kernels_fused.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

bool IsF32Array(const hlo::Shape& s) { return s.IsArray() && s.element_type() == ElementType::kF32; }

// An op a fused loop can compute: f32 in, f32 out, element k from element k.
bool IsLoopOp(const Instruction& i) {
  if (!IsF32Array(i.shape)) return false;
  for (const Instruction* o : i.operands) {
    if (!IsF32Array(o->shape) || o->shape.dims() != i.shape.dims()) return false;
  }
  auto any = [](auto) {};
  if (i.operands.size() == 2) return VisitFloatBinary(i.opcode, any);
  if (i.operands.size() == 1) return VisitFloatUnary(i.opcode, any);
  return false;
}

// A broadcast of an f32 scalar: every element is the same one.
bool IsScalarSplat(const Instruction& i) {
  return i.opcode == Opcode::kBroadcast && IsF32Array(i.shape) && i.operands.size() == 1 &&
         IsF32Array(i.operands[0]->shape) && i.operands[0]->shape.rank() == 0;
}

}  // namespace

FusionPlan PlanElementwiseFusion(const hlo::Computation& computation,
                                 const std::vector<const Instruction*>& outputs) {
  const auto& instructions = computation.instructions;
  FusionPlan plan;
  plan.group_of.assign(instructions.size(), -1);
  std::unordered_map<const Instruction*, size_t> index;
  std::unordered_map<const Instruction*, std::vector<const Instruction*>> users;
  for (size_t k = 0; k < instructions.size(); ++k) {
    index[instructions[k].get()] = k;
    for (const Instruction* o : instructions[k]->operands) users[o].push_back(instructions[k].get());
  }
  const std::set<const Instruction*> stored(outputs.begin(), outputs.end());
  // Whether `i` is computed inside its one user's loop.
  auto fused_into_user = [&](const Instruction* i) {
    if (stored.count(i) || i == computation.root || !(IsLoopOp(*i) || IsScalarSplat(*i))) return false;
    const auto& u = users[i];
    return u.size() == 1 && IsLoopOp(*u[0]) && u[0]->shape.ElementCount() == i->shape.ElementCount();
  };
  for (size_t k = instructions.size(); k-- > 0;) {
    const Instruction* root = instructions[k].get();
    if (!IsLoopOp(*root) || fused_into_user(root)) continue;
    FusionGroup group;
    std::function<void(const Instruction*)> collect = [&](const Instruction* i) {
      group.members.push_back(i);
      for (const Instruction* o : i->operands) {
        if (fused_into_user(o)) collect(o);
      }
    };
    collect(root);
    if (group.members.size() < 2) continue;  // nothing to fuse: the one-op kernel does
    std::sort(group.members.begin(), group.members.end(),
              [&](const Instruction* a, const Instruction* b) { return index[a] < index[b]; });
    const std::set<const Instruction*> in_group(group.members.begin(), group.members.end());
    for (const Instruction* m : group.members) {
      for (const Instruction* o : m->operands) {
        if (!in_group.count(o) && std::find(group.inputs.begin(), group.inputs.end(), o) == group.inputs.end()) {
          group.inputs.push_back(o);
        }
      }
    }
    // A tree so bushy that its tiles would not fit the loop's registers
    // stays unfused (no program seen needs more than a few).
    if (FusedRegistersNeeded(group.members) > kMaxFusedRegisters) continue;
    const int g = static_cast<int>(plan.groups.size());
    for (const Instruction* m : group.members) plan.group_of[index[m]] = g;
    plan.groups.push_back(std::move(group));
  }
  return plan;
}

}  // namespace anvil::cpu
