#include "hlo/triangular_solve.h"

#include <vector>

#include "hlo/attributes.h"

namespace anvil::hlo {

using C = std::complex<double>;

StatusOr<TriangularSolveOptions> TriangularSolveOptionsOf(const Instruction& i) {
  TriangularSolveOptions o;
  o.left_side = BoolAttribute(i, "left_side");
  o.lower = BoolAttribute(i, "lower");
  o.unit_diagonal = BoolAttribute(i, "unit_diagonal");
  const std::string transpose = StringAttribute(i, "transpose_a");
  if (transpose == "NO_TRANSPOSE" || transpose.empty()) {
    o.transpose = TriangularSolveOptions::Transpose::kNone;
  } else if (transpose == "TRANSPOSE") {
    o.transpose = TriangularSolveOptions::Transpose::kTranspose;
  } else if (transpose == "ADJOINT") {
    o.transpose = TriangularSolveOptions::Transpose::kAdjoint;
  } else {
    return InvalidArgument("triangular-solve %" + i.name + ": unknown transpose_a '" + transpose + "'");
  }
  return o;
}

void SolveTriangular(const TriangularSolveOptions& o, int64_t m, int64_t rows, int64_t cols, const C* a, const C* b,
                     C* x_out) {
  using Transpose = TriangularSolveOptions::Transpose;
  // op(A), from the triangle `lower` names only.
  std::vector<C> t(static_cast<size_t>(m * m));
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < m; ++c) {
      const bool in_triangle = o.lower ? c <= r : c >= r;
      C v = in_triangle ? a[r * m + c] : C(0);
      if (r == c && o.unit_diagonal) v = 1;
      if (o.transpose == Transpose::kNone) {
        t[static_cast<size_t>(r * m + c)] = v;
      } else {
        t[static_cast<size_t>(c * m + r)] = o.transpose == Transpose::kAdjoint ? std::conj(v) : v;
      }
    }
  }
  const bool t_lower = o.transpose == Transpose::kNone ? o.lower : !o.lower;
  // T x = y for each column (left side), or x T = y for each row (right
  // side, as T^T x^T = y^T).
  const int64_t systems = o.left_side ? cols : rows;
  const bool forward = o.left_side ? t_lower : !t_lower;
  std::vector<C> x(static_cast<size_t>(m));
  for (int64_t s = 0; s < systems; ++s) {
    auto at = [&](int64_t e) { return o.left_side ? e * cols + s : s * cols + e; };
    auto coeff = [&](int64_t r, int64_t c) { return o.left_side ? t[static_cast<size_t>(r * m + c)] : t[static_cast<size_t>(c * m + r)]; };
    for (int64_t step = 0; step < m; ++step) {
      const int64_t e = forward ? step : m - 1 - step;
      C acc = b[at(e)];
      for (int64_t k = 0; k < m; ++k) {
        if (k != e && (forward ? k < e : k > e)) acc -= coeff(e, k) * x[static_cast<size_t>(k)];
      }
      x[static_cast<size_t>(e)] = acc / coeff(e, e);
    }
    for (int64_t e = 0; e < m; ++e) x_out[at(e)] = x[static_cast<size_t>(e)];
  }
}

}  // namespace anvil::hlo
