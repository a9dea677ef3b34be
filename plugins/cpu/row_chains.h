// Row chains: consecutive steps that each compute their results row by row
// (a reduce of rows, a fused loop reading those results through a
// broadcast along the rows), run together block of rows by block of rows,
// so that what one step writes the next reads while it is still in L2.
//
// Layer norm is the case: the row sums, the sums of squared deviations and
// the normalised rows were three passes over the array, each reading it
// from memory (the last one writing it too); as a chain, each thread takes
// a block of rows through all three while the block is in its L2, so the
// array is read from memory once. Softmax's max, sum and divide are the
// same shape.
//
// A step joins a chain when the work it does for rows [r0, r1) of the
// chain reads only rows [r0, r1) of what earlier steps of the chain wrote:
// the chain's rows are its steps' leading dimensions (those a reduce of
// rows keeps), each step's values are row-major, and every read of a value
// the chain writes is either elementwise or a broadcast that keeps the
// leading dimensions where they are. Anything else ends the chain. The
// plan keeps every buffer a chain reads or writes alive from the chain's
// first step to its last, so no two of them share memory while blocks of
// different steps interleave. Each step computes exactly what it computes
// alone (same loops, same order of terms in each row), so chaining changes
// no bit.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "hlo/ir.h"
#include "plugins/cpu/fusion_planner.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {

struct RowChain {
  std::vector<size_t> steps;  // instruction indices of the steps, in order
  int64_t rows = 0;           // the leading dimensions' elements
  int64_t block_rows = 0;     // rows a thread takes through every step at a time
  // Per step: whether its result may stream past the caches (nothing later
  // in the chain reads it).
  std::vector<bool> result_streams;
  // Per step: its elements per row (its result's, or a reduce's operand's).
  std::vector<int64_t> row_elements;
};

// The chains of `computation` planned into `fusion`. `computed_by_reduce`:
// instructions that no step computes (a lane reduce's iotas), which end a
// chain.
std::vector<RowChain> PlanRowChains(const hlo::Computation& computation, const FusionPlan& fusion,
                                    const std::function<bool(const hlo::Instruction*)>& computed_by_reduce);

// Rows [r0, r1) of one step's results, computed on the calling thread.
// `scratch` holds RowChain::block_rows times the largest of the chain's
// row_elements floats, the thread's own.
using RowRunner = std::function<void(const Frame& frame, int64_t r0, int64_t r1, float* scratch)>;

// The kernel running `runners` (a chain's steps, in order) block by block of
// rows across the host threads.
Kernel RowChainKernel(std::vector<RowRunner> runners, const RowChain& chain);

}  // namespace anvil::cpu
