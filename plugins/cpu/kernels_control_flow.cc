// Control flow, each computation it runs compiled into a plan of its own
// (BuildNestedPlan: typed kernels, fusion and buffer reuse, as for the
// entry).
//
// while: the condition and the body are compiled into plans of their own
// (BuildNestedPlan: typed kernels, fusion and buffer reuse, as for the
// entry), run in turn until the condition is false. The loop state lives in
// the while's result buffers; each leaf the body cannot update in place has
// a spare buffer, which the body writes the next value into (it reads the
// state while it writes) and which then holds the state, the two buffers
// trading roles each iteration; the last state is copied home once, if it
// ended in the spare. The leaves the body may update in place
// (Plan::output_may_alias_parameter: passed through, or a
// dynamic-update-slice of the leaf that nothing else reads, a scan's stacked
// outputs) it writes straight into the state. Everything an iteration needs, both
// plans' scratch, the spares and the condition's flag, sits in the
// step's temp region: a loop allocates nothing per iteration but the frames'
// small pointer lists.
//
// conditional: the selector picks a branch (a pred: true is the first; an
// integer out of range: the last, as HLO defines), whose plan reads that
// branch's operand and writes the conditional's result buffers directly.
#include <cstring>
#include <utility>

#include "hlo/attributes.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

int64_t Reserve(int64_t& top, int64_t bytes) {
  const int64_t at = top;
  top += (std::max<int64_t>(bytes, 1) + 63) / 64 * 64;
  return at;
}

struct Loop {
  std::unique_ptr<Plan> condition, body;
  // Per state leaf: its size, and where in the temp region its spare buffer
  // is (-1: none, the body updates it in place,
  // Plan::output_may_alias_parameter).
  std::vector<int64_t> leaf_bytes, next_at;
  int64_t scratch_at = 0, flag_at = 0;
};

}  // namespace

void RunSteps(const Plan& plan, const Frame& frame) {
  for (const Step& step : plan.steps) step.run(frame);
}

hlo::StatusOr<Kernel> WhileKernel(const hlo::Instruction& i, const std::vector<Slot>& state_in,
                                  const std::vector<Slot>& state_out, Temp* temp, int* nested_reference_steps,
                                  ConvLayoutBook* layouts) {
  if (i.called_computations.size() != 2 || state_in.size() != state_out.size()) {
    return hlo::InvalidArgument("while %" + i.name + " needs a condition, a body and one state");
  }
  // called_computations follow the attributes' order, as the evaluator reads them.
  const hlo::Attribute* c = i.FindAttribute("condition");
  const hlo::Attribute* b = i.FindAttribute("body");
  const bool condition_first = c < b;
  const hlo::Computation& condition = *i.called_computations[condition_first ? 0 : 1];
  const hlo::Computation& body = *i.called_computations[condition_first ? 1 : 0];
  auto loop = std::make_shared<Loop>();
  auto built_condition = BuildNestedPlan(condition, layouts);
  if (!built_condition.ok()) return built_condition.status();
  auto built_body = BuildNestedPlan(body, layouts);
  if (!built_body.ok()) return built_body.status();
  loop->condition = std::move(built_condition).value();
  loop->body = std::move(built_body).value();
  const Plan& cond = *loop->condition;
  const Plan& next = *loop->body;
  if (cond.parameter_shapes.size() != state_in.size() || next.parameter_shapes.size() != state_in.size() ||
      next.output_shapes.size() != state_in.size() || cond.output_shapes.size() != 1 ||
      cond.output_shapes[0].element_type() != hlo::ElementType::kPred) {
    return hlo::InvalidArgument("while %" + i.name + ": condition and body do not fit its state");
  }
  int64_t top = 0;
  loop->flag_at = Reserve(top, 1);
  for (size_t k = 0; k < next.output_shapes.size(); ++k) {
    const int64_t bytes = next.output_shapes[k].ByteSize();
    const bool in_place = k < next.output_may_alias_parameter.size() && next.output_may_alias_parameter[k];
    loop->leaf_bytes.push_back(bytes);
    loop->next_at.push_back(in_place ? -1 : Reserve(top, bytes));
  }
  // The two plans run one after the other: one scratch block serves both.
  loop->scratch_at = Reserve(top, std::max(cond.scratch_bytes, next.scratch_bytes));
  temp->bytes = top;
  *nested_reference_steps = cond.reference_steps + next.reference_steps;
  const Slot region = temp->slot;
  return Kernel([=](const Frame& frame) {
    char* base = static_cast<char*>(frame.At(region));
    std::vector<void*> state;
    for (size_t k = 0; k < state_out.size(); ++k) {
      void* to = frame.At(state_out[k]);
      const void* from = frame.At(state_in[k]);
      if (to != from && loop->leaf_bytes[k] > 0) std::memcpy(to, from, static_cast<size_t>(loop->leaf_bytes[k]));
      state.push_back(to);
    }
    // Leaves the body cannot update in place alternate between their state
    // memory and a spare buffer: each iteration's outputs go to the spare,
    // which then holds the state, so nothing is copied back per iteration
    // (a scan's gradient accumulators, 256 KB each, copied every step);
    // the last state is copied once, where it is not already.
    std::vector<void*> current = state, spare(state.size(), nullptr);
    for (size_t k = 0; k < loop->next_at.size(); ++k) {
      if (loop->next_at[k] >= 0) spare[k] = base + loop->next_at[k];
    }
    Frame test;
    test.outputs = {base + loop->flag_at};
    test.scratch = base + loop->scratch_at;
    test.constants = &loop->condition->constants;
    test.parallel = frame.parallel;
    Frame step = test;
    step.outputs.assign(state.size(), nullptr);
    step.constants = &loop->body->constants;
    for (;;) {
      test.parameters = current;
      RunSteps(*loop->condition, test);
      if (!*reinterpret_cast<const uint8_t*>(base + loop->flag_at)) break;
      step.parameters = current;
      for (size_t k = 0; k < current.size(); ++k) step.outputs[k] = spare[k] ? spare[k] : current[k];
      RunSteps(*loop->body, step);
      for (size_t k = 0; k < current.size(); ++k) {
        if (spare[k]) std::swap(current[k], spare[k]);
      }
    }
    for (size_t k = 0; k < state.size(); ++k) {
      if (current[k] != state[k] && loop->leaf_bytes[k] > 0) {
        std::memcpy(state[k], current[k], static_cast<size_t>(loop->leaf_bytes[k]));
      }
    }
  });
}

