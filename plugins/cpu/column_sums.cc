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

}  // namespace anvil::cpu
