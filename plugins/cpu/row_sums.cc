// The loops behind row_sums.h.
//
// In order (rows shorter than kLaneSumMinRow): the plain loop turns eight
// rows at a time through a small tile in memory. With AVX-512 each row's
// next eight floats are instead loaded as one vector, widened to doubles,
// and eight rows are transposed in registers (three rounds of eight
// shuffles), so that element t of eight rows is one vector and the eight
// rows' chains advance with one add per element position; two groups of
// eight rows keep two chains of adds in flight. AVX2 does the same four
// rows to a vector. Every lane adds its row's terms in order, so every loop
// gives the plain loop's bits.
//
// In lanes (longer rows): each row's 32 lanes are four vectors of eight
// doubles (AVX-512), eight of four (AVX2) or 32 scalars; two rows advance
// together, so eight chains of adds are in flight. Every loop adds the same
// terms to the same lanes in the same order and folds the lanes with the
// same scalar code, so every loop gives the plain loop's bits. (Layer norm
// of f32[4096,1024] on two AVX-512 cores, whose two row sums were 40% of
// its time in order.)
#include "plugins/cpu/row_sums.h"

#include <algorithm>

#include "plugins/cpu/row_tiles.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 intrinsics start their results from a self-initialised
// _mm512_undefined_pd(), which -Wmaybe-uninitialized reports in every
// caller; nothing here reads an undefined lane.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

namespace anvil::cpu {
namespace {

constexpr auto kPlus = [](double a, double b) { return a + b; };

// The plain loop (row_tiles.h), eight rows at a time.
void SumRowsBaseline(const float* x, const int64_t* bases, int64_t inner, double* acc) {
  CombineRowsThroughTile<8>(x, bases, inner, acc, kPlus);
  CombineRowsThroughTile<8>(x, bases + 8, inner, acc + 8, kPlus);
}

// The elements after the last whole group of lanes, from `k` on, each to
// its lane; then the lanes folded in halves. Every loop ends here.
double FinishLanes(const float* row, int64_t k, int64_t inner, double* lanes) {
  for (int64_t l = 0; k + l < inner; ++l) lanes[l] += static_cast<double>(row[k + l]);
  for (int64_t w = kRowSumLanes / 2; w >= 1; w /= 2) {
    for (int64_t l = 0; l < w; ++l) lanes[l] += lanes[l + w];
  }
  return lanes[0];
}

// Whole groups of lanes: returns where the tail starts.
int64_t LanesBaseline(const float* row, int64_t inner, double* lanes) {
  int64_t k = 0;
  for (; k + kRowSumLanes <= inner; k += kRowSumLanes) {
    for (int64_t l = 0; l < kRowSumLanes; ++l) lanes[l] += static_cast<double>(row[k + l]);
  }
  return k;
}

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// r[t] becomes element t of the four rows that r[0..3] held.
__attribute__((target("avx2"))) inline void Transpose4x4(__m256d r[4]) {
  const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]);  // elements 0, 2 of rows 0, 1
  const __m256d t1 = _mm256_unpackhi_pd(r[0], r[1]);  // elements 1, 3
  const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]);
  const __m256d t3 = _mm256_unpackhi_pd(r[2], r[3]);
  r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

// As SumRowsAvx512, four rows to a vector, four groups of rows.
__attribute__((target("avx2"))) void SumRowsAvx2(const float* x, const int64_t* bases, int64_t inner, double* acc) {
  static_assert(kSumRows == 16, "four groups of four rows");
  __m256d a[4];
  for (int g = 0; g < 4; ++g) a[g] = _mm256_loadu_pd(acc + 4 * g);
  int64_t k = 0;
  for (; k + 4 <= inner; k += 4) {
    for (int g = 0; g < 4; ++g) {
      __m256d r[4];
      for (int j = 0; j < 4; ++j) r[j] = _mm256_cvtps_pd(_mm_loadu_ps(x + bases[4 * g + j] + k));
      Transpose4x4(r);
      for (int t = 0; t < 4; ++t) a[g] = _mm256_add_pd(a[g], r[t]);
    }
  }
  for (int g = 0; g < 4; ++g) _mm256_storeu_pd(acc + 4 * g, a[g]);
  CombineRowTails(x, bases, kSumRows, k, inner, acc, kPlus);
}

