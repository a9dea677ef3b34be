#include "plugins/cpu/streamed_stores.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <unistd.h>

#include "plugins/cpu/isa.h"

namespace anvil::cpu {

int64_t HalfLastLevelCache() {
  static const int64_t half = [] {
    long bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (bytes <= 0) bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return bytes > 0 ? static_cast<int64_t>(bytes) / 2 : int64_t{8} << 20;
  }();
  return half;
}

bool ResultStreams(int64_t result_bytes, int64_t touched_bytes) {
  return result_bytes >= kStreamedResultBytes && touched_bytes > HalfLastLevelCache();
}

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) void StreamTileAvx512(const float* from, float* to, int64_t n) {
  int64_t k = 0;
  for (; k < n && reinterpret_cast<uintptr_t>(to + k) % 64 != 0; ++k) to[k] = from[k];
  for (; k + 16 <= n; k += 16) _mm512_stream_ps(to + k, _mm512_loadu_ps(from + k));
  for (; k < n; ++k) to[k] = from[k];
}
__attribute__((target("avx2"))) void StreamTileAvx2(const float* from, float* to, int64_t n) {
  int64_t k = 0;
  for (; k < n && reinterpret_cast<uintptr_t>(to + k) % 32 != 0; ++k) to[k] = from[k];
  for (; k + 8 <= n; k += 8) _mm256_stream_ps(to + k, _mm256_loadu_ps(from + k));
  for (; k < n; ++k) to[k] = from[k];
}
#endif

}  // namespace

void StreamTile(const float* from, float* to, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (HostIsa() == Isa::kAvx512) return StreamTileAvx512(from, to, n);
  if (HostIsa() == Isa::kAvx2) return StreamTileAvx2(from, to, n);
#endif
  int64_t k = 0;
#if defined(__SSE2__)
  for (; k < n && reinterpret_cast<uintptr_t>(to + k) % 16 != 0; ++k) to[k] = from[k];
  for (; k + 4 <= n; k += 4) _mm_stream_ps(to + k, _mm_loadu_ps(from + k));
#endif
  for (; k < n; ++k) to[k] = from[k];
}

void FenceStreamedStores() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace anvil::cpu
