#include "plugins/cpu/chirp_transform.h"

#include <cmath>
#include <numbers>

namespace anvil::cpu {
namespace {

// The largest prime factor KissFFT's and Eigen's generic butterflies take
// directly. anvil bench of 64 lines of complex64, direct -> chirp: length
// 53 0.170 -> 0.169 ms, 79 0.373 -> 0.296, 97 0.45 -> 0.29; 4 lines of
// 1009 3.95 -> 0.24 ms; one line of 100003 11.5 s -> 15 ms.
constexpr int64_t kMaxDirectFactor = 61;

int64_t LargestPrimeFactor(int64_t n) {
  int64_t largest = 1;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      largest = p;
      n /= p;
    }
  }
  return n > 1 ? n : largest;
}

}  // namespace

bool UsesChirpTransform(int64_t length) { return length > 1 && LargestPrimeFactor(length) > kMaxDirectFactor; }

ChirpTransform::ChirpTransform(int64_t length, bool inverse) : length_(length), padded_(1) {
  while (padded_ < 2 * length - 1) padded_ *= 2;
  const double sign = inverse ? 1.0 : -1.0;
  chirp_.resize(static_cast<size_t>(length));
  for (int64_t k = 0; k < length; ++k) {
    // k^2 mod 2n: exp(s i pi k^2 / n) has period 2n in k^2.
    const auto k2 = static_cast<int64_t>((static_cast<unsigned __int128>(k) * k) % (2 * static_cast<uint64_t>(length)));
    const double angle = sign * std::numbers::pi * static_cast<double>(k2) / static_cast<double>(length);
    chirp_[k] = std::complex<double>(std::cos(angle), std::sin(angle));
  }
  // conj(w) at offsets -(n-1)..(n-1), laid out circularly.
  std::vector<std::complex<double>> kernel(static_cast<size_t>(padded_));
  for (int64_t k = 0; k < length; ++k) {
    kernel[k] = std::conj(chirp_[k]);
    if (k > 0) kernel[padded_ - k] = std::conj(chirp_[k]);
  }
  Eigen::FFT<double> fft;
  kernel_spectrum_.resize(static_cast<size_t>(padded_));
  fft.fwd(kernel_spectrum_.data(), kernel.data(), padded_);
  const double scale = 1.0 / static_cast<double>(padded_);  // the inverse transform below is unscaled
  for (auto& c : kernel_spectrum_) c *= scale;
}

void ChirpTransform::Convolve(Workspace& w) const {
  w.fft.SetFlag(Eigen::FFT<double>::Unscaled);
  w.spectrum.resize(static_cast<size_t>(padded_));
  w.fft.fwd(w.spectrum.data(), w.a.data(), padded_);
  for (int64_t k = 0; k < padded_; ++k) w.spectrum[k] *= kernel_spectrum_[k];
  w.fft.inv(w.a.data(), w.spectrum.data(), padded_);
}

}  // namespace anvil::cpu
