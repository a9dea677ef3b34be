#include "plugins/cpu/vector_dots.h"

#include <algorithm>
#include <vector>

namespace anvil::cpu {
namespace {

constexpr int kLanes = 32;

[[gnu::always_inline]] inline float ChunkLoop(const float* x, const float* y, int64_t n) {
  float lanes[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += x[k + l] * y[k + l];
  }
  for (int l = 0; k + l < n; ++l) lanes[l] += x[k + l] * y[k + l];
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

float ChunkBaseline(const float* x, const float* y, int64_t n) { return ChunkLoop(x, y, n); }
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) float ChunkAvx2(const float* x, const float* y, int64_t n) {
  return ChunkLoop(x, y, n);
}
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))) float ChunkAvx512(const float* x, const float* y,
                                                                                int64_t n) {
  return ChunkLoop(x, y, n);
}
#endif

}  // namespace

float VectorDotChunkWith(Isa isa, const float* x, const float* y, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == Isa::kAvx512) return ChunkAvx512(x, y, n);
  if (isa == Isa::kAvx2) return ChunkAvx2(x, y, n);
#else
  (void)isa;
#endif
  return ChunkBaseline(x, y, n);
}

void VectorDots(const Parallel& parallel, int64_t batch, int64_t K, const float* x, const float* y, float* z) {
  const int64_t chunks = std::max<int64_t>(1, (K + kVectorDotChunk - 1) / kVectorDotChunk);
  const Isa isa = HostIsa();
  if (chunks == 1) {
    // One chunk a pair: its sum is the result (through double and back, the
    // same float), so no partials are kept (a batch of 1e8 pairs of 3
    // would hold 400 MB of them).
    parallel.For(batch, std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(1, K)), [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) z[t] = VectorDotChunkWith(isa, x + t * K, y + t * K, K);
    });
    return;
  }
  std::vector<float> partial(static_cast<size_t>(batch * chunks));
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(1, std::min(K, kVectorDotChunk)));
  parallel.For(batch * chunks, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const int64_t t = p / chunks, begin = p % chunks * kVectorDotChunk;
      const int64_t n = std::min(kVectorDotChunk, K - begin);
      partial[p] = VectorDotChunkWith(isa, x + t * K + begin, y + t * K + begin, n);
    }
  });
  for (int64_t t = 0; t < batch; ++t) {
    double sum = 0;
    for (int64_t c = 0; c < chunks; ++c) sum += static_cast<double>(partial[t * chunks + c]);
    z[t] = static_cast<float>(sum);
  }
}

}  // namespace anvil::cpu
