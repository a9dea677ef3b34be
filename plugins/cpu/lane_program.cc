#include "plugins/cpu/lane_program.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <utility>

#include "hlo/attributes.h"
#include "hlo/scalar_ops.h"
#include "plugins/cpu/isa.h"
#include "plugins/cpu/reducers.h"

namespace anvil::cpu {
namespace {

// The steps' loops, compiled three times: for the baseline x86-64 the
// plugin is built for, for AVX2 and for AVX-512, each in its own namespace
// (as kernels_fused.cc does with its tiles). No multiply-add is contracted
// (-ffp-contract=off, CMakeLists.txt), so every copy gives the same bits.
namespace baseline {
#include "plugins/cpu/lane_steps.inc"
}  // namespace baseline
#if defined(__x86_64__) && defined(__GNUC__)
#define ANVIL_HAVE_WIDE_LANES 1
#pragma GCC push_options
#pragma GCC target("avx2")
namespace avx2 {
#include "plugins/cpu/lane_steps.inc"
}  // namespace avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw", "prefer-vector-width=512")
namespace avx512 {
#include "plugins/cpu/lane_steps.inc"
}  // namespace avx512
#pragma GCC pop_options
#endif

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

bool IsLaneType(ElementType t) { return t == ElementType::kF32 || t == ElementType::kS32 || t == ElementType::kPred; }

bool IsLaneScalar(const hlo::Shape& s) { return s.IsArray() && s.dims().empty() && IsLaneType(s.element_type()); }

}  // namespace

std::optional<LaneProgram> LaneProgram::Compile(const hlo::Computation& computation) {
  LaneProgram p;
  if (!computation.root) return std::nullopt;
  std::unordered_map<const Instruction*, int> register_of;
  auto add_register = [&](const Instruction& i) {
    register_of[&i] = static_cast<int>(p.types_.size());
    p.types_.push_back(i.shape.element_type());
    p.initial_.emplace_back();
    return register_of[&i];
  };
  p.parameter_count_ = static_cast<int>(computation.parameters.size());
  for (const Instruction* param : computation.parameters) {
    if (!param || !IsLaneScalar(param->shape)) return std::nullopt;
    add_register(*param);
  }
  for (const auto& owned : computation.instructions) {
    const Instruction& i = *owned;
    if (i.opcode == Opcode::kParameter) continue;
    if (&i == computation.root && i.opcode == Opcode::kTuple) continue;
    if (!IsLaneScalar(i.shape)) return std::nullopt;
    const ElementType type = i.shape.element_type();
    std::vector<int> in;
    for (const Instruction* o : i.operands) {
      auto found = register_of.find(o);
      if (found == register_of.end()) return std::nullopt;
      in.push_back(found->second);
    }
    if (i.opcode == Opcode::kConstant) {
      if (!i.literal || i.literal->elided() || i.literal->element_count() != 1) return std::nullopt;
      Register& r = p.initial_[add_register(i)];
      const size_t bytes = type == ElementType::kPred ? 1 : 4;
      for (int j = 0; j < kLanes; ++j) std::memcpy(r.bytes + j * bytes, i.literal->data().data(), bytes);
      if (type == ElementType::kPred) {
        for (int j = 0; j < kLanes; ++j) r.bytes[j] = r.bytes[j] != 0;
      }
      continue;
    }
    Step step{};
    const ElementType operand = i.operands.empty() ? type : i.operands[0]->shape.element_type();
    for (const Instruction* o : i.operands) {
      // Mixed operand types appear only in select (a pred and two values).
      if (i.opcode != Opcode::kSelect && o->shape.element_type() != operand) return std::nullopt;
    }
    const bool f32 = operand == ElementType::kF32, s32 = operand == ElementType::kS32;
    const bool pred = operand == ElementType::kPred;
    switch (i.opcode) {
      case Opcode::kCompare: {
        if (in.size() != 2 || !(f32 || s32)) return std::nullopt;
        const hlo::Attribute* order = i.FindAttribute("type");
        if (order && order->value != "FLOAT" && order->value != "SIGNED") return std::nullopt;
        const hlo::Attribute* direction = i.FindAttribute("direction");
        auto mask = hlo::CompareDirectionMask(direction ? direction->value : "");
        if (!mask.ok()) return std::nullopt;
        step.op = f32 ? Op::kCompareF32 : Op::kCompareS32;
        step.mask = *mask;
        break;
      }
      case Opcode::kSelect:
        if (in.size() != 3 || !pred || i.operands[1]->shape.element_type() != type ||
            i.operands[2]->shape.element_type() != type) {
          return std::nullopt;
        }
        step.op = type == ElementType::kPred ? Op::kSelect1 : Op::kSelect4;
        break;
      case Opcode::kAnd:
      case Opcode::kOr:
      case Opcode::kXor:
        if (in.size() != 2 || !pred) return std::nullopt;
        step.op = i.opcode == Opcode::kAnd ? Op::kAnd : (i.opcode == Opcode::kOr ? Op::kOr : Op::kXor);
        break;
      case Opcode::kNot:
        if (in.size() != 1 || !pred) return std::nullopt;
        step.op = Op::kNot;
        break;
      case Opcode::kAdd:
      case Opcode::kSubtract:
      case Opcode::kMultiply:
      case Opcode::kMaximum:
      case Opcode::kMinimum: {
        if (in.size() != 2 || !(f32 || s32) || type != operand) return std::nullopt;
        static constexpr Op kF32[] = {Op::kAddF32, Op::kSubtractF32, Op::kMultiplyF32, Op::kMaximumF32,
                                      Op::kMinimumF32};
        static constexpr Op kS32[] = {Op::kAddS32, Op::kSubtractS32, Op::kMultiplyS32, Op::kMaximumS32,
                                      Op::kMinimumS32};
        const int k = i.opcode == Opcode::kAdd        ? 0
                      : i.opcode == Opcode::kSubtract ? 1
                      : i.opcode == Opcode::kMultiply ? 2
                      : i.opcode == Opcode::kMaximum  ? 3
                                                      : 4;
        step.op = f32 ? kF32[k] : kS32[k];
        break;
      }
      default:
        return std::nullopt;
    }
    step.a = in.size() > 0 ? in[0] : 0;
    step.b = in.size() > 1 ? in[1] : 0;
    step.c = in.size() > 2 ? in[2] : 0;
    step.result = add_register(i);
    p.steps_.push_back(step);
  }
  const Instruction* root = computation.root;
  std::vector<const Instruction*> leaves;
  if (root->opcode == Opcode::kTuple) {
    leaves.assign(root->operands.begin(), root->operands.end());
  } else {
    leaves.push_back(root);
  }
  for (const Instruction* leaf : leaves) {
    auto found = register_of.find(leaf);
    if (found == register_of.end() || !IsLaneScalar(leaf->shape)) return std::nullopt;
    p.results_.push_back(found->second);
  }
  p.WriteResultsInPlace();
  return p;
}

bool LaneProgram::RoundsNothing() const {
  return std::none_of(steps_.begin(), steps_.end(), [](const Step& step) {
    return step.op == Op::kAddF32 || step.op == Op::kSubtractF32 || step.op == Op::kMultiplyF32;
  });
}

void LaneProgram::WriteResultsInPlace() {
  auto reads = [](const Step& s, int r) {
    const bool selects = s.op == Op::kSelect4 || s.op == Op::kSelect1;
    return s.a == r || (s.op != Op::kNot && s.b == r) || (selects && s.c == r);
  };
  auto result_uses = [&](int r) { return std::count(results_.begin(), results_.end(), r); };
  for (size_t k = 0; k < results_.size() && static_cast<int>(k) < parameter_count_; ++k) {
    const int into = static_cast<int>(k), from = results_[k];
    if (from == into || from < parameter_count_ || types_[from] != types_[into]) continue;
    // The step computing the result (a constant's register has none).
    auto step = std::find_if(steps_.begin(), steps_.end(), [&](const Step& s) { return s.result == from; });
    if (step == steps_.end() || result_uses(from) != 1 || result_uses(into) != 0) continue;
    // Nothing after it may read the parameter (it is overwritten) or the
    // step's own register (it is no longer written). The step itself may
    // read the parameter: every step reads lane j before writing lane j.
    if (std::any_of(step + 1, steps_.end(), [&](const Step& s) { return reads(s, into) || reads(s, from); })) continue;
    step->result = into;
    results_[k] = into;
  }
}

void LaneProgram::Run(Register* const* registers, int lanes) const {
#ifdef ANVIL_HAVE_WIDE_LANES
  if (HostIsa() == Isa::kAvx512) return avx512::RunSteps(steps_.data(), steps_.size(), registers, lanes);
  if (HostIsa() == Isa::kAvx2) return avx2::RunSteps(steps_.data(), steps_.size(), registers, lanes);
#endif
  baseline::RunSteps(steps_.data(), steps_.size(), registers, lanes);
}

void GatherRowBlockWith(Isa isa, const uint32_t* const* rows, int lanes, int count, LaneRegister* into) {
#ifdef ANVIL_HAVE_WIDE_LANES
  if (isa == Isa::kAvx512) return avx512::GatherRowBlock(rows, lanes, count, into);
  if (isa == Isa::kAvx2) return avx2::GatherRowBlock(rows, lanes, count, into);
#endif
  baseline::GatherRowBlock(rows, lanes, count, into);
}

void GatherRowBlock(const uint32_t* const* rows, int lanes, int count, LaneRegister* into) {
  GatherRowBlockWith(HostIsa(), rows, lanes, count, into);
}

void FillLanes(LaneRegister* into, uint32_t value) {
#ifdef ANVIL_HAVE_WIDE_LANES
  if (HostIsa() == Isa::kAvx512) return avx512::FillLanes(into, value);
  if (HostIsa() == Isa::kAvx2) return avx2::FillLanes(into, value);
#endif
  baseline::FillLanes(into, value);
}

}  // namespace anvil::cpu
