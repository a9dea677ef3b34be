// cholesky of f32, f64, c64 and c128 matrices through LAPACK's potrf (the
// system's LAPACK: Debian's reference build, or OpenBLAS where it is the
// alternative installed), one matrix per call, batches split across
// threads.
//
// LAPACK is column-major and HLO row-major. A row-major matrix read as
// column-major is its transpose, which for a Hermitian A is conj(A); its
// factor conj(A) = U^H U with U = L^T (for A = L L^H), so potrf's upper
// factor, read back row-major, is L itself, and its lower factor is A's
// upper factor U = L^H. So `lower=true` asks potrf for 'U' and reads the
// row-major lower triangle, as the evaluator does.
//
// The other triangle is zero. A matrix that is not positive definite (a
// pivot that is not positive, or NaN) comes out all NaN, as JAX's CPU
// cholesky and the evaluator (hlo/evaluator_linalg.cc) give it.
#include <complex>
#include <cstring>
#include <limits>

#include "plugins/cpu/plan.h"

extern "C" {
// LAPACK's Fortran entry points, with gfortran's hidden length of the
// character argument last.
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t uplo_len);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
void cpotrf_(const char* uplo, const int* n, std::complex<float>* a, const int* lda, int* info, size_t uplo_len);
void zpotrf_(const char* uplo, const int* n, std::complex<double>* a, const int* lda, int* info, size_t uplo_len);
}

namespace anvil::cpu {
namespace {

int Potrf(char uplo, int n, float* a) {
  int info = 0;
  spotrf_(&uplo, &n, a, &n, &info, 1);
  return info;
}
int Potrf(char uplo, int n, double* a) {
  int info = 0;
  dpotrf_(&uplo, &n, a, &n, &info, 1);
  return info;
}
int Potrf(char uplo, int n, std::complex<float>* a) {
  int info = 0;
  cpotrf_(&uplo, &n, a, &n, &info, 1);
  return info;
}
int Potrf(char uplo, int n, std::complex<double>* a) {
  int info = 0;
  zpotrf_(&uplo, &n, a, &n, &info, 1);
  return info;
}

template <typename T>
T NotANumber() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::quiet_NaN();
  } else {
    using R = typename T::value_type;
    return T(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  }
}

template <typename T>
Kernel MakeCholesky(bool lower, int64_t n, int64_t batches, Slot in, Slot out) {
  return [=](const Frame& frame) {
    const auto* a = static_cast<const T*>(frame.At(in));
    T* result = static_cast<T*>(frame.At(out));
    frame.parallel->ForEachThread(batches, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) {
        T* m = result + b * n * n;
        if (m != a + b * n * n) std::memcpy(m, a + b * n * n, static_cast<size_t>(n * n) * sizeof(T));
        // potrf's info > 0 is a pivot that is not positive; OpenBLAS's
        // potrf lets a NaN pivot through, so the factor's diagonal is
        // checked as well (every entry real and positive when A is
        // positive definite).
        bool failed = Potrf(lower ? 'U' : 'L', static_cast<int>(n), m) != 0;
        for (int64_t d = 0; d < n && !failed; ++d) failed = !(std::real(m[d * n + d]) > 0);
        for (int64_t r = 0; r < n; ++r) {
          for (int64_t c = 0; c < n; ++c) {
            T& v = m[r * n + c];
            if (failed) {
              v = NotANumber<T>();
            } else if (lower ? c > r : c < r) {
              v = T(0);
            }
          }
        }
      }
    });
  };
}

}  // namespace

Kernel CholeskyKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.operands.size() != 1 || in.size() != 1 || !i.shape.IsArray()) return nullptr;
  const hlo::Shape& a = i.operands[0]->shape;
  const hlo::ElementType t = i.shape.element_type();
  const int rank = a.rank();
  if (a.element_type() != t || a.dims() != i.shape.dims() || rank < 2 || a.dim(rank - 1) != a.dim(rank - 2)) {
    return nullptr;
  }
  const int64_t n = a.dim(rank - 1);
  if (n > std::numeric_limits<int>::max()) return nullptr;  // LAPACK's int sizes
  const int64_t batches = n == 0 ? 0 : a.ElementCount() / (n * n);
  const bool lower = hlo::BoolAttribute(i, "lower");
  switch (t) {
    case hlo::ElementType::kF32: return MakeCholesky<float>(lower, n, batches, in[0], out);
    case hlo::ElementType::kF64: return MakeCholesky<double>(lower, n, batches, in[0], out);
    case hlo::ElementType::kC64: return MakeCholesky<std::complex<float>>(lower, n, batches, in[0], out);
    case hlo::ElementType::kC128: return MakeCholesky<std::complex<double>>(lower, n, batches, in[0], out);
    default: return nullptr;  // narrower floats stay the evaluator's
  }
}

}  // namespace anvil::cpu
