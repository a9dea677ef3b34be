// The matrix decompositions JAX emits as custom calls on platforms without
// a LAPACK of their own (as on TPU): "Qr" (LAPACK's geqrf: R above the
// diagonal, the reflectors' vectors below it, and their scalars tau),
// "ProductOfElementaryHouseholderReflectors" (LAPACK's orgqr: the first n
// columns of Q = H_0 H_1 ... H_{k-1}) and "Eigh" (a symmetric matrix's
// eigenvectors and eigenvalues by cyclic Jacobi rotations, the base case of
// JAX's QDWH eigh). Real types, computed in double and rounded once into the
// element type; batched over leading dimensions.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "hlo/evaluator_internal.h"

namespace anvil::hlo::eval {
namespace {

bool IsRealFloat(ElementType t) {
  return t == ElementType::kF32 || t == ElementType::kF64 || t == ElementType::kBF16 || t == ElementType::kF16;
}

// One column-major-free view of a batch of [m, n] row-major matrices.
struct Matrices {
  int64_t batch = 1, m = 0, n = 0;
};

StatusOr<Matrices> MatricesOf(const Shape& shape, const char* what) {
  if (!shape.IsArray() || shape.rank() < 2 || !IsRealFloat(shape.element_type())) {
    return Unimplemented(std::string(what) + " runs on real floating-point matrices [..., m, n]; this is " +
                         shape.ToString(false));
  }
  Matrices out;
  out.m = shape.dim(shape.rank() - 2);
  out.n = shape.dim(shape.rank() - 1);
  for (int d = 0; d + 2 < shape.rank(); ++d) out.batch *= shape.dim(d);
  return out;
}

}  // namespace

StatusOr<Literal> HouseholderQr(const Instruction& i, const std::vector<const Literal*>& operands) {
  if (operands.size() != 1 || !i.shape.IsTuple() || i.shape.tuple_elements().size() != 2) {
    return InvalidArgument("custom-call \"Qr\" takes a matrix and gives (factored matrix, taus)");
  }
  ANVIL_ASSIGN_OR_RETURN(Matrices g, MatricesOf(operands[0]->shape(), "Qr"));
  const int64_t k = std::min(g.m, g.n);
  const Shape& taus_shape = i.shape.tuple_elements()[1];
  if (!i.shape.tuple_elements()[0].Compatible(operands[0]->shape()) || taus_shape.ElementCount() != g.batch * k) {
    return InvalidArgument("custom-call \"Qr\" declares " + i.shape.ToString(false) + " for an operand " +
                           operands[0]->shape().ToString(false));
  }
  Literal out(i.shape);
  Literal& factored = out.mutable_tuple_elements()[0];
  Literal& taus = out.mutable_tuple_elements()[1];
  std::vector<double> a(static_cast<size_t>(g.m * g.n));
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t base = b * g.m * g.n;
    for (int64_t e = 0; e < g.m * g.n; ++e) a[e] = operands[0]->GetDouble(base + e);
    auto at = [&](int64_t r, int64_t c) -> double& { return a[static_cast<size_t>(r * g.n + c)]; };
    for (int64_t j = 0; j < k; ++j) {
      // The reflector that zeroes column j below the diagonal.
      const double alpha = at(j, j);
      double tail = 0;
      for (int64_t r = j + 1; r < g.m; ++r) tail = std::hypot(tail, at(r, j));
      double tau = 0;
      if (tail != 0) {
        const double beta = -std::copysign(std::hypot(alpha, tail), alpha);
        tau = (beta - alpha) / beta;
        const double scale = 1.0 / (alpha - beta);
        for (int64_t r = j + 1; r < g.m; ++r) at(r, j) *= scale;
        at(j, j) = beta;
        // Apply H = I - tau v v^T (v = [1, a[j+1:, j]]) to the columns right of j.
        for (int64_t c = j + 1; c < g.n; ++c) {
          double dot = at(j, c);
          for (int64_t r = j + 1; r < g.m; ++r) dot += at(r, j) * at(r, c);
          dot *= tau;
          at(j, c) -= dot;
          for (int64_t r = j + 1; r < g.m; ++r) at(r, c) -= dot * at(r, j);
        }
      }
      SetReal(taus, b * k + j, tau);
    }
    for (int64_t e = 0; e < g.m * g.n; ++e) SetReal(factored, base + e, a[e]);
  }
  return out;
}

StatusOr<Literal> HouseholderProduct(const Instruction& i, const std::vector<const Literal*>& operands) {
  if (operands.size() != 2 || !i.shape.IsArray()) {
    return InvalidArgument("custom-call \"ProductOfElementaryHouseholderReflectors\" takes (vectors, taus)");
  }
  ANVIL_ASSIGN_OR_RETURN(Matrices g, MatricesOf(operands[0]->shape(), "ProductOfElementaryHouseholderReflectors"));
  const Literal& taus = *operands[1];
  const int64_t k = g.batch > 0 ? taus.element_count() / g.batch : 0;
  if (!i.shape.Compatible(operands[0]->shape()) || k > std::min(g.m, g.n) || k * g.batch != taus.element_count()) {
    return InvalidArgument("custom-call \"ProductOfElementaryHouseholderReflectors\": vectors " +
                           operands[0]->shape().ToString(false) + " and taus " + taus.shape().ToString(false) +
                           " do not fit, or the result is not " + operands[0]->shape().ToString(false));
  }
  Literal out(i.shape);
  std::vector<double> q(static_cast<size_t>(g.m * g.n));
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t base = b * g.m * g.n;
    auto v = [&](int64_t r, int64_t c) { return operands[0]->GetDouble(base + r * g.n + c); };
    auto at = [&](int64_t r, int64_t c) -> double& { return q[static_cast<size_t>(r * g.n + c)]; };
    std::fill(q.begin(), q.end(), 0.0);
    for (int64_t d = 0; d < std::min(g.m, g.n); ++d) at(d, d) = 1.0;
    // Q = H_0 ... H_{k-1} I: apply the last reflector first.
    for (int64_t j = k; j-- > 0;) {
      const double tau = taus.GetDouble(b * k + j);
      if (tau == 0) continue;
      for (int64_t c = j; c < g.n; ++c) {
        double dot = at(j, c);
        for (int64_t r = j + 1; r < g.m; ++r) dot += v(r, j) * at(r, c);
        dot *= tau;
        at(j, c) -= dot;
        for (int64_t r = j + 1; r < g.m; ++r) at(r, c) -= dot * v(r, j);
      }
    }
    for (int64_t e = 0; e < g.m * g.n; ++e) SetReal(out, base + e, q[e]);
  }
  return out;
}

