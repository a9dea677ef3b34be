// fft over the last one to three dimensions: FFT and IFFT of complex64 and
// complex128, RFFT of f32 and f64, IRFFT back. Single precision through
// KissFFT (Debian's libkissfft, BSD-3-Clause, a C library built for float
// only), double precision through Eigen's FFT module (Debian's header-only
// libeigen3-dev, MPL-2.0, whose engine is a templated KissFFT). Eigen's is
// not used for float too: its std::complex products take C99's infinity
// recovery (__mulsc3), 1.3x slower than KissFFT's plain products, and the
// flag that turns that off (-fcx-fortran-rules) would reach, through the
// weak std::complex operators of unoptimised builds, every complex product
// in the plugin.
//
// As the evaluator computes them: the signal is made complex at its full
// length (IRFFT: the half the input leaves out rebuilt by Hermitian
// symmetry, X[-k] = conj(X[k]) along every transformed dimension), each
// transformed dimension gets a 1-D transform of every line along it (the
// inverse ones divided by the length: HLO's IFFT is normalised), and the
// result is what RFFT keeps of the last dimension (its first n/2 + 1
// elements) or IRFFT's real part. A length of one is the identity. Lines
// split across threads; the complex signal lives in the kernel's temporary.
#include <kiss_fft.h>
#include <kiss_fftr.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include <unsupported/Eigen/FFT>

#include "hlo/attributes.h"
#include "plugins/cpu/chirp_transform.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;

enum class FftType { kFft, kIfft, kRfft, kIrfft };

static_assert(sizeof(std::complex<float>) == sizeof(kiss_fft_cpx), "KissFFT's complex is two floats");

// One transformed dimension: its length, the step between a line's
// elements, and either the chirp-z form of a length with a large prime
// factor (chirp_transform.h) or (single precision) KissFFT's tables, made
// once per compile and only read while running (kiss_fft allocates what
// scratch it needs).
struct Transform {
  int64_t length = 1, stride = 1;
  std::shared_ptr<const ChirpTransform> chirp;  // UsesChirpTransform(length)
  kiss_fft_cfg cfg = nullptr;  // float, a length above one, and no chirp
};
struct Transforms {
  std::vector<Transform> dims;
  ~Transforms() {
    for (Transform& t : dims) kiss_fft_free(t.cfg);
  }
};

// The 1-D transform of every line along `t` in `signal` (`total` elements).
template <typename R>
void TransformLines(const Transform& t, bool inverse, int64_t total, std::complex<R>* signal, const Parallel& parallel) {
  using C = std::complex<R>;
  if (t.length == 1) return;  // the identity, forward and inverse
  const int64_t lines = total / t.length;
  const R scale = inverse ? R(1) / static_cast<R>(t.length) : R(1);
  parallel.For(lines, std::max<int64_t>(1, 4096 / t.length), [&](int64_t lo, int64_t hi) {
    // Eigen's FFT object (double only) caches its plans and scratch in
    // itself, so each chunk of lines has its own.
    Eigen::FFT<double> eigen_fft;
    eigen_fft.SetFlag(Eigen::FFT<double>::Unscaled);  // scaled below, as the evaluator scales
    ChirpTransform::Workspace chirp_workspace;
    std::vector<C> line(static_cast<size_t>(t.length)), result(static_cast<size_t>(t.length));
    for (int64_t l = lo; l < hi; ++l) {
      // Line l starts at its outer block's first element plus its offset
      // inside the block of `stride` interleaved lines.
      C* first = signal + (l / t.stride) * t.length * t.stride + l % t.stride;
      for (int64_t e = 0; e < t.length; ++e) line[e] = first[e * t.stride];
      if (t.chirp) {
        t.chirp->Run(line.data(), result.data(), chirp_workspace);
      } else if constexpr (std::is_same_v<R, float>) {
        kiss_fft(t.cfg, reinterpret_cast<const kiss_fft_cpx*>(line.data()), reinterpret_cast<kiss_fft_cpx*>(result.data()));
      } else if (inverse) {
        eigen_fft.inv(result.data(), line.data(), t.length);
      } else {
        eigen_fft.fwd(result.data(), line.data(), t.length);
      }
      for (int64_t e = 0; e < t.length; ++e) first[e * t.stride] = inverse ? result[e] * scale : result[e];
    }
  });
}

