// f32 row sums in double, kSumRows rows at a time.
//
// A row shorter than kLaneSumMinRow adds its terms one after another, in
// order (the evaluator's order): kSumRows rows side by side, their columns
// turned into vector lanes by in-register transposes where the CPU has
// AVX2 or AVX-512.
//
// A longer row is summed in kRowSumLanes lanes (each from -0, the identity): lane l adds elements l,
// l + kRowSumLanes, l + 2 kRowSumLanes, ... in order, then the lanes are
// folded in halves (lane l takes lane l + 16, then l + 8, ... down to lane
// 0), and the fold is added to the row's accumulator. That is not the
// evaluator's order, but every lane is a double adding floats, so the sum
// rounded to f32 differs from the in-order one only where the two doubles
// straddle an f32 rounding boundary; it is the same on every instruction
// set, for a row in a whole group of kSumRows or alone (SumRowInDouble),
// so a fused reduce, a row chain and the reduce kernel alone all give the
// same bits. Summing in order cost half a cycle an element in shuffles
// (layer norm's two sums were 40% of its time); the lanes need no shuffle.
//
// A row longer than kRowSumChunk is summed a chunk of kRowSumChunk
// elements at a time (the last one shorter), each chunk as a row of its
// own starting from -0 (the identity), and the chunks' sums are added to the row's
// accumulator in order. So any chunk's sum can be computed on any thread
// (RowChunkSum) and a row of 16M elements, a whole array's sum, is shared
// between threads with the same bits as on one. Blocks of rows (the fused
// reduces of RowReduceInBlocks, row chains) hold rows of at most
// kMaxBlockedRow (fusion_planner.h), no longer than a chunk, so they never
// meet the rule; a fused reduce of longer rows (RowReduceInChunks) computes
// and sums its rows chunk by chunk, by this rule.
#pragma once

#include <cstdint>

#include "plugins/cpu/isa.h"

namespace anvil::cpu {

inline constexpr int64_t kSumRows = 16;
inline constexpr int64_t kRowSumLanes = 32;
inline constexpr int64_t kLaneSumMinRow = 64;
inline constexpr int64_t kRowSumChunk = int64_t{1} << 14;

// acc[j] += the sum of x[bases[j] + k] for k = 0, 1, ..., inner - 1 (in the
// order above), for each of the kSumRows rows j, with the widest loop this
// CPU runs.
void SumRowsInDouble(const float* x, const int64_t* bases, int64_t inner, double* acc);

// The same with the loop for `isa`, which this CPU must run (for tests).
void SumRowsInDoubleWith(Isa isa, const float* x, const int64_t* bases, int64_t inner, double* acc);

// One row's: *acc += the sum of row[0, inner), in the same order.
void SumRowInDouble(const float* row, int64_t inner, double* acc);
void SumRowInDoubleWith(Isa isa, const float* row, int64_t inner, double* acc);

// The sum of one chunk of a row of more than kRowSumChunk elements (`len`
// of them: kRowSumChunk, or fewer for the row's last), from -0, which
// SumRowInDouble adds to its accumulator after the chunks before it;
// RowChunks: how many chunks such a row has.
double RowChunkSum(const float* chunk, int64_t len);
inline int64_t RowChunks(int64_t inner) { return (inner + kRowSumChunk - 1) / kRowSumChunk; }

}  // namespace anvil::cpu
