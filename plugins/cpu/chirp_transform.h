// The discrete Fourier transform of a length with a large prime factor, by
// Bluestein's chirp-z algorithm: as a circular convolution of power-of-two
// length, in double precision through Eigen's FFT.
//
// KissFFT and Eigen's FFT (kernels_fft.cc) factor a length into 2, 3, 4
// and 5 and take any other prime factor p by a generic butterfly of p^2
// products per p elements: a prime length n costs n^2, so the fft of one
// line of 100003 took 11 s. The chirp-z form costs three transforms of
// m >= 2n - 1 (a power of two) and 3n products, whatever n's factors,
// which is what XLA's CPU backend (pocketfft) does for such lengths.
//
// With s = -1 forward and +1 inverse and w_k = exp(s i pi k^2 / n),
//   X_j = sum_k x_k exp(s 2 pi i j k / n) = w_j sum_k (x_k w_k) conj(w_{j-k}),
// since 2jk = j^2 + k^2 - (j - k)^2: a convolution of x_k w_k with
// conj(w_k). k^2 is reduced mod 2n in integers before the angle is taken,
// so every chirp is as exact as one cos and sin of an angle below 2 pi.
// Computed in double, a float line's result is its single-precision
// transform's to within rounding; like the kernels beside it, unscaled
// (the caller divides an inverse by n).
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include <unsupported/Eigen/FFT>

namespace anvil::cpu {

// Whether a line of `length` goes through ChirpTransform: its largest prime
// factor is above 61, from where the generic butterflies' p^2 products
// outweigh three transforms of two to four times the length.
bool UsesChirpTransform(int64_t length);

class ChirpTransform {
 public:
  // What one thread needs to run transforms: Eigen's FFT object keeps its
  // plans and scratch in itself, so it is not shared between threads.
  struct Workspace {
    Eigen::FFT<double> fft;
    std::vector<std::complex<double>> a, spectrum;
  };

  ChirpTransform(int64_t length, bool inverse);

  // out[j] = sum_k in[k] exp(s 2 pi i j k / n), n = length; in and out
  // may be the same line.
  template <typename R>
  void Run(const std::complex<R>* in, std::complex<R>* out, Workspace& w) const {
    w.a.assign(static_cast<size_t>(padded_), std::complex<double>());
    for (int64_t k = 0; k < length_; ++k) w.a[k] = std::complex<double>(in[k]) * chirp_[k];
    Convolve(w);
    for (int64_t j = 0; j < length_; ++j) out[j] = std::complex<R>(w.a[j] * chirp_[j]);
  }

  int64_t length() const { return length_; }

 private:
  // w.a = w.a (*) conj(chirp), circularly at the padded length.
  void Convolve(Workspace& w) const;

  int64_t length_, padded_;
  std::vector<std::complex<double>> chirp_;            // w_k, k < n
  std::vector<std::complex<double>> kernel_spectrum_;  // FFT of conj(w) around zero, divided by the padded length
};

}  // namespace anvil::cpu
