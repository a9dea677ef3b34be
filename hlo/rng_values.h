// The rng op's values (rng_uniform and rng_normal) as a function of each
// element's index, shared by the reference evaluator (evaluator_rng.cc) and
// the CPU plugin's kernel (kernels_rng.cc), so that both give the same bits
// and a kernel can split the elements across threads.
//
// The bits are THREE_FRY's (as XLA's RngExpander uses), keyed by the
// instruction's name (an inlined copy's `rng_key`, its callee's name) and
// counted from zero, so each run of a program gives
// the same values: a draw stream of n words (n + n % 2 for rng_normal, whose
// Box-Muller takes pairs), 32-bit words for elements of 32 bits or fewer,
// two per counter value, and 64-bit words for wider ones.
#pragma once

#include <array>
#include <cstdint>

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

// Threefry-2x32 with 20 rounds (Salmon et al., SC 2011), XLA's key schedule.
std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> x, std::array<uint32_t, 2> key);

// A 64-bit word as the two 32-bit words Threefry and Philox take (low
// first), and back.
inline std::array<uint32_t, 2> WordHalves(uint64_t v) {
  return {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)};
}
inline uint64_t JoinWords(uint32_t low, uint32_t high) { return uint64_t{low} | (uint64_t{high} << 32); }

// The attribute an inlined copy of an rng keeps its callee's name in
// (canonicalize.cc), which keys its draws in place of its own name.
inline constexpr char kRngKeyAttribute[] = "rng_key";

class RngValues {
 public:
  // What `i` (an rng) draws, or why it is not defined (complex, pred,
  // rng_normal of integers, an unknown distribution).
  static StatusOr<RngValues> Of(const Instruction& i);

  // Writes elements [begin, end) of the result, whose array starts at
  // `out`, from the bounds `a` and `b` (scalars of the result's type: [a, b)
  // for rng_uniform, mean and standard deviation for rng_normal).
  void Fill(const void* a, const void* b, int64_t begin, int64_t end, void* out) const;

  int64_t elements() const { return elements_; }
  // The stream, for a kernel that computes the same values elsewhere (the
  // GPU generator's): THREE_FRY's key, the bits of each draw (32 or 64),
  // whether the values are floats (uniform in [0, 1) from the draw's top
  // mantissa() bits), and whether they are rng_normal's.
  uint64_t key() const { return key_; }
  int width() const { return width_; }
  int mantissa() const { return mantissa_; }
  bool is_float() const { return is_float_; }
  bool normal() const { return normal_; }

 private:
  uint64_t Bits(int64_t k) const;
  double Uniform(int64_t k) const;  // floats: [0, 1) from the top mantissa-width bits

  ElementType type_ = ElementType::kF32;
  bool is_float_ = false, normal_ = false;
  int width_ = 32, mantissa_ = 23;
  int64_t elements_ = 0;
  uint64_t key_ = 0;
};

}  // namespace anvil::hlo
