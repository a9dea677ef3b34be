// The loops behind column_sums.h. The plugin is compiled for baseline
// x86-64, where this loop widens and adds two floats at a time; AVX2 and
// AVX-512 widen eight floats to four or eight doubles per add. Each lane is
// one output's accumulator, so the order of each output's additions is the
// caller's whatever the width. (A column sum of f32[4096,1024] on two
// cores: about 1.0 ms plain, against 0.44 ms for PyTorch's f32 sum.)
#include "plugins/cpu/column_sums.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 intrinsics start their results from a self-initialised
// undefined vector, which -Wmaybe-uninitialized reports in every caller;
// nothing here reads an undefined lane (as in row_sums.cc).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

namespace anvil::cpu {
namespace {

void AddRowBaseline(const float* row, int64_t count, double* acc) {
  for (int64_t j = 0; j < count; ++j) acc[j] += static_cast<double>(row[j]);
}

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

__attribute__((target("avx2"))) void AddRowAvx2(const float* row, int64_t count, double* acc) {
  int64_t j = 0;
  for (; j + 8 <= count; j += 8) {
    const __m256 v = _mm256_loadu_ps(row + j);
    _mm256_storeu_pd(acc + j, _mm256_add_pd(_mm256_loadu_pd(acc + j), _mm256_cvtps_pd(_mm256_castps256_ps128(v))));
    _mm256_storeu_pd(acc + j + 4,
                     _mm256_add_pd(_mm256_loadu_pd(acc + j + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
  }
  for (; j < count; ++j) acc[j] += static_cast<double>(row[j]);
}

__attribute__((target("avx512f"))) void AddRowAvx512(const float* row, int64_t count, double* acc) {
  int64_t j = 0;
  for (; j + 16 <= count; j += 16) {
    const __m512d lo = _mm512_cvtps_pd(_mm256_loadu_ps(row + j));
    const __m512d hi = _mm512_cvtps_pd(_mm256_loadu_ps(row + j + 8));
    _mm512_storeu_pd(acc + j, _mm512_add_pd(_mm512_loadu_pd(acc + j), lo));
    _mm512_storeu_pd(acc + j + 8, _mm512_add_pd(_mm512_loadu_pd(acc + j + 8), hi));
  }
  for (; j < count; ++j) acc[j] += static_cast<double>(row[j]);
}

// V vectors of eight columns (the last masked to `count`), held in
// registers while the rows are added.
template <int V>
__attribute__((target("avx512f,avx512vl"), always_inline)) inline void AddNarrowRowsAvx512(const float* rows, int64_t n,
                                                                                 int64_t stride, int64_t count,
                                                                                 double* acc) {
  __m512d a[V];
  __mmask8 mask[V];
  for (int v = 0; v < V; ++v) {
    const int64_t left = count - 8 * v;
    mask[v] = left >= 8 ? __mmask8(0xff) : static_cast<__mmask8>((1u << left) - 1);
    a[v] = _mm512_maskz_loadu_pd(mask[v], acc + 8 * v);
  }
  for (int64_t r = 0; r < n; ++r) {
    const float* row = rows + r * stride;
    for (int v = 0; v < V; ++v) {
      a[v] = _mm512_add_pd(a[v], _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask[v], row + 8 * v)));
    }
  }
  for (int v = 0; v < V; ++v) _mm512_mask_storeu_pd(acc + 8 * v, mask[v], a[v]);
}

__attribute__((target("avx512f,avx512vl"))) void AddRowsAvx512(const float* rows, int64_t n, int64_t stride,
                                                               int64_t count, double* acc) {
  switch ((count + 7) / 8) {
    case 0: return;
    case 1: return AddNarrowRowsAvx512<1>(rows, n, stride, count, acc);
    case 2: return AddNarrowRowsAvx512<2>(rows, n, stride, count, acc);
    case 3: return AddNarrowRowsAvx512<3>(rows, n, stride, count, acc);
    case 4: return AddNarrowRowsAvx512<4>(rows, n, stride, count, acc);
    case 5: return AddNarrowRowsAvx512<5>(rows, n, stride, count, acc);
    case 6: return AddNarrowRowsAvx512<6>(rows, n, stride, count, acc);
    case 7: return AddNarrowRowsAvx512<7>(rows, n, stride, count, acc);
    case 8: return AddNarrowRowsAvx512<8>(rows, n, stride, count, acc);
    default:
      for (int64_t r = 0; r < n; ++r) AddRowAvx512(rows + r * stride, count, acc);
  }
}

}  // namespace
#endif

void AddRowToColumnSumsWith(Isa isa, const float* row, int64_t count, double* acc) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == Isa::kAvx512) return AddRowAvx512(row, count, acc);
  if (isa == Isa::kAvx2) return AddRowAvx2(row, count, acc);
#endif
  AddRowBaseline(row, count, acc);
}

void AddRowToColumnSums(const float* row, int64_t count, double* acc) {
  AddRowToColumnSumsWith(HostIsa(), row, count, acc);
}

void AddRowsToColumnSumsWith(Isa isa, const float* rows, int64_t n, int64_t stride, int64_t count, double* acc) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == Isa::kAvx512) return AddRowsAvx512(rows, n, stride, count, acc);
#endif
  for (int64_t r = 0; r < n; ++r) AddRowToColumnSumsWith(isa, rows + r * stride, count, acc);
}

void AddRowsToColumnSums(const float* rows, int64_t n, int64_t stride, int64_t count, double* acc) {
  AddRowsToColumnSumsWith(HostIsa(), rows, n, stride, count, acc);
}

}  // namespace anvil::cpu
