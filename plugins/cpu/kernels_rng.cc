// rng-get-and-update-state: a counter the executable keeps between
// executions (hlo/evaluator.h says how it starts and advances). Executions of
// one executable may run at once, so each takes the next state under a lock.
// rng: the values hlo/rng_values gives the evaluator, written in place,
// elements split across threads. rng-bit-generator: hlo/rng_bit_stream's
// bits, the same way.
#include <cstring>
#include <mutex>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/evaluator.h"
#include "hlo/rng_bit_stream.h"
#include "hlo/rng_values.h"
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

Kernel RngKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  // The bounds, and (StableHLO's form) the result's shape as a third operand.
  if (i.opcode != hlo::Opcode::kRng || in.size() < 2 || i.operands.size() < 2) return nullptr;
  for (const hlo::Instruction* bound : {i.operands[0], i.operands[1]}) {
    if (!bound->shape.IsArray() || bound->shape.rank() != 0 || bound->shape.element_type() != i.shape.element_type()) {
      return nullptr;
    }
  }
  auto values = hlo::RngValues::Of(i);
  if (!values.ok()) return nullptr;  // the reference step reports why
  return [values = *values, a = in[0], b = in[1], out](const Frame& frame) {
    const void* low = frame.At(a);
    const void* high = frame.At(b);
    void* result = frame.At(out);
    // About a hundred instructions an element (20 Threefry rounds per
    // two): blocks of 4096 keep each task well above its cost.
    frame.parallel->For(values.elements(), 4096,
                        [&](int64_t begin, int64_t end) { values.Fill(low, high, begin, end, result); });
  };
}

Kernel RngBitGeneratorKernel(const hlo::Instruction& i, const Slot& state, const std::vector<Slot>& out) {
  if (i.opcode != hlo::Opcode::kRngBitGenerator || out.size() != 2) return nullptr;
  auto stream = hlo::RngBitStream::Of(i);
  if (!stream.ok()) return nullptr;  // the reference step reports why
  return [stream = *stream, state, out](const Frame& frame) {
    // The state read before anything is written (the new state may share
    // its memory), on the stack for the usual two or three words.
    const size_t words = static_cast<size_t>(stream.state_words());
    uint64_t small[8];
    std::vector<uint64_t> large;
    uint64_t* before = small;
    if (words > 8) {
      large.resize(words);
      before = large.data();
    }
    std::memcpy(before, frame.At(state), words * sizeof(uint64_t));
    void* bits = frame.At(out[1]);
    // Twenty Threefry or ten Philox rounds per one to four elements: blocks
    // of 4096 keep each task well above its cost.
    frame.parallel->For(stream.elements(), 4096,
                        [&](int64_t begin, int64_t end) { stream.Fill(before, begin, end, bits); });
    stream.NextState(before, static_cast<uint64_t*>(frame.At(out[0])));
  };
}

}  // namespace anvil::cpu