// r[t] becomes element t of the eight rows that r[0..7] held (row j's eight
// doubles in r[j]).
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))) inline void Transpose8x8(__m512d r[8]) {
  __m512d t[8], u[8];
  for (int j = 0; j < 8; j += 2) {
    t[j] = _mm512_unpacklo_pd(r[j], r[j + 1]);      // elements 0 2 4 6 of rows j, j+1, interleaved
    t[j + 1] = _mm512_unpackhi_pd(r[j], r[j + 1]);  // elements 1 3 5 7
  }
  // 128-bit lanes: 0x88 takes lanes 0 and 2 of each source, 0xDD lanes 1 and 3.
  for (int j = 0; j < 8; j += 4) {
    u[j] = _mm512_shuffle_f64x2(t[j], t[j + 2], 0x88);      // elements 0, 4 of rows j..j+3
    u[j + 1] = _mm512_shuffle_f64x2(t[j], t[j + 2], 0xDD);  // elements 2, 6
    u[j + 2] = _mm512_shuffle_f64x2(t[j + 1], t[j + 3], 0x88);  // elements 1, 5
    u[j + 3] = _mm512_shuffle_f64x2(t[j + 1], t[j + 3], 0xDD);  // elements 3, 7
  }
  r[0] = _mm512_shuffle_f64x2(u[0], u[4], 0x88);
  r[4] = _mm512_shuffle_f64x2(u[0], u[4], 0xDD);
  r[2] = _mm512_shuffle_f64x2(u[1], u[5], 0x88);
  r[6] = _mm512_shuffle_f64x2(u[1], u[5], 0xDD);
  r[1] = _mm512_shuffle_f64x2(u[2], u[6], 0x88);
  r[5] = _mm512_shuffle_f64x2(u[2], u[6], 0xDD);
  r[3] = _mm512_shuffle_f64x2(u[3], u[7], 0x88);
  r[7] = _mm512_shuffle_f64x2(u[3], u[7], 0xDD);
}

__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))) void SumRowsAvx512(const float* x,
                                                                                   const int64_t* bases,
                                                                                   int64_t inner, double* acc) {
  static_assert(kSumRows == 16, "two groups of eight rows");
  __m512d a[2] = {_mm512_loadu_pd(acc), _mm512_loadu_pd(acc + 8)};
  int64_t k = 0;
  for (; k + 8 <= inner; k += 8) {
    for (int g = 0; g < 2; ++g) {
      __m512d r[8];
      for (int j = 0; j < 8; ++j) r[j] = _mm512_cvtps_pd(_mm256_loadu_ps(x + bases[8 * g + j] + k));
      Transpose8x8(r);
      for (int t = 0; t < 8; ++t) a[g] = _mm512_add_pd(a[g], r[t]);
    }
  }
  _mm512_storeu_pd(acc, a[0]);
  _mm512_storeu_pd(acc + 8, a[1]);
  CombineRowTails(x, bases, kSumRows, k, inner, acc, kPlus);
}

// Two rows' whole groups of lanes at once (b may be null: a only).
__attribute__((target("avx512f"))) int64_t LanesAvx512(const float* a, const float* b, int64_t inner, double* la,
                                                        double* lb) {
  __m512d va[4], vb[4];
  for (int v = 0; v < 4; ++v) va[v] = vb[v] = _mm512_set1_pd(-0.0);  // the identity (SumInLanes)
  int64_t k = 0;
  for (; k + kRowSumLanes <= inner; k += kRowSumLanes) {
    for (int v = 0; v < 4; ++v) va[v] = _mm512_add_pd(va[v], _mm512_cvtps_pd(_mm256_loadu_ps(a + k + 8 * v)));
    if (b) {
      for (int v = 0; v < 4; ++v) vb[v] = _mm512_add_pd(vb[v], _mm512_cvtps_pd(_mm256_loadu_ps(b + k + 8 * v)));
    }
  }
  for (int v = 0; v < 4; ++v) {
    _mm512_storeu_pd(la + 8 * v, va[v]);
    if (b) _mm512_storeu_pd(lb + 8 * v, vb[v]);
  }
  return k;
}

__attribute__((target("avx2"))) int64_t LanesAvx2(const float* a, const float* b, int64_t inner, double* la,
                                                   double* lb) {
  __m256d va[8], vb[8];
  for (int v = 0; v < 8; ++v) va[v] = vb[v] = _mm256_set1_pd(-0.0);
  int64_t k = 0;
  for (; k + kRowSumLanes <= inner; k += kRowSumLanes) {
    for (int v = 0; v < 8; ++v) va[v] = _mm256_add_pd(va[v], _mm256_cvtps_pd(_mm_loadu_ps(a + k + 4 * v)));
    if (b) {
      for (int v = 0; v < 8; ++v) vb[v] = _mm256_add_pd(vb[v], _mm256_cvtps_pd(_mm_loadu_ps(b + k + 4 * v)));
    }
  }
  for (int v = 0; v < 8; ++v) {
    _mm256_storeu_pd(la + 4 * v, va[v]);
    if (b) _mm256_storeu_pd(lb + 4 * v, vb[v]);
  }
  return k;
}

}  // namespace
#endif

