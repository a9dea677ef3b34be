// rng and rng-bit-generator for the reference evaluator. rng-bit-generator's
// streams (XLA's, so that programs checked against XLA's output, the
// StableHLO testdata, agree bit for bit) are hlo/rng_bit_stream's, which the
// CPU plugin's kernel shares.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "hlo/attributes.h"
#include "hlo/evaluator_internal.h"
#include "hlo/rng_bit_stream.h"
#include "hlo/rng_values.h"

namespace anvil::hlo::eval {

StatusOr<Literal> EvalScramblePhiloxKey(const Instruction& i, const Literal& keys) {
  // XLA's builder scrambles a key with one Philox run over (key low, 0, key
  // high, 0) under a fixed key; the first two words are the new key.
  if (!i.shape.IsArray() || i.shape.element_type() != ElementType::kU64 ||
      keys.shape().element_type() != ElementType::kU64 || keys.element_count() != i.shape.ElementCount()) {
    return InvalidArgument("ScramblePhiloxKey maps u64 keys to u64 keys of the same shape");
  }
  Literal out(i.shape);
  for (int64_t k = 0, k_end = keys.element_count(); k < k_end; ++k) {
    const auto key = WordHalves(keys.GetUint(k));
    const auto words = Philox4x32({key[0], 0, key[1], 0}, {0x3ec8f720u, 0x02461e29u});
    out.SetUint(k, JoinWords(words[0], words[1]));
  }
  return out;
}

StatusOr<Literal> EvalRng(const Instruction& i, const Literal& a, const Literal& b) {
  ANVIL_ASSIGN_OR_RETURN(const RngValues values, RngValues::Of(i));
  Literal out(i.shape);
  values.Fill(a.data().data(), b.data().data(), 0, values.elements(), out.mutable_data().data());
  return out;
}

StatusOr<Literal> EvalRngBitGenerator(const Instruction& i, const Literal& state) {
  ANVIL_ASSIGN_OR_RETURN(const RngBitStream stream, RngBitStream::Of(i));
  Literal result(i.shape);
  Literal& new_state = result.mutable_tuple_elements()[0];
  Literal& bits = result.mutable_tuple_elements()[1];
  std::vector<uint64_t> words(static_cast<size_t>(stream.state_words()));
  std::memcpy(words.data(), state.data().data(), words.size() * sizeof(uint64_t));
  stream.Fill(words.data(), 0, stream.elements(), bits.mutable_data().data());
  stream.NextState(words.data(), words.data());
  std::memcpy(new_state.mutable_data().data(), words.data(), words.size() * sizeof(uint64_t));
  return result;
}

StatusOr<Literal> EvalRngGetAndUpdateState(const Instruction& i, RngState& state) {
  ANVIL_ASSIGN_OR_RETURN(int64_t delta, IntAttribute(i, "delta", std::nullopt));
  if (!i.shape.IsArray() || i.shape.element_type() != ElementType::kU64 || i.shape.ElementCount() != 2) {
    return InvalidArgument("rng-get-and-update-state produces u64[2], not " + i.shape.ToString());
  }
  Literal out(i.shape);
  out.SetUint(0, static_cast<uint64_t>(state));
  out.SetUint(1, static_cast<uint64_t>(state >> 64));
  state += static_cast<RngState>(static_cast<uint64_t>(delta));
  return out;
}

}  // namespace anvil::hlo::eval
