#include "plugins/cpu/fusion_planner.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>

#include "hlo/attributes.h"
#include "plugins/cpu/float_functions.h"
#include "plugins/cpu/kernels_fused.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

bool IsArrayOf(const hlo::Shape& s, ElementType t) { return s.IsArray() && s.element_type() == t; }

// Operand k of `i` is an array of type `t` with `i`'s dimensions.
bool SameDims(const Instruction& i, size_t k, ElementType t) {
  return k < i.operands.size() && IsArrayOf(i.operands[k]->shape, t) && i.operands[k]->shape.dims() == i.shape.dims();
}

}  // namespace

bool IsScalarSplat(const Instruction& i) {
  return i.opcode == Opcode::kBroadcast && IsArrayOf(i.shape, ElementType::kF32) && i.operands.size() == 1 &&
         IsArrayOf(i.operands[0]->shape, ElementType::kF32) && i.operands[0]->shape.rank() == 0;
}

std::optional<BroadcastRun> FusedBroadcastRun(const Instruction& i) {
  if (IsScalarSplat(i)) return BroadcastRun{1, 1};
  if (i.opcode != Opcode::kBroadcast || !IsArrayOf(i.shape, ElementType::kF32) || i.operands.size() != 1) {
    return std::nullopt;
  }
  const hlo::Shape& from = i.operands[0]->shape;
  if (!IsArrayOf(from, ElementType::kF32) || !from.HasDefaultLayout() || !i.shape.HasDefaultLayout()) {
    return std::nullopt;
  }
  auto dims = hlo::IntListAttribute(i, "dimensions");
  if (!dims.ok() || dims->size() != static_cast<size_t>(from.rank()) || dims->empty()) return std::nullopt;
  const int64_t first = (*dims)[0];
  BroadcastRun run{1, 1};
  for (size_t k = 0; k < dims->size(); ++k) {
    const int64_t d = (*dims)[k];
    if (d != first + static_cast<int64_t>(k) || d >= i.shape.rank() || i.shape.dims()[d] != from.dims()[k]) {
      return std::nullopt;
    }
    run.size *= from.dims()[k];
  }
  for (int64_t d = first + static_cast<int64_t>(dims->size()); d < i.shape.rank(); ++d) run.inner *= i.shape.dims()[d];
  return run;
}

bool IsFusedBroadcast(const Instruction& i) { return FusedBroadcastRun(i).has_value(); }

bool IsLoopOp(const Instruction& i) {
  constexpr ElementType kF32 = ElementType::kF32, kPred = ElementType::kPred;
  auto any = [](auto) {};
  const size_t n = i.operands.size();
  if (IsArrayOf(i.shape, kF32)) {
    if (i.opcode == Opcode::kSelect) return n == 3 && SameDims(i, 0, kPred) && SameDims(i, 1, kF32) && SameDims(i, 2, kF32);
    if (i.opcode == Opcode::kClamp) {
      auto bound = [&](size_t k) {
        return SameDims(i, k, kF32) || (IsArrayOf(i.operands[k]->shape, kF32) && i.operands[k]->shape.rank() == 0);
      };
      return n == 3 && SameDims(i, 1, kF32) && bound(0) && bound(2);
    }
    if (n == 2) return SameDims(i, 0, kF32) && SameDims(i, 1, kF32) && VisitFloatBinary(i.opcode, any);
    if (n == 1) return SameDims(i, 0, kF32) && VisitFloatUnary(i.opcode, any);
    return false;
  }
  if (IsArrayOf(i.shape, kPred)) {
    if (i.opcode == Opcode::kCompare) {
      const std::string type = hlo::StringAttribute(i, "type");
      return n == 2 && SameDims(i, 0, kF32) && SameDims(i, 1, kF32) && (type.empty() || type == "FLOAT") &&
             CompareDirectionKnown(hlo::StringAttribute(i, "direction"));
    }
    if (i.opcode == Opcode::kAnd || i.opcode == Opcode::kOr || i.opcode == Opcode::kXor) {
      return n == 2 && SameDims(i, 0, kPred) && SameDims(i, 1, kPred);
    }
    if (i.opcode == Opcode::kNot) return n == 1 && SameDims(i, 0, kPred);
  }
  return false;
}