hlo::StatusOr<Kernel> ConditionalKernel(const hlo::Instruction& i, const Slot& selector,
                                        const std::vector<std::vector<Slot>>& branch_operands,
                                        const std::vector<Slot>& result, Temp* temp, int* nested_reference_steps,
                                        ConvLayoutBook* layouts) {
  const size_t n = i.called_computations.size();
  if (n == 0 || branch_operands.size() != n) return hlo::InvalidArgument("conditional %" + i.name + " has no branches");
  const hlo::ElementType selector_type = i.operands[0]->shape.element_type();
  const bool by_pred = selector_type == hlo::ElementType::kPred;
  if (!by_pred && selector_type != hlo::ElementType::kS32) return hlo::InvalidArgument("selector of another type");
  if (by_pred && n != 2) return hlo::InvalidArgument("a pred selector needs two branches");
  auto branches = std::make_shared<std::vector<std::unique_ptr<Plan>>>();
  int64_t scratch = 0;
  *nested_reference_steps = 0;
  for (size_t b = 0; b < n; ++b) {
    auto plan = BuildNestedPlan(*i.called_computations[b], layouts);
    if (!plan.ok()) return plan.status();
    if ((*plan)->parameter_shapes.size() != branch_operands[b].size() || (*plan)->output_shapes.size() != result.size()) {
      return hlo::InvalidArgument("conditional %" + i.name + ": a branch does not fit its operand or the result");
    }
    scratch = std::max(scratch, (*plan)->scratch_bytes);
    *nested_reference_steps += (*plan)->reference_steps;
    branches->push_back(std::move(plan).value());
  }
  int64_t top = 0;
  const int64_t scratch_at = Reserve(top, scratch);
  temp->bytes = top;
  const Slot region = temp->slot;
  return Kernel([=](const Frame& frame) {
    size_t pick;
    if (by_pred) {
      pick = *static_cast<const uint8_t*>(frame.At(selector)) ? 0 : 1;
    } else {
      const int32_t index = *static_cast<const int32_t*>(frame.At(selector));
      pick = index < 0 || static_cast<size_t>(index) >= branches->size() ? branches->size() - 1 : static_cast<size_t>(index);
    }
    const Plan& branch = *(*branches)[pick];
    Frame f;
    for (const Slot& s : branch_operands[pick]) f.parameters.push_back(frame.At(s));
    for (const Slot& s : result) f.outputs.push_back(frame.At(s));
    f.scratch = static_cast<char*>(frame.At(region)) + scratch_at;
    f.constants = &branch.constants;
    f.parallel = frame.parallel;
    RunSteps(branch, f);
  });
}

}  // namespace anvil::cpu
