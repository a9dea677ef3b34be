// rng and rng-bit-generator for the reference evaluator. rng-bit-generator gives
// the bit streams XLA's RngBitGeneratorExpander produces (xla/hlo/builder/lib/prng), so that
// programs checked against XLA's output (the StableHLO testdata) agree bit
// for bit.
//
// State layout, as XLA reads it: word 0 is the key. THREE_FRY uses word 1 as
// a 64-bit counter; PHILOX uses words 1 and 2 as a 128-bit counter (low word
// first), or, given only two words, the counter (word 1, word 0). Words past
// those an algorithm reads pass through unchanged. DEFAULT is PHILOX, as on
// XLA's CPU and GPU backends.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "hlo/attributes.h"
#include "hlo/evaluator_internal.h"
#include "hlo/rng_values.h"

namespace anvil::hlo::eval {
namespace {

// Philox-4x32 with 10 rounds.
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> x, std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{x[0]} * 0xD2511F53u;
    const uint64_t p1 = uint64_t{x[2]} * 0xCD9E8D57u;
    x = {static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ key[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key[1], static_cast<uint32_t>(p0)};
    key[0] += 0x9E3779B9u;
    key[1] += 0xBB67AE85u;
  }
  return x;
}

std::array<uint32_t, 2> Halves(uint64_t v) { return {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)}; }
uint64_t Join(uint32_t low, uint32_t high) { return uint64_t{low} | (uint64_t{high} << 32); }

struct U128 {
  uint64_t low, high;
  U128 Plus(uint64_t n) const {
    U128 r{low + n, high};
    if (r.low < low) ++r.high;
    return r;
  }
  std::array<uint32_t, 4> Words() const {
    auto l = Halves(low), h = Halves(high);
    return {l[0], l[1], h[0], h[1]};
  }
};

// Element k of a generator's output: its low bits, as the bits of a float
// (the spec's "random bits"; SetBits would convert the integer to the float
// type) or of an integer (truncated, sub-byte ones sign-extended in their
// byte as SetBits stores them).
void SetRandomBits(Literal& out, int64_t k, uint64_t v) {
  const ElementType t = out.shape().element_type();
  if (!IsFloat(t)) return SetBits(out, k, v);
  const int64_t bytes = Info(t).byte_size;
  std::memcpy(out.mutable_data().data() + k * bytes, &v, static_cast<size_t>(bytes));  // little-endian host
}

// THREE_FRY for elements of 32 bits or fewer: the shape is halved along one
// dimension (the first even one, else the largest), each counter value gives
// two words, and the two words fill neighbouring elements of that dimension.
uint64_t ThreeFryNarrow(uint64_t key, uint64_t counter, Literal& out) {
  const std::vector<int64_t>& dims = out.shape().dims();
  const int rank = static_cast<int>(dims.size());
  int split = -1;
  for (int d = 0; d < rank && split < 0; ++d) {
    if (dims[d] % 2 == 0) split = d;
  }
  if (split < 0) {
    for (int d = 0; d < rank; ++d) {
      if (split < 0 || dims[d] > dims[split]) split = d;
    }
  }
  std::vector<int64_t> half = dims;
  if (rank > 0) half[split] = (dims[split] + 1) / 2;
  int64_t half_count = 1;
  for (int64_t d : half) half_count *= d;
  const std::vector<int64_t> half_strides = Strides(half);
  std::vector<int64_t> index;
  const auto key_words = Halves(key);
  for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
    int64_t linear_half = 0, which = 0;
    if (rank > 0) {
      Unflatten(k, dims, index);
      which = index[split] % 2;
      index[split] /= 2;
      linear_half = Flatten(index, half_strides);
    }
    const auto words = ThreeFry2x32(Halves(counter + static_cast<uint64_t>(linear_half)), key_words);
    SetRandomBits(out, k, words[which]);
  }
  return counter + static_cast<uint64_t>(half_count);
}

