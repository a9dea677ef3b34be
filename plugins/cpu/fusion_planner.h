// Which instructions of a computation the CPU plugin fuses into loops.
//
// Loop ops compute element k from element k of their operands: f32
// arithmetic and math, compare of f32 or s32 (to pred), convert of pred or
// s32 to f32, select of f32 by a pred, and/or/xor/not of preds, clamp of
// f32 (its bounds may be scalars). A loop
// op whose value has one user, that user a loop op of the same element
// count, and which is not an output, is computed inside its user's loop,
// tile by tile, instead of being stored and read back; so is a loop op all
// of whose users are in one group (the group is then a DAG, the value kept
// in a register). A reduce of rows or columns (RowReduceInBlocks,
// ColumnReduceInBlocks; RowReduceInChunks and ColumnReduceInChunks for
// long rows and narrow columns) computes a loop op it reads, with that
// op's group, block by block of rows (or chunk by chunk) as it reduces
// them, when nothing else reads it or everything else reads it after the
// reduce: the group is then the reduce's, and its root is stored only in
// the second case, by the reduce's step (FusionGroup::root_stored). A broadcast of an f32 scalar, or of a row-major vector
// along a run of dimensions (a bias; s32 too), costs next to nothing to recompute,
// so it is inlined into every loop op that reads it, and stored only if
// something else reads it too; so are a slice, a reverse, and a transpose
// whose tiles read few cache lines of its operand (FusedStridedRead). Each group is run by
// one kernel rooted at the instruction whose value is stored.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/ir.h"

