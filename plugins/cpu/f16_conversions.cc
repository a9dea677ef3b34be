#include "plugins/cpu/f16_conversions.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace anvil::cpu {
namespace {

void WidenBaseline(const F16* x, float* y, int64_t n) {
  for (int64_t k = 0; k < n; ++k) y[k] = ToFloat(x[k]);
}
void NarrowBaseline(const float* x, F16* y, int64_t n) {
  for (int64_t k = 0; k < n; ++k) y[k] = ToF16(x[k]);
}

#if defined(__x86_64__) && defined(__GNUC__)
// Rounding to nearest even whatever MXCSR's rounding field says. (ToF16
// rounds a subnormal result with a float add, which follows that field:
// the two agree in the round-to-nearest mode every execution runs in.)
constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
// The zero-masked forms with every lane kept: the unmasked ones start from
// an undefined vector, which GCC 12 warns may be used uninitialised.
constexpr __mmask16 kAll = 0xffff;

// The last partial vector goes through a padded copy, so that every
// element takes the same instruction (the flush mode's subnormals).
__attribute__((target("avx512f"))) void WidenAvx512(const F16* x, float* y, int64_t n) {
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    _mm512_storeu_ps(y + k, _mm512_maskz_cvtph_ps(kAll, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + k))));
  }
  if (k == n) return;
  alignas(64) F16 in[16] = {};
  alignas(64) float out[16];
  std::copy(x + k, x + n, in);
  _mm512_store_ps(out, _mm512_maskz_cvtph_ps(kAll, _mm256_load_si256(reinterpret_cast<const __m256i*>(in))));
  std::copy(out, out + (n - k), y + k);
}
__attribute__((target("avx512f"))) void NarrowAvx512(const float* x, F16* y, int64_t n) {
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + k), _mm512_maskz_cvtps_ph(kAll, _mm512_loadu_ps(x + k), kNearest));
  }
  if (k == n) return;
  alignas(64) float in[16] = {};
  alignas(64) F16 out[16];
  std::copy(x + k, x + n, in);
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), _mm512_maskz_cvtps_ph(kAll, _mm512_load_ps(in), kNearest));
  std::copy(out, out + (n - k), y + k);
}
__attribute__((target("avx2,f16c"))) void WidenF16c(const F16* x, float* y, int64_t n) {
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    _mm256_storeu_ps(y + k, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + k))));
  }
  if (k == n) return;
  alignas(32) F16 in[8] = {};
  alignas(32) float out[8];
  std::copy(x + k, x + n, in);
  _mm256_store_ps(out, _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(in))));
  std::copy(out, out + (n - k), y + k);
}
__attribute__((target("avx2,f16c"))) void NarrowF16c(const float* x, F16* y, int64_t n) {
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + k), _mm256_cvtps_ph(_mm256_loadu_ps(x + k), kNearest));
  }
  if (k == n) return;
  alignas(32) float in[8] = {};
  alignas(32) F16 out[8];
  std::copy(x + k, x + n, in);
  _mm_store_si128(reinterpret_cast<__m128i*>(out), _mm256_cvtps_ph(_mm256_load_ps(in), kNearest));
  std::copy(out, out + (n - k), y + k);
}

bool HasF16c() {
  static const bool f16c = __builtin_cpu_supports("f16c");
  return f16c;
}
#endif

}  // namespace

void WidenF16With(Isa isa, const F16* x, float* y, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == Isa::kAvx512) return WidenAvx512(x, y, n);
  if (isa == Isa::kAvx2 && HasF16c()) return WidenF16c(x, y, n);
#endif
  (void)isa;
  WidenBaseline(x, y, n);
}

void NarrowToF16With(Isa isa, const float* x, F16* y, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == Isa::kAvx512) return NarrowAvx512(x, y, n);
  if (isa == Isa::kAvx2 && HasF16c()) return NarrowF16c(x, y, n);
#endif
  (void)isa;
  NarrowBaseline(x, y, n);
}

void WidenF16(const F16* x, float* y, int64_t n) { WidenF16With(HostIsa(), x, y, n); }
void NarrowToF16(const float* x, F16* y, int64_t n) { NarrowToF16With(HostIsa(), x, y, n); }

}  // namespace anvil::cpu