uint64_t ThreeFryWide(uint64_t key, uint64_t counter, Literal& out) {
  const auto key_words = Halves(key);
  for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
    const auto words = ThreeFry2x32(Halves(counter + static_cast<uint64_t>(k)), key_words);
    SetRandomBits(out, k, Join(words[0], words[1]));
  }
  return counter + static_cast<uint64_t>(out.element_count());
}

// PHILOX: each counter value gives four 32-bit words (or two 64-bit ones),
// which fill consecutive elements.
U128 Philox(uint64_t key, U128 counter, Literal& out, bool wide) {
  const auto key_words = Halves(key);
  const int64_t per_block = wide ? 2 : 4;
  const int64_t blocks = (out.element_count() + per_block - 1) / per_block;
  for (int64_t b = 0; b < blocks; ++b) {
    const auto words = Philox4x32(counter.Plus(static_cast<uint64_t>(b)).Words(), key_words);
    for (int64_t j = 0; j < per_block; ++j) {
      const int64_t k = b * per_block + j;
      if (k >= out.element_count()) break;
      SetRandomBits(out, k, wide ? Join(words[2 * j], words[2 * j + 1]) : words[j]);
    }
  }
  return counter.Plus(static_cast<uint64_t>(blocks));
}

}  // namespace

StatusOr<Literal> EvalScramblePhiloxKey(const Instruction& i, const Literal& keys) {
  // XLA's builder scrambles a key with one Philox run over (key low, 0, key
  // high, 0) under a fixed key; the first two words are the new key.
  if (!i.shape.IsArray() || i.shape.element_type() != ElementType::kU64 ||
      keys.shape().element_type() != ElementType::kU64 || keys.element_count() != i.shape.ElementCount()) {
    return InvalidArgument("ScramblePhiloxKey maps u64 keys to u64 keys of the same shape");
  }
  Literal out(i.shape);
  for (int64_t k = 0, k_end = keys.element_count(); k < k_end; ++k) {
    const auto key = Halves(keys.GetUint(k));
    const auto words = Philox4x32({key[0], 0, key[1], 0}, {0x3ec8f720u, 0x02461e29u});
    out.SetUint(k, Join(words[0], words[1]));
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
  if (!i.shape.IsTuple() || i.shape.tuple_elements().size() != 2) {
    return InvalidArgument("rng-bit-generator must produce (state, bits)");
  }
  const Shape& bits_shape = i.shape.tuple_elements()[1];
  const int width = Info(bits_shape.element_type()).bit_width;
  if (width > 64 || IsComplex(bits_shape.element_type()) || bits_shape.element_type() == ElementType::kPred) {
    return Unimplemented("rng-bit-generator does not produce " + bits_shape.ToString());
  }
  const int64_t words = state.element_count();
  std::string algorithm = StringAttribute(i, "algorithm");
  if (algorithm.empty() || algorithm == "rng_default") algorithm = "rng_philox";
  Literal result(i.shape);
  Literal& new_state = result.mutable_tuple_elements()[0];
  Literal& bits = result.mutable_tuple_elements()[1];
  new_state = state;
  const uint64_t key = state.GetUint(0);
  if (algorithm == "rng_three_fry") {
    if (words < 2) return InvalidArgument("THREE_FRY needs a state of at least 2 u64 words");
    const uint64_t counter = state.GetUint(1);
    new_state.SetUint(1, width == 64 ? ThreeFryWide(key, counter, bits) : ThreeFryNarrow(key, counter, bits));
  } else if (algorithm == "rng_philox") {
    if (words < 2) return InvalidArgument("PHILOX needs a state of at least 2 u64 words");
    const U128 counter = words >= 3 ? U128{state.GetUint(1), state.GetUint(2)} : U128{state.GetUint(1), key};
    const U128 next = Philox(key, counter, bits, width == 64);
    new_state.SetUint(1, next.low);
    if (words >= 3) new_state.SetUint(2, next.high);
  } else {
    return InvalidArgument("unknown rng-bit-generator algorithm '" + algorithm + "'");
  }
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
