// f32 row sums in double, kSumRows rows side by side, each row's terms
// added one after another in order (the bits of the reduce kernel's plain
// loop and of the evaluator), with the rows' columns turned into vector
// lanes by in-register transposes where the CPU has AVX2 or AVX-512.
#pragma once

#include <cstdint>

#include "plugins/cpu/isa.h"

namespace anvil::cpu {

inline constexpr int64_t kSumRows = 16;

// acc[j] += x[bases[j] + k] for k = 0, 1, ..., inner - 1 in that order, for
// each of the kSumRows rows j, with the widest loop this CPU runs.
void SumRowsInDouble(const float* x, const int64_t* bases, int64_t inner, double* acc);

// The same with the loop for `isa`, which this CPU must run (for tests).
void SumRowsInDoubleWith(Isa isa, const float* x, const int64_t* bases, int64_t inner, double* acc);

}  // namespace anvil::cpu