namespace anvil::cpu {

struct FusionGroup {
  // The group's instructions in definition order; the root (stored) last.
  // A fused broadcast may be a member of several groups.
  std::vector<const hlo::Instruction*> members;
  // Values the group reads from memory, in first-read order (one a strided
  // read reads may be a member too, held in a register for the others).
  std::vector<const hlo::Instruction*> inputs;
  // The reduce that computes the root's value as it reads it, or nullptr.
  const hlo::Instruction* reduce = nullptr;
  // With a reduce: the root is read after the reduce by others too (softmax's
  // exponentials, summed and then divided), so the reduce's step stores it
  // as it computes it, one pass where there were two.
  bool root_stored = false;
};

struct FusionPlan {
  std::vector<FusionGroup> groups;
  // For each instruction of the computation, by its index there: the group
  // it belongs to, or -1 (fused broadcasts are never a group's own).
  std::vector<int> group_of;
  // Fused broadcasts every reader of which inlines them: never stored.
  std::vector<bool> inlined_everywhere;
  // For each instruction: the group whose root a reduce computes as it
  // reads it (FusionGroup::reduce), or -1.
  std::vector<int> reduce_group;
  bool IsRoot(size_t index, const hlo::Instruction* i) const {
    return group_of[index] >= 0 && groups[group_of[index]].members.back() == i;
  }
  // Whether instruction `index` gets no value of its own.
  bool FusedAway(size_t index, const hlo::Instruction* i) const {
    return inlined_everywhere[index] ||
           (group_of[index] >= 0 && (!IsRoot(index, i) || groups[group_of[index]].reduce != nullptr));
  }
};

// Whether `i` is a loop op (see above); whether it is a broadcast of an
// f32, s32 or u32 scalar, which a loop's binary op may read as one value.
bool IsLoopOp(const hlo::Instruction& i);
bool IsScalarSplat(const hlo::Instruction& i);

// A broadcast the fused loop computes from its operand by index: element e
// of the result is element (e / inner) % size of the operand. That holds for
// a scalar (size 1) and for an f32 or s32 operand whose dimensions are a run
// of consecutive result dimensions (a bias row, a per-channel vector), both
// row-major.
struct BroadcastRun {
  int64_t inner = 1, size = 1;
};
std::optional<BroadcastRun> FusedBroadcastRun(const hlo::Instruction& i);
bool IsFusedBroadcast(const hlo::Instruction& i);
// A transpose, slice or reverse of four-byte values (f32, s32, u32,
// row-major) that the loops reading it read in place, as they read a fused
// broadcast: result element (i_0, ..., i_{r-1}) of `dims` is operand
// element base + sum(i_d * strides[d]) (a reversed dimension's stride is
// negative). A transpose only where a tile of the result reads few cache
// lines of the operand: the result's last dimension is the operand's last
// (runs of consecutive elements), or the result's second-to-last is, and
// the last has at most kMaxTransposedRun elements (JAX's
// x.transpose(0, 2, 1) of [64,32,1024]: a tile's 1024 elements read 32
// runs of 32 rows); others are stored by the transpose kernel, which moves
// them in blocks. A slice or reverse reads its operand in the result's
// order (JAX's x[::2, ::-3] * 2: one loop where there were three passes).
inline constexpr int64_t kMaxTransposedRun = 64;
inline constexpr int kMaxStridedRank = 8;
struct StridedRead {
  std::vector<int64_t> dims, strides;
  int64_t base = 0;
};
std::optional<StridedRead> FusedStridedRead(const hlo::Instruction& i);
// Whether strided read `outer` may read through `inner`, its operand: both
// are slices or reverses (whose maps keep the dimensions' order, so the
// chain reads the cache lines each would). Transposes are read through by
// nothing and read through nothing: two that each read few lines per tile
// can compose into one that reads a line per element.
bool ReadsThrough(const hlo::Instruction& outer, const hlo::Instruction& inner);
// A chain of strided reads, each reading through the next (chain[k + 1] is
// chain[k]'s operand), as one read of the last one's operand (JAX's
// x[::2, ::-3]: a reverse of a slice). The planner makes a loop read every
// chain whole; an inner read is stored only for a reader outside the loops.
StridedRead ComposedStridedRead(const std::vector<const hlo::Instruction*>& chain);
// The chain a group's strided read `read` reads as one: `read`, then each
// operand it reads through that `is_member` says the group holds too. The
// last one's operand is what the loop reads from memory, the group's input
// (the planner and the loop's kernel both walk it so).
template <typename IsMember>
std::vector<const hlo::Instruction*> StridedReadChain(const hlo::Instruction& read, IsMember&& is_member) {
  std::vector<const hlo::Instruction*> chain = {&read};
  for (const hlo::Instruction* inner = read.operands[0]; is_member(inner) && ReadsThrough(*chain.back(), *inner);
       inner = inner->operands[0]) {
    chain.push_back(inner);
  }
  return chain;
}
// Whether `i` is an op FusedStridedRead may take (it reads its operand out
// of the loop's element order).
bool IsStridedReadOp(const hlo::Instruction& i);
// An iota the loop computes (s32, u32, s64, u64 or f32, row-major): element
// e is (e / inner) % size, size its dimension's extent; nullopt otherwise.
std::optional<BroadcastRun> FusedIotaRun(const hlo::Instruction& i);

// A broadcast that only adds dimensions of size 1 (JAX widens its row
// maxima and sums to [..., 1] so): the same elements in the same order, so
// the plan gives it its operand's memory, as it does a reshape.
bool IsDegenerateBroadcast(const hlo::Instruction& i);

// Whether the plan gives `i` its operand's memory and no step of its own:
// a reshape or bitcast of an array to as many bytes, or a degenerate
// broadcast. (The plan builder also passes an optimization barrier's and
// some bitcast-converts' operands through; row chains need not know.)
bool SharesOperandMemory(const hlo::Instruction& i);

// Whether `i` reduces the rows of an f32 array in blocks of rows: a reduce
// of one f32 operand by add, multiply, maximum or minimum over its innermost
// dimensions, at most kMaxBlockedRow elements to a row.
inline constexpr int64_t kMaxBlockedRow = int64_t{1} << 14;
bool RowReduceInBlocks(const hlo::Instruction& i);

// Whether `i` reduces rows longer than that in chunks (row_sums.h's
// kRowSumChunk elements, kMaxBlockedRow): the same reduces by add, maximum
// or minimum (a product's order would change), a whole array's loss or
// norm; its fused kernel shares each row's chunks between threads.
bool RowReduceInChunks(const hlo::Instruction& i);

// Whether `i` reduces the columns of an f32 array in blocks of rows: the
// same reduces over the outermost dimensions instead (softmax or mean over
// axis 0, a bias or batch-norm gradient), with at least kMinColumnsPerThread
// kept elements per thread, so that the fused kernel, which gives each
// thread its own columns, keeps every thread busy, and at least
// kNarrowColumns (below) in all.
inline constexpr int64_t kMinColumnsPerThread = 64;
bool ColumnReduceInBlocks(const hlo::Instruction& i);

// A reduce of fewer columns than kNarrowColumns (an NHWC image's 32 or 96
// channels, a tall [1M, 8]) cuts its reduced rows into chunks of
// kColumnChunkRows instead, fused or not: each chunk's sums are computed
// apart, on any thread, and each column combines its chunks in order
// (kernels_reduce.cc's SplitColumnRows). ColumnReduceInChunks: whether `i`
// is such a reduce of an f32 array by add, maximum or minimum (a product's
// order would change) with at least two chunks of rows, whose fused kernel
// computes its operand a chunk at a time. The blocked column reduce takes
// only wider reduces, so no reduce is computed both ways.
inline constexpr int64_t kNarrowColumns = 128;
inline constexpr int64_t kColumnChunkRows = 2048;
bool ColumnReduceInChunks(const hlo::Instruction& i);

// The groups of `computation`; `outputs` are the instructions whose values
// leave it (the root's leaves), which are always stored.
FusionPlan PlanElementwiseFusion(const hlo::Computation& computation,
                                 const std::vector<const hlo::Instruction*>& outputs);

}  // namespace anvil::cpu
