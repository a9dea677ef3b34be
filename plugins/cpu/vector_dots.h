// Dots of pairs of f32 vectors: a dot whose operands have no free
// dimension, one result per batch (v @ v, einsum('bk,bk->b')). sgemm takes
// such a product as a 1 x 1 matrix and computes it one multiply-add at a
// time (a dot of two f32[4M]: 11.5 ms, where an 8 x 1M matrix-vector
// product takes 0.9 ms). Here each vector pair is cut into chunks of
// kVectorDotChunk elements; each chunk is multiplied and summed in 32 f32
// lanes (each product rounded, then added: no contraction), the lanes
// folded in halves; the chunks' sums are added in order in double and
// rounded once. Chunks go to any thread and do not depend on the thread
// count, and every instruction set gives the same bits.
#pragma once

#include <cstdint>

#include "plugins/cpu/isa.h"
#include "plugins/cpu/parallel.h"

namespace anvil::cpu {

inline constexpr int64_t kVectorDotChunk = int64_t{1} << 14;

// z[t] = the dot of x[t * K, (t + 1) * K) and y[t * K, (t + 1) * K), for
// t < batch, on `parallel`'s threads.
void VectorDots(const Parallel& parallel, int64_t batch, int64_t K, const float* x, const float* y, float* z);

// One chunk's sum (at most kVectorDotChunk elements), by the loop for
// `isa`, which this CPU must run (for tests).
float VectorDotChunkWith(Isa isa, const float* x, const float* y, int64_t n);

}  // namespace anvil::cpu
