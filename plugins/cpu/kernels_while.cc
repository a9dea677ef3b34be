// while: the condition and the body are compiled into plans of their own
// (BuildNestedPlan: typed kernels, fusion and buffer reuse, as for the
// entry), run in turn until the condition is false. The loop state lives in
// the while's result buffers; each iteration the body writes the next state
// into buffers of its own, which are then copied over the state (the body
// reads the state while it writes). Everything an iteration needs, both
// plans' scratch, the next state and the condition's flag, sits in the
// step's temp region: a loop allocates nothing per iteration but the frames'
// small pointer lists.
#include <cstring>

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
  std::vector<int64_t> leaf_bytes, next_at;  // per state leaf: its size and where its next value goes
  int64_t scratch_at = 0, flag_at = 0;
};

}  // namespace

void RunSteps(const Plan& plan, const Frame& frame) {
  for (const Step& step : plan.steps) step.run(frame);
}

hlo::StatusOr<Kernel> WhileKernel(const hlo::Instruction& i, const std::vector<Slot>& state_in,
                                  const std::vector<Slot>& state_out, Temp* temp, int* nested_reference_steps) {
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
  auto built_condition = BuildNestedPlan(condition);
  if (!built_condition.ok()) return built_condition.status();
  auto built_body = BuildNestedPlan(body);
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
  for (const hlo::Shape& s : next.output_shapes) {
    loop->leaf_bytes.push_back(s.ByteSize());
    loop->next_at.push_back(Reserve(top, s.ByteSize()));
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
    Frame test;
    test.parameters = state;
    test.outputs = {base + loop->flag_at};
    test.scratch = base + loop->scratch_at;
    test.constants = &loop->condition->constants;
    test.parallel = frame.parallel;
    Frame step = test;
    step.outputs.clear();
    for (int64_t at : loop->next_at) step.outputs.push_back(base + at);
    step.constants = &loop->body->constants;
    for (;;) {
      RunSteps(*loop->condition, test);
      if (!*reinterpret_cast<const uint8_t*>(base + loop->flag_at)) break;
      RunSteps(*loop->body, step);
      for (size_t k = 0; k < state.size(); ++k) {
        if (loop->leaf_bytes[k] > 0) std::memcpy(state[k], step.outputs[k], static_cast<size_t>(loop->leaf_bytes[k]));
      }
    }
  });
}

}  // namespace anvil::cpu
