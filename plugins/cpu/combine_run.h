// acc[j] = combine(acc[j], p[j * step]) for j < n, compiled for baseline
// x86-64, AVX2 and AVX-512 and chosen by the CPU: the inner loop of kernels
// whose outputs advance side by side, each lane one output's accumulator
// (reduce-window's rows, a reduction's lanes and column blocks). Every lane
// combines its own inputs in order, and the reducers' ops are exact or
// rounded per op (reducers.h), so every width gives the same bits.
#pragma once

#include <algorithm>
#include <cstdint>

#include "plugins/cpu/isa.h"

namespace anvil::cpu {

// Strides of one and two (a pool's) are constants for the vectoriser.
template <typename T, typename Combine>
[[gnu::always_inline]] inline void CombineRunLoop(T* acc, const T* p, int64_t n, int64_t step, Combine combine) {
  if (step == 1) {
    for (int64_t j = 0; j < n; ++j) acc[j] = combine(acc[j], p[j]);
  } else if (step == 2) {
    for (int64_t j = 0; j < n; ++j) acc[j] = combine(acc[j], p[2 * j]);
  } else {
    for (int64_t j = 0; j < n; ++j) acc[j] = combine(acc[j], p[j * step]);
  }
}

template <typename T, typename Combine>
void CombineRunBaseline(T* acc, const T* p, int64_t n, int64_t step, Combine combine) {
  CombineRunLoop(acc, p, n, step, combine);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <typename T, typename Combine>
__attribute__((target("avx2"))) void CombineRunAvx2(T* acc, const T* p, int64_t n, int64_t step, Combine combine) {
  CombineRunLoop(acc, p, n, step, combine);
}

template <typename T, typename Combine>
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))) void CombineRunAvx512(T* acc, const T* p, int64_t n,
                                                                                     int64_t step, Combine combine) {
  CombineRunLoop(acc, p, n, step, combine);
}
#endif

template <typename T, typename Combine>
void CombineRun(Isa isa, T* acc, const T* p, int64_t n, int64_t step, Combine combine) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == Isa::kAvx512) return CombineRunAvx512(acc, p, n, step, combine);
  if (isa == Isa::kAvx2) return CombineRunAvx2(acc, p, n, step, combine);
#endif
  CombineRunBaseline(acc, p, n, step, combine);
}

// A whole row combined in kLanes lanes, for combines whose result does not
// depend on the order (reducers.h: max, min, integer sums, and, or): lane
// j starts at row[j] and takes row[g * kLanes + j] of each later group,
// then the lanes fold in halves. One call per row keeps the lanes in
// vector registers; called per group, they went through memory and the
// fold was a scalar chain (attention's row maxima over [8192, 256]).
template <int kLanes, typename T, typename Combine>
[[gnu::always_inline]] inline T CombineRowInLanesLoop(const T* row, int64_t groups, Combine combine) {
  T acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = row[j];
  for (int64_t g = 1; g < groups; ++g) {
    for (int j = 0; j < kLanes; ++j) acc[j] = combine(acc[j], row[g * kLanes + j]);
  }
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int j = 0; j < width; ++j) acc[j] = combine(acc[j], acc[j + width]);
  }
  return acc[0];
}

template <int kLanes, typename T, typename Combine>
T CombineRowInLanesBaseline(const T* row, int64_t groups, Combine combine) {
  return CombineRowInLanesLoop<kLanes>(row, groups, combine);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <int kLanes, typename T, typename Combine>
__attribute__((target("avx2"))) T CombineRowInLanesAvx2(const T* row, int64_t groups, Combine combine) {
  return CombineRowInLanesLoop<kLanes>(row, groups, combine);
}

template <int kLanes, typename T, typename Combine>
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))) T CombineRowInLanesAvx512(const T* row, int64_t groups,
                                                                                         Combine combine) {
  return CombineRowInLanesLoop<kLanes>(row, groups, combine);
}
#endif

// `groups` (at least 1) whole groups of kLanes elements from `row`.
template <int kLanes, typename T, typename Combine>
T CombineRowInLanes(Isa isa, const T* row, int64_t groups, Combine combine) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == Isa::kAvx512) return CombineRowInLanesAvx512<kLanes>(row, groups, combine);
  if (isa == Isa::kAvx2) return CombineRowInLanesAvx2<kLanes>(row, groups, combine);
#endif
  return CombineRowInLanesBaseline<kLanes>(row, groups, combine);
}

// `len` (at least 1) elements combined by an order-free reducer (max, min,
// and, or, integer add and multiply): whole groups in lanes, the rest after
// them. One chunk of a long row, which any thread may compute.
template <int kLanes, typename T, typename Combine>
T CombineChunk(Isa isa, const T* chunk, int64_t len, Combine combine) {
  const int64_t groups = len / kLanes;
  T acc = groups > 0 ? CombineRowInLanes<kLanes>(isa, chunk, groups, combine) : chunk[0];
  for (int64_t k = groups > 0 ? groups * kLanes : 1; k < len; ++k) acc = combine(acc, chunk[k]);
  return acc;
}

// `n` rows of `count` columns, one after another in memory (row r at
// rows + r * count), combined into acc[0, count) by an order-free reducer.
// Narrow rows (a tall [1M, 8], an image's 32 channels) made one call of a
// few elements per row, most of it the vector loop's scalar tail; here a
// block of whole rows, about kColumnRun elements, is combined as one run
// into as many accumulators (element i accumulates column i % count), and
// the block's rows are folded into acc at the end. With reducers.h's
// branch-free maximum, a tall [1M, 8]'s max through JAX went from 5.5 to
// 1.4 ms on two threads (XLA: 1.7 ms).
inline constexpr int64_t kColumnRun = 512;
template <typename T, typename Combine>
void CombineContiguousRows(Isa isa, T* acc, const T* rows, int64_t n, int64_t count, Combine combine) {
  const int64_t block = count > kColumnRun ? 1 : kColumnRun / count;  // rows a run holds
  int64_t r = 0;
  if (block > 1 && n >= 2 * block) {
    const int64_t len = block * count;
    T run[kColumnRun];
    std::copy(rows, rows + len, run);
    for (r = block; r + block <= n; r += block) CombineRun(isa, run, rows + r * count, len, 1, combine);
    for (int64_t b = 0; b < block; ++b) CombineRun(isa, acc, run + b * count, count, 1, combine);
  }
  for (; r < n; ++r) CombineRun(isa, acc, rows + r * count, count, 1, combine);
}

}  // namespace anvil::cpu
