// batch-norm-training, -inference and -grad for the reference evaluator, by
// the StableHLO spec; statistics over every dimension but feature_index,
// computed in double.
#include <cmath>

#include "hlo/attributes.h"
#include "hlo/evaluator_internal.h"

namespace anvil::hlo::eval {
namespace {

struct Layout {
  int64_t features = 0, inner = 1, outer = 1;  // x[outer][feature][inner]
};

Layout LayoutOf(const Shape& shape, int64_t feature_index) {
  Layout l;
  l.features = shape.dim(static_cast<int>(feature_index));
  for (int d = 0; d < shape.rank(); ++d) {
    if (d < feature_index) l.outer *= shape.dim(d);
    if (d > feature_index) l.inner *= shape.dim(d);
  }
  return l;
}

std::vector<double> ToDoubles(const Literal& l) {
  std::vector<double> v(static_cast<size_t>(l.element_count()));
  for (int64_t k = 0, k_end = l.element_count(); k < k_end; ++k) v[static_cast<size_t>(k)] = l.GetDouble(k);
  return v;
}

Literal FromDoubles(const Shape& shape, const std::vector<double>& v) {
  Literal l(Shape(shape.element_type(), shape.dims()));
  for (int64_t k = 0, k_end = l.element_count(); k < k_end; ++k) l.SetDouble(k, v[static_cast<size_t>(k)]);
  return l;
}

Literal Tuple(std::vector<Literal> parts, const Shape& shape) {
  Literal t(shape);
  t.mutable_tuple_elements() = std::move(parts);
  return t;
}

}  // namespace

StatusOr<Literal> EvalBatchNorm(const Instruction& i, const std::vector<const Literal*>& operands) {
  ANVIL_ASSIGN_OR_RETURN(int64_t feature, IntAttribute(i, "feature_index", std::nullopt));
  const double epsilon = std::strtod(StringAttribute(i, "epsilon").c_str(), nullptr);
  const Shape& xs = operands[0]->shape();
  const Layout L = LayoutOf(xs, feature);
  const double n = static_cast<double>(L.outer * L.inner);
  const std::vector<double> x = ToDoubles(*operands[0]);
  auto at = [&](int64_t o, int64_t f, int64_t k) { return static_cast<size_t>((o * L.features + f) * L.inner + k); };
  auto per_feature_mean = [&](const std::vector<double>& v) {
    std::vector<double> m(static_cast<size_t>(L.features), 0);
    for (int64_t o = 0; o < L.outer; ++o)
      for (int64_t f = 0; f < L.features; ++f)
        for (int64_t k = 0; k < L.inner; ++k) m[f] += v[at(o, f, k)];
    for (double& e : m) e /= n;
    return m;
  };
  if (i.opcode == Opcode::kBatchNormTraining || i.opcode == Opcode::kBatchNormInference) {
    const std::vector<double> scale = ToDoubles(*operands[1]), offset = ToDoubles(*operands[2]);
    std::vector<double> mean, var;
    if (i.opcode == Opcode::kBatchNormTraining) {
      mean = per_feature_mean(x);
      std::vector<double> sq(x.size());
      for (int64_t o = 0; o < L.outer; ++o)
        for (int64_t f = 0; f < L.features; ++f)
          for (int64_t k = 0; k < L.inner; ++k) {
            double d = x[at(o, f, k)] - mean[f];
            sq[at(o, f, k)] = d * d;
          }
      var = per_feature_mean(sq);
    } else {
      mean = ToDoubles(*operands[3]);
      var = ToDoubles(*operands[4]);
    }
    std::vector<double> y(x.size());
    for (int64_t o = 0; o < L.outer; ++o)
      for (int64_t f = 0; f < L.features; ++f) {
        const double inv = 1.0 / std::sqrt(var[f] + epsilon);
        for (int64_t k = 0; k < L.inner; ++k) y[at(o, f, k)] = scale[f] * (x[at(o, f, k)] - mean[f]) * inv + offset[f];
      }
    const Shape& out_shape = i.shape.IsTuple() ? i.shape.tuple_elements()[0] : i.shape;
    Literal out = FromDoubles(out_shape, y);
    if (i.opcode == Opcode::kBatchNormInference) return out;
    Shape stat(operands[1]->shape().element_type(), {L.features});
    std::vector<Literal> parts;
    parts.push_back(std::move(out));
    parts.push_back(FromDoubles(stat, mean));
    parts.push_back(FromDoubles(stat, var));
    return Tuple(std::move(parts), i.shape);
  }
  if (i.opcode == Opcode::kBatchNormGrad) {
    const std::vector<double> scale = ToDoubles(*operands[1]), mean = ToDoubles(*operands[2]),
                              var = ToDoubles(*operands[3]), dy = ToDoubles(*operands[4]);
    std::vector<double> grad_offset(static_cast<size_t>(L.features), 0), grad_scale(static_cast<size_t>(L.features), 0);
    for (int64_t o = 0; o < L.outer; ++o)
      for (int64_t f = 0; f < L.features; ++f) {
        const double inv = 1.0 / std::sqrt(var[f] + epsilon);
        for (int64_t k = 0; k < L.inner; ++k) {
          grad_offset[f] += dy[at(o, f, k)];
          grad_scale[f] += dy[at(o, f, k)] * (x[at(o, f, k)] - mean[f]) * inv;
        }
      }
    std::vector<double> dx(x.size());
    for (int64_t o = 0; o < L.outer; ++o)
      for (int64_t f = 0; f < L.features; ++f) {
        const double inv = 1.0 / std::sqrt(var[f] + epsilon);
        for (int64_t k = 0; k < L.inner; ++k) {
          const double x_hat = (x[at(o, f, k)] - mean[f]) * inv;
          dx[at(o, f, k)] = scale[f] * inv * (dy[at(o, f, k)] - grad_offset[f] / n - x_hat * grad_scale[f] / n);
        }
      }
    Shape stat(operands[1]->shape().element_type(), {L.features});
    std::vector<Literal> parts;
    parts.push_back(FromDoubles(i.shape.tuple_elements()[0], dx));
    parts.push_back(FromDoubles(stat, grad_scale));
    parts.push_back(FromDoubles(stat, grad_offset));
    return Tuple(std::move(parts), i.shape);
  }
  return Unimplemented("not a batch-norm op");
}

}  // namespace anvil::hlo::eval
