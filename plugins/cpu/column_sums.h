// f32 column sums in double: one row's run of consecutive floats added,
// element by element, to as many double accumulators, with the widest loop
// this CPU runs. A column sum's block of outputs calls it once per reduced
// position, in the evaluator's order, so each output still adds its terms
// one after another and every loop gives the same bits.
#pragma once

#include <cstdint>

#include "plugins/cpu/isa.h"

namespace anvil::cpu {

// acc[j] += double(row[j]) for j = 0 .. count - 1.
void AddRowToColumnSums(const float* row, int64_t count, double* acc);

// The same with the loop for `isa`, which this CPU must run (for tests).
void AddRowToColumnSumsWith(Isa isa, const float* row, int64_t count, double* acc);

// AddRowToColumnSums of rows[r * stride, r * stride + count) for r = 0 .. n
// - 1, in order. Rows of at most 64 columns (a tall [1M, 8], an image's 32
// channels) keep their accumulators in vector registers across the rows
// with AVX-512, where one call a row added a row narrower than 16 columns
// one column at a time (AddRowToColumnSums's AVX-512 loop takes 16 at once).
void AddRowsToColumnSums(const float* rows, int64_t n, int64_t stride, int64_t count, double* acc);
void AddRowsToColumnSumsWith(Isa isa, const float* rows, int64_t n, int64_t stride, int64_t count, double* acc);

}  // namespace anvil::cpu
