// triangular-solve of any float or complex type: each batch's matrix and
// right-hand sides read into std::complex<double> and solved by the
// evaluator's own solver (hlo/triangular_solve), so the same bits; batches
// split across threads.
#include <complex>
#include <vector>

#include "hlo/scalar_ops.h"
#include "hlo/triangular_solve.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {

Kernel TriangularSolveKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.operands.size() != 2 || in.size() != 2 || !i.shape.IsArray()) return nullptr;
  const hlo::Shape& a = i.operands[0]->shape;
  const hlo::Shape& b = i.operands[1]->shape;
  const hlo::ElementType t = i.shape.element_type();
  if (!(hlo::IsFloat(t) || hlo::IsComplex(t)) || a.element_type() != t || b.element_type() != t || a.rank() < 2 ||
      b.rank() != a.rank() || b.dims() != i.shape.dims()) {
    return nullptr;
  }
  auto options = hlo::TriangularSolveOptionsOf(i);
  if (!options.ok()) return nullptr;
  const int rank = a.rank();
  const int64_t m = a.dim(rank - 1), rows = b.dim(rank - 2), cols = b.dim(rank - 1);
  if (a.dim(rank - 2) != m || m != ((*options).left_side ? rows : cols)) return nullptr;
  const int64_t batches = m == 0 ? 0 : a.ElementCount() / (m * m);
  if (batches * rows * cols != b.ElementCount()) return nullptr;
  const int64_t bytes = hlo::Info(t).byte_size;
  return [=, options = *options](const Frame& frame) {
    const auto* matrices = static_cast<const unsigned char*>(frame.At(in[0]));
    const auto* rhs = static_cast<const unsigned char*>(frame.At(in[1]));
    auto* result = static_cast<unsigned char*>(frame.At(out));
    frame.parallel->ForEachThread(batches, [&](int64_t lo, int64_t hi) {
      std::vector<std::complex<double>> matrix(static_cast<size_t>(m * m)), y(static_cast<size_t>(rows * cols)),
          x(y.size());
      auto load = [&](const unsigned char* p) {
        const hlo::Scalar s = hlo::LoadScalar(t, p);
        return std::complex<double>(s.re, s.im);
      };
      for (int64_t batch = lo; batch < hi; ++batch) {
        for (int64_t k = 0; k < m * m; ++k) matrix[static_cast<size_t>(k)] = load(matrices + (batch * m * m + k) * bytes);
        for (int64_t k = 0; k < rows * cols; ++k) y[static_cast<size_t>(k)] = load(rhs + (batch * rows * cols + k) * bytes);
        hlo::SolveTriangular(options, m, rows, cols, matrix.data(), y.data(), x.data());
        for (int64_t k = 0; k < rows * cols; ++k) {
          hlo::Scalar s;
          s.re = x[static_cast<size_t>(k)].real();
          s.im = x[static_cast<size_t>(k)].imag();
          hlo::StoreScalar(t, s, result + (batch * rows * cols + k) * bytes);
        }
      }
    });
  };
}

}  // namespace anvil::cpu
