// Dots of f32 vector pairs (vector_dots.h): each instruction set's chunk
// loop against the order it promises, bit for bit, and whole dots as their
// chunks' sums added in order in double.
#include "plugins/cpu/vector_dots.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace anvil::cpu {
namespace {

// What vector_dots.h says a chunk's sum is, written out plainly.
float ExpectedChunk(const float* x, const float* y, int64_t n) {
  std::vector<float> lanes(32, 0.0f);
  for (int64_t k = 0; k < n; ++k) {
    const float product = x[k] * y[k];
    lanes[static_cast<size_t>(k % 32)] += product;
  }
  for (size_t width = 16; width > 0; width /= 2) {
    for (size_t l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

std::vector<float> Values(size_t n, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-12, 12);
  std::vector<float> v(n);
  for (float& e : v) e = std::ldexp(mantissa(random), exponent(random));
  return v;
}

TEST(CpuVectorDots, EveryLoopSumsAChunkInTheOrderItPromises) {
  const std::vector<float> x = Values(kVectorDotChunk + 8, 3), y = Values(kVectorDotChunk + 8, 4);
  for (Isa isa : IsasThisCpuRuns()) {
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{31}, int64_t{32}, int64_t{33}, int64_t{100}, kVectorDotChunk}) {
      const float got = VectorDotChunkWith(isa, x.data() + 1, y.data() + 3, n);
      const float expected = ExpectedChunk(x.data() + 1, y.data() + 3, n);
      EXPECT_EQ(0, std::memcmp(&got, &expected, sizeof(float))) << "isa " << static_cast<int>(isa) << ", n " << n;
    }
  }
}

TEST(CpuVectorDots, ADotAddsItsChunksInOrderInDouble) {
  // Three pairs of 2.5 chunks each, and many pairs of 5 (one short chunk).
  const Parallel serial(nullptr);
  for (int64_t K : {kVectorDotChunk * 5 / 2, int64_t{5}}) {
    const int64_t batch = K == 5 ? 1000 : 3;
    const std::vector<float> x = Values(static_cast<size_t>(batch * K), 5), y = Values(static_cast<size_t>(batch * K), 6);
    std::vector<float> z(static_cast<size_t>(batch));
    VectorDots(serial, batch, K, x.data(), y.data(), z.data());
    for (int64_t t = 0; t < batch; ++t) {
      double sum = 0;
      for (int64_t k = 0; k < K; k += kVectorDotChunk) {
        sum += ExpectedChunk(x.data() + t * K + k, y.data() + t * K + k, std::min(kVectorDotChunk, K - k));
      }
      const float expected = static_cast<float>(sum);
      EXPECT_EQ(0, std::memcmp(&z[static_cast<size_t>(t)], &expected, sizeof(float))) << "K " << K << ", pair " << t;
    }
  }
}

}  // namespace
}  // namespace anvil::cpu