// IRFFT's full spectrum of `dims` from the stored half `in` (whose last
// dimension holds `stored` elements).
template <typename C>
void RebuildHermitian(const C* in, int64_t stored, const std::vector<int64_t>& dims, int first_fft_dim, C* signal) {
  const int rank = static_cast<int>(dims.size());
  const int64_t n = dims.back();
  std::vector<int64_t> in_strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * (d + 1 == rank - 1 ? stored : dims[d + 1]);
  std::vector<int64_t> index(rank, 0);
  for (C* out = signal;; ++out) {
    const int64_t last = index.back();
    if (last < stored) {
      int64_t at = 0;
      for (int d = 0; d < rank; ++d) at += index[d] * in_strides[d];
      *out = in[at];
    } else {  // mirrored along every transformed dimension, and conjugated
      int64_t at = 0;
      for (int d = 0; d < rank - 1; ++d) {
        const int64_t i = d >= first_fft_dim ? (dims[d] - index[d]) % dims[d] : index[d];
        at += i * in_strides[d];
      }
      at += (n - last) % n;
      *out = std::conj(in[at]);
    }
    int d = rank - 1;
    for (; d >= 0 && ++index[d] == dims[d]; --d) index[d] = 0;
    if (d < 0) return;
  }
}

// The kernel for real scalar R (float: complex64 and f32; double:
// complex128 and f64), once the type, lengths and shapes are checked.
template <typename R>
Kernel MakeFft(FftType type, std::vector<int64_t> dims, int first, int64_t stored, int64_t kept, Slot in, Slot out,
               Temp* temp) {
  using C = std::complex<R>;
  const int rank = static_cast<int>(dims.size());
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  const bool inverse = type == FftType::kIfft || type == FftType::kIrfft;
  auto transforms = std::make_shared<Transforms>();
  for (int d = first; d < rank; ++d) {
    Transform t;
    t.length = dims[d];
    t.stride = strides[d];
    if (UsesChirpTransform(t.length)) {
      t.chirp = std::make_shared<const ChirpTransform>(t.length, inverse);
    } else if (std::is_same_v<R, float> && t.length > 1) {
      t.cfg = kiss_fft_alloc(static_cast<int>(t.length), inverse ? 1 : 0, nullptr, nullptr);
      if (!t.cfg) return nullptr;
    }
    transforms->dims.push_back(t);
  }
  temp->bytes = std::max(temp->bytes, total * static_cast<int64_t>(sizeof(C)));
  const Slot signal_slot = temp->slot;
  const int64_t n = dims.back();
  return [=](const Frame& frame) {
    if (total == 0) return;
    C* signal = static_cast<C*>(frame.At(signal_slot));
    const void* x = frame.At(in);
    switch (type) {
      case FftType::kFft: case FftType::kIfft: std::memcpy(signal, x, total * sizeof(C)); break;
      case FftType::kRfft: {
        const R* real = static_cast<const R*>(x);
        for (int64_t k = 0; k < total; ++k) signal[k] = C(real[k], R(0));
        break;
      }
      case FftType::kIrfft: RebuildHermitian(static_cast<const C*>(x), stored, dims, first, signal); break;
    }
    for (const Transform& t : transforms->dims) TransformLines<R>(t, inverse, total, signal, *frame.parallel);
    void* y = frame.At(out);
    switch (type) {
      case FftType::kFft: case FftType::kIfft: std::memcpy(y, signal, total * sizeof(C)); break;
      case FftType::kRfft: {
        C* result = static_cast<C*>(y);
        for (int64_t row = 0; row < total / n; ++row) std::copy_n(signal + row * n, kept, result + row * kept);
        break;
      }
      case FftType::kIrfft: {
        R* result = static_cast<R*>(y);
        for (int64_t k = 0; k < total; ++k) result[k] = signal[k].real();
        break;
      }
    }
  };
}