namespace {

// Two rows in lanes (b may be null), added to *acc_a and *acc_b.
void SumInLanes(Isa isa, const float* a, const float* b, int64_t inner, double* acc_a, double* acc_b) {
  // Lanes start at -0, the sum's identity (+0 would turn a row of -0 into +0).
  double la[kRowSumLanes], lb[kRowSumLanes];
  std::fill(la, la + kRowSumLanes, -0.0);
  std::fill(lb, lb + kRowSumLanes, -0.0);
  int64_t k = -1;
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == Isa::kAvx512) k = LanesAvx512(a, b, inner, la, lb);
  if (isa == Isa::kAvx2) k = LanesAvx2(a, b, inner, la, lb);
#else
  (void)isa;
#endif
  if (k < 0) {
    k = LanesBaseline(a, inner, la);
    if (b) LanesBaseline(b, inner, lb);
  }
  *acc_a += FinishLanes(a, k, inner, la);
  if (b) *acc_b += FinishLanes(b, k, inner, lb);
}

}  // namespace

namespace {

// A row of at most kRowSumChunk elements (or one chunk of a longer row).
void SumShortRow(Isa isa, const float* row, int64_t inner, double* acc) {
  if (inner >= kLaneSumMinRow) return SumInLanes(isa, row, nullptr, inner, acc, nullptr);
  for (int64_t k = 0; k < inner; ++k) *acc += static_cast<double>(row[k]);
}

// Two long rows a chunk at a time, each chunk's sum added to its row's
// accumulator (b may be null).
void SumChunked(Isa isa, const float* a, const float* b, int64_t inner, double* acc_a, double* acc_b) {
  for (int64_t k = 0; k < inner; k += kRowSumChunk) {
    const int64_t len = std::min(kRowSumChunk, inner - k);
    double sa = -0.0, sb = -0.0;  // the identity: a chunk of -0 sums to -0
    if (len >= kLaneSumMinRow) {
      SumInLanes(isa, a + k, b ? b + k : nullptr, len, &sa, &sb);
    } else {
      SumShortRow(isa, a + k, len, &sa);
      if (b) SumShortRow(isa, b + k, len, &sb);
    }
    *acc_a += sa;
    if (b) *acc_b += sb;
  }
}

}  // namespace

void SumRowsInDoubleWith(Isa isa, const float* x, const int64_t* bases, int64_t inner, double* acc) {
  if (inner > kRowSumChunk) {
    for (int64_t j = 0; j < kSumRows; j += 2) SumChunked(isa, x + bases[j], x + bases[j + 1], inner, &acc[j], &acc[j + 1]);
    return;
  }
  if (inner >= kLaneSumMinRow) {
    for (int64_t j = 0; j < kSumRows; j += 2) SumInLanes(isa, x + bases[j], x + bases[j + 1], inner, &acc[j], &acc[j + 1]);
    return;
  }
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == Isa::kAvx512) return SumRowsAvx512(x, bases, inner, acc);
  if (isa == Isa::kAvx2) return SumRowsAvx2(x, bases, inner, acc);
#endif
  SumRowsBaseline(x, bases, inner, acc);
}

void SumRowsInDouble(const float* x, const int64_t* bases, int64_t inner, double* acc) {
  SumRowsInDoubleWith(HostIsa(), x, bases, inner, acc);
}

void SumRowInDoubleWith(Isa isa, const float* row, int64_t inner, double* acc) {
  if (inner > kRowSumChunk) return SumChunked(isa, row, nullptr, inner, acc, nullptr);
  SumShortRow(isa, row, inner, acc);
}

void SumRowInDouble(const float* row, int64_t inner, double* acc) { SumRowInDoubleWith(HostIsa(), row, inner, acc); }

double RowChunkSum(const float* chunk, int64_t len) {
  double s = -0.0;  // as SumChunked's
  SumShortRow(HostIsa(), chunk, len, &s);
  return s;
}

}  // namespace anvil::cpu
