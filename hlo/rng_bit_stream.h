// rng-bit-generator's outputs as functions of the state and of each
// element's index, on raw memory: the bit streams XLA's
// RngBitGeneratorExpander produces (xla/hlo/builder/lib/prng), shared by the
// reference evaluator (evaluator_rng.cc) and the CPU plugin's kernel
// (kernels_rng.cc), which splits the elements across threads.
//
// State layout, as XLA reads it: word 0 is the key. THREE_FRY uses word 1 as
// a 64-bit counter; PHILOX uses words 1 and 2 as a 128-bit counter (low word
// first), or, given only two words, the counter (word 1, word 0). Words past
// those an algorithm reads pass through unchanged. DEFAULT is PHILOX, as on
// XLA's CPU and GPU backends.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

// Philox-4x32 with 10 rounds.
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> x, std::array<uint32_t, 2> key);

class RngBitStream {
 public:
  // What rng-bit-generator `i` writes, or why it is not defined.
  static StatusOr<RngBitStream> Of(const Instruction& i);

  int64_t elements() const { return elements_; }
  int64_t state_words() const { return words_; }
  // The state after the generator runs, from the one before (state_words()
  // u64 each; `next` may be `state`).
  void NextState(const uint64_t* state, uint64_t* next) const;
  // Elements [begin, end) of the bits into `out`, the output's array: each
  // element's low bits, a float's as its bits (the spec's "random bits"),
  // sub-byte signed integers sign-extended in their byte.
  void Fill(const uint64_t* state, int64_t begin, int64_t end, void* out) const;

 private:
  void Store(void* out, int64_t k, uint64_t bits) const;

  bool philox_ = true;
  ElementType type_ = ElementType::kU32;
  int width_ = 32;
  int64_t bytes_ = 4, elements_ = 0, words_ = 2;
  // THREE_FRY of elements of 32 bits or fewer: the output's dimensions, the
  // one halved (neighbours along it share a counter), and the halved
  // shape's element count and strides.
  std::vector<int64_t> dims_, half_strides_;
  int split_ = -1;
  int64_t half_count_ = 1;
};

}  // namespace anvil::hlo