FusionPlan PlanElementwiseFusion(const hlo::Computation& computation,
                                 const std::vector<const Instruction*>& outputs) {
  const auto& instructions = computation.instructions;
  FusionPlan plan;
  plan.group_of.assign(instructions.size(), -1);
  plan.inlined_everywhere.assign(instructions.size(), false);
  std::unordered_map<const Instruction*, size_t> index;
  std::unordered_map<const Instruction*, std::vector<const Instruction*>> users;
  for (size_t k = 0; k < instructions.size(); ++k) {
    index[instructions[k].get()] = k;
    for (const Instruction* o : instructions[k]->operands) users[o].push_back(instructions[k].get());
  }
  const std::set<const Instruction*> stored(outputs.begin(), outputs.end());
  // Whether loop op `i` is computed inside its one user's loop.
  auto fused_into_user = [&](const Instruction* i) {
    if (stored.count(i) || i == computation.root || !IsLoopOp(*i)) return false;
    const auto& u = users[i];
    return u.size() == 1 && IsLoopOp(*u[0]) && u[0]->shape.ElementCount() == i->shape.ElementCount();
  };
  for (size_t k = instructions.size(); k-- > 0;) {
    const Instruction* root = instructions[k].get();
    if (!IsLoopOp(*root) || fused_into_user(root) || plan.group_of[k] >= 0) continue;
    FusionGroup group;
    std::set<const Instruction*> in_group;
    std::function<void(const Instruction*)> collect = [&](const Instruction* i) {
      if (!in_group.insert(i).second) return;
      group.members.push_back(i);
      if (IsFusedBroadcast(*i)) return;
      for (const Instruction* o : i->operands) {
        if (fused_into_user(o) || IsFusedBroadcast(*o)) collect(o);
      }
    };
    collect(root);
    // Then the group grows into a DAG: a loop op every user of which is in
    // the group (GELU's x, read by four of its ops) is computed once, into
    // a register, rather than stored and read back. Kept only if the
    // registers still suffice.
    const FusionGroup tree = group;
    const std::set<const Instruction*> tree_members = in_group;
    auto joins = [&](const Instruction* o) {
      if (in_group.count(o) || stored.count(o) || o == computation.root || !IsLoopOp(*o) ||
          plan.group_of[index[o]] >= 0 || o->shape.ElementCount() != root->shape.ElementCount()) {
        return false;
      }
      const auto& u = users[o];
      return !u.empty() && std::all_of(u.begin(), u.end(), [&](const Instruction* user) { return in_group.count(user) > 0; });
    };
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t m = 0; m < group.members.size(); ++m) {
        if (IsFusedBroadcast(*group.members[m])) continue;
        for (const Instruction* o : group.members[m]->operands) {
          if (joins(o)) {
            collect(o);
            grew = true;
          }
        }
      }
    }
    if (group.members.size() > tree.members.size()) {
      std::vector<const Instruction*> sorted = group.members;
      std::sort(sorted.begin(), sorted.end(), [&](const Instruction* a, const Instruction* b) { return index[a] < index[b]; });
      if (FusedRegistersNeeded(sorted) > kMaxFusedRegisters) {
        group = tree;
        in_group = tree_members;
      }
    }
    if (group.members.size() < 2) continue;  // nothing to fuse: the one-op kernel does
    std::sort(group.members.begin(), group.members.end(),
              [&](const Instruction* a, const Instruction* b) { return index[a] < index[b]; });
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
    for (const Instruction* m : group.members) {
      if (!IsFusedBroadcast(*m)) plan.group_of[index[m]] = g;
    }
    plan.groups.push_back(std::move(group));
  }
  // A fused broadcast is stored only when something outside a group reads it.
  for (size_t k = 0; k < instructions.size(); ++k) {
    const Instruction* i = instructions[k].get();
    if (!IsFusedBroadcast(*i) || stored.count(i) || i == computation.root) continue;
    const auto& u = users[i];
    plan.inlined_everywhere[k] =
        !u.empty() && std::all_of(u.begin(), u.end(), [&](const Instruction* user) { return plan.group_of[index[user]] >= 0; });
  }
  return plan;
}

}  // namespace anvil::cpu