// RFFT of f32 along the last dimension alone, of even length: KissFFT's
// real transform straight from each row into its n/2 + 1 results, a
// complex transform of half the length, where the general path makes
// every row complex at full length first (rfft of f32[2048,1024]: 13 ms).
// Its rounding differs from the full-length transform's, within the
// conformance runner's tolerances for sums. kiss_fftr keeps scratch in its
// configuration, so each chunk of rows has its own.
Kernel RealRowsFft(int64_t rows, int64_t n, Slot in, Slot out) {
  return [=](const Frame& frame) {
    const float* x = static_cast<const float*>(frame.At(in));
    auto* y = static_cast<kiss_fft_cpx*>(frame.At(out));
    const int64_t kept = n / 2 + 1;
    frame.parallel->For(rows, std::max<int64_t>(1, 16384 / n), [&](int64_t lo, int64_t hi) {
      std::unique_ptr<std::remove_pointer_t<kiss_fftr_cfg>, void (*)(void*)> cfg(
          kiss_fftr_alloc(static_cast<int>(n), 0, nullptr, nullptr), &kiss_fftr_free);
      if (!cfg) throw std::bad_alloc();
      for (int64_t row = lo; row < hi; ++row) kiss_fftr(cfg.get(), x + row * n, y + row * kept);
    });
  };
}

}  // namespace

Kernel FftKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out, Temp* temp) {
  if (i.operands.size() != 1 || in.size() != 1 || !i.shape.IsArray()) return nullptr;
  const std::string spelled = hlo::StringAttribute(i, "fft_type");
  const FftType type = spelled == "FFT"     ? FftType::kFft
                       : spelled == "IFFT"  ? FftType::kIfft
                       : spelled == "RFFT"  ? FftType::kRfft
                       : spelled == "IRFFT" ? FftType::kIrfft
                                            : static_cast<FftType>(-1);
  if (static_cast<int>(type) < 0) return nullptr;
  // Single or double precision, by the complex side's type.
  const ElementType from = i.operands[0]->shape.element_type(), to = i.shape.element_type();
  const ElementType complex = type == FftType::kRfft ? to : from;
  if (complex != ElementType::kC64 && complex != ElementType::kC128) return nullptr;
  const bool wide = complex == ElementType::kC128;
  const ElementType real = wide ? ElementType::kF64 : ElementType::kF32;
  const ElementType want_from = type == FftType::kRfft ? real : complex;
  const ElementType want_to = type == FftType::kIrfft ? real : complex;
  if (from != want_from || to != want_to) return nullptr;
  auto lengths = hlo::IntListAttribute(i, "fft_length");
  const std::vector<int64_t>& operand_dims = i.operands[0]->shape.dims();
  const int rank = static_cast<int>(operand_dims.size());
  if (!lengths.ok() || lengths->empty() || lengths->size() > 3 || static_cast<int>(lengths->size()) > rank) {
    return nullptr;
  }
  // The full-length signal's dimensions; the transformed ones must be the
  // lengths (the verifier has checked the result's shape against them).
  std::vector<int64_t> dims = operand_dims;
  if (type == FftType::kIrfft) dims.back() = lengths->back();
  const int first = rank - static_cast<int>(lengths->size());
  for (int d = first; d < rank; ++d) {
    if (dims[d] != (*lengths)[d - first] || dims[d] > (int64_t{1} << 30)) return nullptr;
  }
  const int64_t stored = operand_dims.back();  // IRFFT: the half in the input
  if (type == FftType::kIrfft && stored != dims.back() / 2 + 1) return nullptr;
  const int64_t kept = i.shape.dims().empty() ? 1 : i.shape.dims().back();  // RFFT: n/2 + 1
  const int64_t n = dims.back();
  // (A half length with a large prime factor would take KissFFT's generic
  // butterflies: the general path's chirp-z transform instead.)
  if (type == FftType::kRfft && !wide && lengths->size() == 1 && n >= 2 && n % 2 == 0 && n <= (int64_t{1} << 24) &&
      !UsesChirpTransform(n / 2)) {
    return RealRowsFft(i.operands[0]->shape.ElementCount() / n, n, in[0], out);
  }
  return wide ? MakeFft<double>(type, dims, first, stored, kept, in[0], out, temp)
              : MakeFft<float>(type, dims, first, stored, kept, in[0], out, temp);
}

}  // namespace anvil::cpu
