// triangular-solve. f32 and f64 through Eigen's blocked triangular solver,
// in the operands' own precision as XLA's CPU backend solves them (a
// 512 x 512 system with 256 right-hand sides: 106 ms by substitution in
// complex<double>, 1-2 ms so); complex and narrow float types read into
// std::complex<double> and solved by the evaluator's own solver
// (hlo/triangular_solve), so the same bits. Batches split across threads.
#include <Eigen/Core>

#include <algorithm>
#include <complex>
#include <vector>

#include "hlo/scalar_ops.h"
#include "hlo/triangular_solve.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

// Part of one batch of a real (T) solve: `a` m x m, `b` and `x` rows x
// cols, all row-major; only the triangle `options` names is read. The part
// is right-hand sides [first, last): columns of b for a left-side solve
// (op(A) X = B), rows for a right-side one (X op(A) = B), each solved on
// its own.
template <typename T>
void SolveReal(const hlo::TriangularSolveOptions& options, int64_t m, int64_t rows, int64_t cols, const T* a,
               const T* b, T* x, int64_t first, int64_t last) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Block = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;
  const Eigen::Map<const Matrix> matrix(a, m, m);
  const int64_t offset = options.left_side ? first : first * cols;
  const int64_t part_rows = options.left_side ? rows : last - first, part_cols = options.left_side ? last - first : cols;
  Block solution(x + offset, part_rows, part_cols, Eigen::OuterStride<>(cols));
  solution = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>(b + offset, part_rows, part_cols, Eigen::OuterStride<>(cols));
  // op(A) is A or (for real types, transpose and adjoint alike) A's
  // transpose, whose stored triangle is the other one.
  const bool transposed = options.transpose != hlo::TriangularSolveOptions::Transpose::kNone;
  const bool lower = options.lower != transposed;
  auto solve = [&](const auto& op_a) {
    auto with = [&]<unsigned kMode>() {
      if (options.left_side) {
        op_a.template triangularView<kMode>().solveInPlace(solution);
      } else {
        op_a.template triangularView<kMode>().template solveInPlace<Eigen::OnTheRight>(solution);
      }
    };
    if (lower) {
      options.unit_diagonal ? with.template operator()<Eigen::UnitLower>() : with.template operator()<Eigen::Lower>();
    } else {
      options.unit_diagonal ? with.template operator()<Eigen::UnitUpper>() : with.template operator()<Eigen::Upper>();
    }
  };
  if (transposed) {
    solve(matrix.transpose());
  } else {
    solve(matrix);
  }
}

// Right-hand sides fewer than this to a part are solved with the others,
// and parts begin at multiples of it: Eigen's solver works on panels of
// right-hand sides (8 floats or 4 doubles wide as the plugin compiles it,
// for the x86-64 baseline), so a part that begins where a panel would
// solves each side as the whole would, and a result is the same on any
// number of threads. Checked by a throwaway program against the whole
// solve: square 37 to 513, 33 to 300 sides, left and right, f32 and f64,
// all identical. Built with -march=native (wider panels), 16 of those 60
// f32 cases differed in some bits.
constexpr int64_t kSidesPerPanel = 16;

// Batches split across the host's threads, and a batch's right-hand sides
// too when there are fewer batches than threads (JAX's solve_triangular of
// one 512 x 512 system with 256 right-hand sides, with the fused loop that
// makes the matrix: 3.5-5.3 -> 2.6-3.0 ms medians on two threads).
template <typename T>
Kernel RealTriangularSolve(const hlo::TriangularSolveOptions& options, int64_t batches, int64_t m, int64_t rows,
                           int64_t cols, const std::vector<Slot>& in, const Slot& out) {
  if (batches == 0) return [](const Frame&) {};
  const int64_t sides = options.left_side ? cols : rows;
  const int64_t threads = Parallel::Threads();
  const int64_t parts = batches >= threads ? 1
                                           : std::max<int64_t>(1, std::min((threads + batches - 1) / batches,
                                                                           sides / kSidesPerPanel));
  // Part p's first right-hand side, a multiple of kSidesPerPanel (parts
  // hold at least that many each, so none is empty).
  auto first_of = [=](int64_t part) {
    return part == parts ? sides : sides * part / parts / kSidesPerPanel * kSidesPerPanel;
  };
  return [=](const Frame& frame) {
    const T* matrices = static_cast<const T*>(frame.At(in[0]));
    const T* rhs = static_cast<const T*>(frame.At(in[1]));
    T* result = static_cast<T*>(frame.At(out));
    frame.parallel->For(batches * parts, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t item = lo; item < hi; ++item) {
        const int64_t batch = item / parts, part = item % parts;
        SolveReal(options, m, rows, cols, matrices + batch * m * m, rhs + batch * rows * cols,
                  result + batch * rows * cols, first_of(part), first_of(part + 1));
      }
    });
  };
}

}  // namespace

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
  if (t == hlo::ElementType::kF32) return RealTriangularSolve<float>(*options, batches, m, rows, cols, in, out);
  if (t == hlo::ElementType::kF64) return RealTriangularSolve<double>(*options, batches, m, rows, cols, in, out);
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
