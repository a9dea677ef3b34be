// The chirp-z transform (chirp_transform.h) against the DFT's definition
// summed in long double, forward and inverse, for prime lengths, a length
// with a large prime factor, and lengths just past a power of two's half
// (where the padded length doubles); and which lengths take it.
#include "plugins/cpu/chirp_transform.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <vector>

namespace anvil::cpu {
namespace {

std::vector<std::complex<double>> Dft(const std::vector<std::complex<double>>& x, bool inverse) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<std::complex<long double>> twiddle(x.size());  // exp(s 2 pi i r / n)
  for (int64_t r = 0; r < n; ++r) {
    const long double angle = (inverse ? 2 : -2) * std::numbers::pi_v<long double> * r / n;
    twiddle[r] = {std::cos(angle), std::sin(angle)};
  }
  std::vector<std::complex<double>> out(x.size());
  for (int64_t j = 0; j < n; ++j) {
    std::complex<long double> sum = 0;
    for (int64_t k = 0; k < n; ++k) sum += std::complex<long double>(x[k]) * twiddle[j * k % n];
    out[j] = std::complex<double>(sum);
  }
  return out;
}

TEST(ChirpTransform, MatchesTheDftForwardAndInverse) {
  std::mt19937 random(7);
  std::normal_distribution<double> normal;
  for (const int64_t n : {2, 3, 101, 127, 257, 1009, 2 * 1009, 3 * 211}) {
    std::vector<std::complex<double>> x(static_cast<size_t>(n));
    for (auto& v : x) v = {normal(random), normal(random)};
    for (const bool inverse : {false, true}) {
      const ChirpTransform chirp(n, inverse);
      std::vector<std::complex<double>> got(x.size());
      ChirpTransform::Workspace workspace;
      chirp.Run(x.data(), got.data(), workspace);
      const std::vector<std::complex<double>> want = Dft(x, inverse);
      // Each output sums n terms of size about 1: errors of a few ulps of
      // sqrt(n) are rounding, a wrong chirp or kernel is of order one.
      for (int64_t j = 0; j < n; ++j) {
        ASSERT_LT(std::abs(got[j] - want[j]), 1e-11 * std::sqrt(static_cast<double>(n)))
            << "n " << n << (inverse ? " inverse" : " forward") << ", output " << j << ": " << got[j] << " vs "
            << want[j];
      }
    }
  }
}

TEST(ChirpTransform, RunsSinglePrecisionLinesInDouble) {
  const int64_t n = 211;
  std::vector<std::complex<float>> x(static_cast<size_t>(n));
  std::vector<std::complex<double>> wide(x.size());
  for (int64_t k = 0; k < n; ++k) wide[k] = x[k] = {std::sin(0.1f * k), std::cos(0.3f * k)};
  const ChirpTransform chirp(n, false);
  ChirpTransform::Workspace workspace;
  chirp.Run(x.data(), x.data(), workspace);  // in place
  const std::vector<std::complex<double>> want = Dft(wide, false);
  for (int64_t j = 0; j < n; ++j) {
    ASSERT_LT(std::abs(std::complex<double>(x[j]) - want[j]), 1e-5 * std::abs(want[j]) + 1e-5) << "output " << j;
  }
}

TEST(ChirpTransform, TakesOnlyLengthsWithALargePrimeFactor) {
  for (const int64_t direct : {1, 2, 61, 1024, 3 * 5 * 7 * 11 * 13, 61 * 61}) {
    EXPECT_FALSE(UsesChirpTransform(direct)) << direct;
  }
  for (const int64_t chirp : {67, 2 * 101, 1009, 100003, 4 * 100003}) EXPECT_TRUE(UsesChirpTransform(chirp)) << chirp;
}

}  // namespace
}  // namespace anvil::cpu
