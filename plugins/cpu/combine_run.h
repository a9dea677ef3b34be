// acc[j] = combine(acc[j], p[j * step]) for j < n, compiled for baseline
// x86-64, AVX2 and AVX-512 and chosen by the CPU: the inner loop of kernels
// whose outputs advance side by side, each lane one output's accumulator
// (reduce-window's rows, a reduction's lanes and column blocks). Every lane
// combines its own inputs in order, and the reducers' ops are exact or
// rounded per op (reducers.h), so every width gives the same bits.
#pragma once

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

}  // namespace anvil::cpu
