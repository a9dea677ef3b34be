// rng-get-and-update-state: a counter the executable keeps between
// executions (hlo/evaluator.h says how it starts and advances). Executions of
// one executable may run at once, so each takes the next state under a lock.
#include <cstring>
#include <mutex>

#include "hlo/attributes.h"
#include "hlo/evaluator.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {

Kernel RngStateKernel(const hlo::Instruction& i, const Slot& out) {
  if (i.opcode != hlo::Opcode::kRngGetAndUpdateState || !i.shape.IsArray() ||
      i.shape.element_type() != hlo::ElementType::kU64 || i.shape.ElementCount() != 2) {
    return nullptr;
  }
  auto delta = hlo::IntAttribute(i, "delta", std::nullopt);
  if (!delta.ok()) return nullptr;  // the reference step reports it
  struct State {
    std::mutex mutex;
    unsigned __int128 value = hlo::kRngStateInitialValue;
  };
  auto state = std::make_shared<State>();
  const auto step = static_cast<unsigned __int128>(static_cast<uint64_t>(*delta));
  return [state, step, out](const Frame& frame) {
    uint64_t words[2];
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      words[0] = static_cast<uint64_t>(state->value);
      words[1] = static_cast<uint64_t>(state->value >> 64);
      state->value += step;
    }
    std::memcpy(frame.At(out), words, sizeof words);
  };
}

}  // namespace anvil::cpu
