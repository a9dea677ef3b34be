// The fused loop kernel: a group of loop ops (fusion_planner.h) run tile by
// tile. Each tile of up to kFusedTile elements goes through the group's ops
// in order, intermediate values (f32, bf16 held as f32, integers of 8 to
// 64 bits, pred) living in a few tile-sized registers on the stack (in L1)
// instead of in memory; only the root's value is stored. Every op computes
// exactly what its one-op kernel does (the float and integer functions are
// the same objects, float_functions.h and int_functions.h; compare,
// select, clamp, iota and the logical ops are exact), so fusion changes no
// result.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "plugins/cpu/isa.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/row_chains.h"

namespace anvil::cpu {

// Sixteen: exact GELU's erfc is one loop of 95 ops at its peak of about a
// dozen live values (with eight it was two loops and two stored values:
// 7.3 -> 4.4 ms over 2^21 floats). A loop uses only the registers it
// needs, so most still touch a few tiles of L1.
inline constexpr int kMaxFusedRegisters = 16;
inline constexpr int64_t kFusedTile = 1024;

// One step of an op chain, as the loop runs a chain of f32 binary ops in
// one pass with the running value p kept in registers (fused_tiles.inc's
// HornerTile; polynomials by Horner's rule were its first use): p = p * x,
// or p = p op term (term op p where `term_first`), the term a tile of the
// chain's n elements or, where `tile` is null, `value` for every element;
// kSquare (p = p * p) reads no term.
enum class ChainBinary : uint8_t { kAdd, kSubtract, kMultiply, kDivide, kSquare };
struct HornerStep {
  bool multiply = false;
  const float* tile = nullptr;
  float value = 0;
  ChainBinary op = ChainBinary::kAdd;
  bool term_first = false;
};

// A chain of at most 64 steps (more throw) over n elements from p0 (or, where it is
// null, `start` for every element) into out, with the tile function built
// for `isa`: for tests, which check each instruction set this CPU runs
// against the steps done one at a time.
void RunHornerChainWith(Isa isa, const float* x, const float* p0, float start, const std::vector<HornerStep>& steps,
                        float* out, int64_t n);

// f32 unary op `op` (exp, tanh, erf, ...) over n elements with its tile
// function built for `isa`: for tests, which check each instruction set
// this CPU runs against the scalar function. False for an op the loops do
// not compute.
bool RunFloatUnaryTileWith(Isa isa, hlo::Opcode op, const float* x, float* out, int64_t n);
// The same for erfc, the one chlo call the loops compute.
void RunErfcTileWith(Isa isa, const float* x, float* out, int64_t n);

// The passes over each tile a group's loop makes, for tests that check a
// loop takes the path meant for it: all of them, the Horner chains among
// them and the steps those hold, the ops that read a splatted constant as
// a scalar, and the ops that fill a register with a broadcast's values,
// among them those that leave it unfilled on tiles where it holds one
// value, which its readers then read as a scalar (`uniform_fills`).
// nullopt where the group has no loop.
struct FusedLoopSummary {
  int passes = 0, horner_chains = 0, horner_steps = 0, scalar_reads = 0, fills = 0, uniform_fills = 0;
};
std::optional<FusedLoopSummary> SummarizeFusedLoop(const std::vector<const hlo::Instruction*>& members,
                                                   const std::vector<const hlo::Instruction*>& inputs);

// Whether a compare direction is one the fused loop computes.
bool CompareDirectionKnown(const std::string& direction);

// The tile registers a group needs at most at once (members in definition
// order, root last).
int FusedRegistersNeeded(const std::vector<const hlo::Instruction*>& members);

// The kernel for a group whose `inputs` (the values it reads from memory)
// are at `input_slots`, storing the root's value at `out`; nullptr if some
// member is not a loop op.
Kernel FusedElementwiseKernel(const std::vector<const hlo::Instruction*>& members,
                              const std::vector<const hlo::Instruction*>& inputs, const std::vector<Slot>& input_slots,
                              const Slot& out);

// A group's loop with the slots of what it reads bound, for kernels that
// compute parts of its root's value where they need them
// (FusedRowReduceKernel).
class FusedLoop {
 public:
  virtual ~FusedLoop() = default;
  // Elements [begin, end) of the root's value into out[0, end - begin).
  virtual void Run(const Frame& frame, int64_t begin, int64_t end, void* out) const = 0;
  // For each r < rows, elements [first + r * stride, first + r * stride +
  // count) into out[r * out_stride, r * out_stride + count): a block of
  // columns of `rows` rows, in one call.
  virtual void RunRows(const Frame& frame, int64_t first, int64_t count, int64_t rows, int64_t stride, void* out,
                       int64_t out_stride) const = 0;
};

// A reduce of rows (fusion_planner.h's RowReduceInBlocks, or of longer rows
// RowReduceInChunks) whose operand is the root of `members`, computed block
// by block of rows (or chunk by chunk of each row) as the reduce reads it
// (kernels_fused_reduce.cc, in the plugin); nullptr if it cannot.
// `root_out`: where the group's root is stored too, as each block is
// computed (FusionGroup::root_stored), if anywhere.
Kernel FusedRowReduceKernel(const hlo::Instruction& reduce, const std::vector<const hlo::Instruction*>& members,
                            const std::vector<const hlo::Instruction*>& inputs, const std::vector<Slot>& input_slots,
                            const Slot& init, const Slot& out, std::optional<Slot> root_out = std::nullopt);

// A reduce of columns (fusion_planner.h's ColumnReduceInBlocks, or of
// narrow columns ColumnReduceInChunks, a chunk of rows at a time) whose
// operand is the root of `members`, computed block by block of rows within
// each thread's columns as the reduce reads it; as FusedRowReduceKernel.
Kernel FusedColumnReduceKernel(const hlo::Instruction& reduce, const std::vector<const hlo::Instruction*>& members,
                               const std::vector<const hlo::Instruction*>& inputs,
                               const std::vector<Slot>& input_slots, const Slot& init, const Slot& out,
                               std::optional<Slot> root_out = std::nullopt);

// A step's work on rows [r0, r1) of a row chain (row_chains.h), `row`
// elements to each of its rows: a group's loop (`stream`: its result may
// bypass the caches, as FusedElementwiseKernel's does, since nothing later
// in the chain reads it), a reduce of rows computing its operand with its
// group's loop, and a reduce of rows read from memory. nullptr where the
// step's kernel alone would be nullptr too.
RowRunner FusedLoopRows(const std::vector<const hlo::Instruction*>& members,
                        const std::vector<const hlo::Instruction*>& inputs, const std::vector<Slot>& input_slots,
                        const Slot& out, int64_t row, bool stream);
RowRunner FusedRowReduceRows(const hlo::Instruction& reduce, const std::vector<const hlo::Instruction*>& members,
                             const std::vector<const hlo::Instruction*>& inputs, const std::vector<Slot>& input_slots,
                             const Slot& init, const Slot& out, std::optional<Slot> root_out, const RowChain& chain);
RowRunner RowReduceRows(const hlo::Instruction& reduce, const Slot& in, const Slot& init, const Slot& out,
                        const RowChain& chain);

// The loop of a group, or nullptr if some member is not a loop op.
std::shared_ptr<const FusedLoop> MakeFusedLoop(const std::vector<const hlo::Instruction*>& members,
                                              const std::vector<const hlo::Instruction*>& inputs,
                                              const std::vector<Slot>& input_slots);

}  // namespace anvil::cpu