StatusOr<Literal> JacobiEigh(const Instruction& i, const std::vector<const Literal*>& operands) {
  if (operands.size() != 1 || !i.shape.IsTuple() || i.shape.tuple_elements().size() != 2) {
    return InvalidArgument("custom-call \"Eigh\" takes a matrix and gives (eigenvectors, eigenvalues)");
  }
  ANVIL_ASSIGN_OR_RETURN(Matrices g, MatricesOf(operands[0]->shape(), "Eigh"));
  const int64_t n = g.n;
  if (g.m != n || !i.shape.tuple_elements()[0].Compatible(operands[0]->shape()) ||
      i.shape.tuple_elements()[1].ElementCount() != g.batch * n) {
    return InvalidArgument("custom-call \"Eigh\" needs square matrices and declares " + i.shape.ToString(false) +
                           " for " + operands[0]->shape().ToString(false));
  }
  // backend_config "lower,sort,max_sweeps,tolerance", as JAX writes it.
  bool lower = true, sort = true;
  int64_t max_sweeps = 100;
  double tolerance = 1e-6;
  {
    std::string config = StringAttribute(i, "backend_config");
    std::vector<std::string> fields(1);
    for (char ch : config) {
      if (ch == ',') fields.emplace_back(); else if (ch != '"') fields.back() += ch;
    }
    if (fields.size() >= 1 && !fields[0].empty()) lower = fields[0] != "0";
    if (fields.size() >= 2 && !fields[1].empty()) sort = fields[1] != "0";
    if (fields.size() >= 3 && !fields[2].empty()) max_sweeps = std::max<int64_t>(1, std::atoll(fields[2].c_str()));
    if (fields.size() >= 4 && !fields[3].empty()) tolerance = std::atof(fields[3].c_str());
  }
  Literal out(i.shape);
  Literal& vectors = out.mutable_tuple_elements()[0];
  Literal& values = out.mutable_tuple_elements()[1];
  std::vector<double> a(static_cast<size_t>(n * n)), v(static_cast<size_t>(n * n));
  auto at = [&](int64_t r, int64_t c) -> double& { return a[static_cast<size_t>(r * n + c)]; };
  auto vt = [&](int64_t r, int64_t c) -> double& { return v[static_cast<size_t>(r * n + c)]; };
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t base = b * n * n;
    // The symmetric matrix the named triangle describes.
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        const bool from_lower = r >= c;
        const int64_t rr = (from_lower == lower) ? r : c, cc = (from_lower == lower) ? c : r;
        at(r, c) = operands[0]->GetDouble(base + rr * n + cc);
      }
    }
    std::fill(v.begin(), v.end(), 0.0);
    for (int64_t d = 0; d < n; ++d) vt(d, d) = 1.0;
    double norm = 0;
    for (double x : a) norm += x * x;
    norm = std::sqrt(norm);
    for (int64_t sweep = 0; sweep < max_sweeps; ++sweep) {
      double off = 0;
      for (int64_t p = 0; p < n; ++p) {
        for (int64_t q = p + 1; q < n; ++q) off += 2 * at(p, q) * at(p, q);
      }
      if (std::sqrt(off) <= tolerance * norm * 1e-3 || off == 0) break;
      for (int64_t p = 0; p < n; ++p) {
        for (int64_t q = p + 1; q < n; ++q) {
          const double apq = at(p, q);
          if (apq == 0) continue;
          // The rotation that zeroes a[p][q] (the smaller of the two angles).
          const double theta = (at(q, q) - at(p, p)) / (2 * apq);
          const double t = std::copysign(1.0, theta) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
          const double c = 1 / std::sqrt(t * t + 1), s = t * c;
          for (int64_t k = 0; k < n; ++k) {  // columns p and q
            const double kp = at(k, p), kq = at(k, q);
            at(k, p) = c * kp - s * kq;
            at(k, q) = s * kp + c * kq;
          }
          for (int64_t k = 0; k < n; ++k) {  // rows p and q
            const double pk = at(p, k), qk = at(q, k);
            at(p, k) = c * pk - s * qk;
            at(q, k) = s * pk + c * qk;
          }
          for (int64_t k = 0; k < n; ++k) {
            const double kp = vt(k, p), kq = vt(k, q);
            vt(k, p) = c * kp - s * kq;
            vt(k, q) = s * kp + c * kq;
          }
        }
      }
    }
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    if (sort) std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return at(x, x) < at(y, y); });
    for (int64_t k = 0; k < n; ++k) {
      SetReal(values, b * n + k, at(order[k], order[k]));
      for (int64_t r = 0; r < n; ++r) SetReal(vectors, base + r * n + k, vt(r, order[k]));
    }
  }
  return out;
}

}  // namespace anvil::hlo::eval
