// A scalar computation (a variadic reduce's body: argmax, argmin, a max
// with its count...) compiled to run on kLanes independent elements at once,
// each step one typed loop over the lanes instead of one hlo::ScalarProgram
// step (a 24-byte Scalar, a switch, a rounding) per element. It covers the
// element types and ops such bodies are made of: f32, s32 and pred values;
// compare (not TOTALORDER), select, and, or, xor, not; add, subtract,
// multiply, maximum and minimum of f32 and s32; rank-0 constants. Every
// step computes what the reference evaluator computes, bit for bit: f32
// add, subtract and multiply round once in f32 as the evaluator's double
// arithmetic rounded to f32 does (double has more than 2 * 24 + 2 bits),
// maximum and minimum propagate NaN and order -0 below +0 (reducers.h), and
// s32 arithmetic wraps.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/element_type.h"
#include "hlo/ir.h"
#include "plugins/cpu/isa.h"

namespace anvil::cpu {

constexpr int kLaneCount = 128;

// Room for one register's lanes: kLaneCount elements of at most 4 bytes.
struct alignas(64) LaneRegister {
  unsigned char bytes[kLaneCount * 4];
};

enum class LaneOp : uint8_t {
  kCompareF32, kCompareS32, kSelect4, kSelect1, kAnd, kOr, kXor, kNot,
  kAddF32, kSubtractF32, kMultiplyF32, kMaximumF32, kMinimumF32,
  kAddS32, kSubtractS32, kMultiplyS32, kMaximumS32, kMinimumS32,
};

struct LaneStep {
  LaneOp op;
  unsigned mask = 0;  // compare: which of less, equal, greater, unordered answer true
  int result = 0, a = 0, b = 0, c = 0;
};

class LaneProgram {
 public:
  static constexpr int kLanes = kLaneCount;
  using Register = LaneRegister;

  // nullopt unless every parameter and result is an f32, s32 or pred
  // scalar and every other instruction a constant or an op listed above.
  static std::optional<LaneProgram> Compile(const hlo::Computation& computation);

  int parameter_count() const { return parameter_count_; }
  int result_count() const { return static_cast<int>(results_.size()); }
  hlo::ElementType parameter_type(int k) const { return types_[static_cast<size_t>(k)]; }
  hlo::ElementType result_type(int k) const { return types_[static_cast<size_t>(results_[static_cast<size_t>(k)])]; }

  // Registers for one thread, constants in place; parameters are
  // registers 0..parameter_count()-1, each lane a separate element.
  std::vector<Register> NewRegisters() const { return initial_; }
  // Runs every step on the first `lanes` lanes (at most kLanes) of the
  // registers at `registers` (register k's address at registers[k], so a
  // caller can point a parameter at data it holds elsewhere, a block of
  // elements, without copying it); result k is then in register
  // result_register(k). That is parameter k's own register where the body
  // allows (WriteResultsInPlace), so that a reduce's accumulators need no
  // copy between positions. The steps' loops are compiled for baseline
  // x86-64, AVX2 and AVX-512 (lane_steps.inc), chosen by what the CPU has;
  // every one gives the same bits.
  void Run(Register* const* registers, int lanes) const;
  int result_register(int k) const { return results_[static_cast<size_t>(k)]; }
  // Whether no step rounds: no f32 add, subtract or multiply. Such a body
  // that is also associative (kernels_lane_reduce.cc checks it on sample
  // values: argmax, argmin, a max with its count) gives the same results
  // however a reduce groups its positions, so a long reduction may be cut
  // into chunks reduced apart.
  bool RoundsNothing() const;

 private:
  using Op = LaneOp;
  using Step = LaneStep;
  // Result k, when parameter k has its type and no step after the one
  // computing the result reads parameter k or that step's register, is
  // computed into parameter k's register (an argmax's two selects).
  void WriteResultsInPlace();
  int parameter_count_ = 0;
  std::vector<Step> steps_;
  std::vector<int> results_;
  std::vector<hlo::ElementType> types_;  // per register
  std::vector<Register> initial_;
};

// Moves positions [0, count) of `lanes` rows of 4-byte elements into lane
// registers, transposed: element b of rows[j] becomes lane j of into[b]
// (count <= 16, lanes <= kLaneCount), as a reduce reading its rows in
// place takes them a block at a time (kernels_lane_reduce.cc).
void GatherRowBlock(const uint32_t* const* rows, int lanes, int count, LaneRegister* into);
// The same, by the copy compiled for `isa` (the tests check each).
void GatherRowBlockWith(Isa isa, const uint32_t* const* rows, int lanes, int count, LaneRegister* into);
// Every lane of `into` set to the 4-byte `value` (a reduced dimension's
// iota at one position: one coordinate for all lanes), by the widest stores
// the CPU has; the kernels around it are built for baseline x86-64.
void FillLanes(LaneRegister* into, uint32_t value);

}  // namespace anvil::cpu
