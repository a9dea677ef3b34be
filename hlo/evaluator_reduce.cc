// Ops of the reference evaluator that combine elements through a called
// computation or a contraction: reduce, reduce-window, dot, sort, map.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "hlo/attributes.h"
#include "hlo/evaluator_internal.h"
#include "hlo/merge_sort.h"
#include "hlo/patterns.h"

namespace anvil::hlo::eval {
namespace {

// A scalar literal holding element `k` of `l`.
Literal ScalarOf(const Literal& l, int64_t k) {
  Literal s(Shape(l.shape().element_type(), {}));
  CopyElement(l, k, s, 0);
  return s;
}

// The i-th value of a result that is one array or a tuple of them.
const Literal& Part(const Literal& l, size_t i) { return l.shape().IsTuple() ? l.tuple_elements()[i] : l; }

Literal Pack(std::vector<Literal> parts) {
  if (parts.size() == 1) return std::move(parts[0]);
  std::vector<Shape> shapes;
  for (const Literal& p : parts) shapes.push_back(p.shape());
  Literal t(Shape::Tuple(shapes));
  t.mutable_tuple_elements() = std::move(parts);
  return t;
}

}  // namespace

// The 8-bit (and narrower) float types: every float but f64, f32, bf16 and f16.
static bool IsF8(ElementType t) {
  return IsFloat(t) && t != ElementType::kF64 && t != ElementType::kF32 && t != ElementType::kBF16 &&
         t != ElementType::kF16;
}

// Rounds a double to the values `t` holds (the step a reducer's result
// takes when stored back into a scalar of type t).
double RoundTo(ElementType t, double v) {
  if (t == ElementType::kF64) return v;
  if (t == ElementType::kF32) return static_cast<float>(v);
  const FloatFormat* f = Info(t).float_format;
  return f ? DecodeFloat(*f, EncodeFloat(*f, v)) : v;
}

// The fast path for single-input reductions by add, multiply, max or min on
// floats: no body evaluation per element, same results.
StatusOr<Literal> ReduceFloats(Opcode op, const Literal& in, const Literal& init, const std::vector<int64_t>& kept,
                               const std::vector<int64_t>& out_dims) {
  const ElementType t = in.shape().element_type();
  Literal out(Shape(t, out_dims));
  std::vector<double> acc(static_cast<size_t>(out.element_count()), init.GetDouble(0));
  const auto out_strides = Strides(out_dims);
  std::vector<int64_t> index, out_index(kept.size());
  for (int64_t k = 0, k_end = in.element_count(); k < k_end; ++k) {
    Unflatten(k, in.shape().dims(), index);
    for (size_t d = 0; d < kept.size(); ++d) out_index[d] = index[kept[d]];
    double& a = acc[static_cast<size_t>(Flatten(out_index, out_strides))];
    const double x = in.GetDouble(k);
    switch (op) {
      // f32 sums are exact in double up to 2^29 terms of similar size: the
      // oracle carries them in double and rounds once, the most accurate
      // of the orders the spec allows. So are bf16 and f16 sums, as XLA's
      // CPU backend, which computes those types in f32, gives them:
      // rounded at every step, a bf16 sum stops growing once its terms fall
      // below half its last place (300 halves summed to 128, not 150). f8
      // sums round every step, as the devices' f8 kernels do.
      case Opcode::kAdd: a = IsF8(t) ? RoundTo(t, a + x) : a + x; break;
      case Opcode::kMultiply: a = RoundTo(t, a * x); break;
      case Opcode::kMaximum:
        a = std::isnan(a) || std::isnan(x) ? std::nan("") : (a == 0 && x == 0 ? (std::signbit(a) ? x : a) : std::max(a, x));
        break;
      default:
        a = std::isnan(a) || std::isnan(x) ? std::nan("") : (a == 0 && x == 0 ? (std::signbit(a) ? a : x) : std::min(a, x));
        break;
    }
  }
  for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) out.SetDouble(k, acc[static_cast<size_t>(k)]);
  return out;
}

StatusOr<Literal> EvalReduce(const Instruction& i, const std::vector<const Literal*>& operands, const CallFn& call) {
  const size_t n = operands.size() / 2;
  ANVIL_ASSIGN_OR_RETURN(auto reduced, IntListAttribute(i, "dimensions"));
  const Computation& body = *i.called_computations.at(0);
  const auto& in_dims = operands[0]->shape().dims();
  std::vector<int64_t> kept;
  for (int d = 0; d < static_cast<int>(in_dims.size()); ++d) {
    if (!std::count(reduced.begin(), reduced.end(), d)) kept.push_back(d);
  }
  std::vector<int64_t> out_dims;
  for (int64_t d : kept) out_dims.push_back(in_dims[d]);
  if (n == 1 && IsFloat(operands[0]->shape().element_type()) &&
      operands[0]->shape().element_type() == operands[1]->shape().element_type()) {
    auto op = SingleOpReducer(body);
    if (op && *op != Opcode::kAnd && *op != Opcode::kOr) {
      return ReduceFloats(*op, *operands[0], *operands[1], kept, out_dims);
    }
  }
  const auto out_strides = Strides(out_dims);
  const int64_t out_count = std::accumulate(out_dims.begin(), out_dims.end(), int64_t{1}, std::multiplies<>());
  // Accumulators start at the init values.
  std::vector<std::vector<Literal>> acc(static_cast<size_t>(out_count));
  for (auto& a : acc) {
    for (size_t v = 0; v < n; ++v) a.push_back(ScalarOf(*operands[n + v], 0));
  }
  std::vector<int64_t> index, out_index(kept.size());
  for (int64_t k = 0; k < operands[0]->element_count(); ++k) {
    Unflatten(k, in_dims, index);
    for (size_t d = 0; d < kept.size(); ++d) out_index[d] = index[kept[d]];
    auto& a = acc[static_cast<size_t>(Flatten(out_index, out_strides))];
    std::vector<Literal> xs;
    std::vector<const Literal*> args;
    for (size_t v = 0; v < n; ++v) args.push_back(&a[v]);
    for (size_t v = 0; v < n; ++v) xs.push_back(ScalarOf(*operands[v], k));
    for (size_t v = 0; v < n; ++v) args.push_back(&xs[v]);
    ANVIL_ASSIGN_OR_RETURN(Literal r, call(body, args));
    for (size_t v = 0; v < n; ++v) a[v] = Part(r, v);
  }
  std::vector<Literal> results;
  for (size_t v = 0; v < n; ++v) {
    Literal out(Shape(operands[n + v]->shape().element_type(), out_dims));
    for (int64_t k = 0; k < out_count; ++k) CopyElement(acc[static_cast<size_t>(k)][v], 0, out, k);
    results.push_back(std::move(out));
  }
  return Pack(std::move(results));
}

StatusOr<Literal> EvalReduceWindow(const Instruction& i, const std::vector<const Literal*>& operands,
                                   const CallFn& call) {
  const size_t n = operands.size() / 2;
  const Attribute* w = i.FindAttribute("window");
  ANVIL_ASSIGN_OR_RETURN(auto window, ParseWindow(w ? w->value : ""));
  const Computation& body = *i.called_computations.at(0);
  const auto& in_dims = operands[0]->shape().dims();
  const auto in_strides = Strides(in_dims);
  const Shape& first = i.shape.IsTuple() ? i.shape.tuple_elements()[0] : i.shape;
  const auto& out_dims = first.dims();
  std::vector<Literal> results;
  for (size_t v = 0; v < n; ++v) results.emplace_back(Shape(operands[n + v]->shape().element_type(), out_dims));
  std::vector<int64_t> out_index, window_index, window_dims;
  for (const WindowDim& d : window) window_dims.push_back(d.size);
  int64_t window_count = std::accumulate(window_dims.begin(), window_dims.end(), int64_t{1}, std::multiplies<>());
  std::vector<int64_t> in_index(in_dims.size());
  // Sums of one bf16 or f16 operand carry a double and round once, as
  // reduce's do (ReduceFloats) and as XLA's CPU backend, computing these
  // types in f32, gives them: a bf16 cumsum (JAX lowers it to a
  // reduce-window) rounded at every step stopped growing at 128 in a sum of
  // 300 halves. Other windows round every step, as devices sum them.
  const ElementType t = operands[0]->shape().element_type();
  const std::optional<Opcode> op = n == 1 ? SingleOpReducer(body) : std::nullopt;
  const bool wide_sum = op == Opcode::kAdd && (t == ElementType::kBF16 || t == ElementType::kF16) &&
                        operands[1]->shape().element_type() == t;
  // The input element tap `wk` of output out_index reads, or -1 where the
  // tap falls in the padding or between base-dilated elements.
  auto tap_input = [&](int64_t wk) -> int64_t {
    Unflatten(wk, window_dims, window_index);
    for (size_t d = 0; d < in_dims.size(); ++d) {
      const WindowDim& wd = window[d];
      // Position in the padded, base-dilated input.
      const int64_t p = out_index[d] * wd.stride + window_index[d] * wd.window_dilation - wd.pad_low;
      if (p < 0 || p % wd.base_dilation != 0 || p / wd.base_dilation >= in_dims[d]) return -1;
      in_index[d] = p / wd.base_dilation;
    }
    return Flatten(in_index, in_strides);
  };
  for (int64_t k = 0; k < results[0].element_count(); ++k) {
    Unflatten(k, out_dims, out_index);
    if (wide_sum) {
      double sum = operands[1]->GetDouble(0);
      for (int64_t wk = 0; wk < window_count; ++wk) {
        if (const int64_t from = tap_input(wk); from >= 0) sum += operands[0]->GetDouble(from);
      }
      results[0].SetDouble(k, sum);
      continue;
    }
    std::vector<Literal> acc;
    for (size_t v = 0; v < n; ++v) acc.push_back(ScalarOf(*operands[n + v], 0));
    for (int64_t wk = 0; wk < window_count; ++wk) {
      const int64_t from = tap_input(wk);
      if (from < 0) continue;
      std::vector<Literal> xs;
      std::vector<const Literal*> args;
      for (size_t v = 0; v < n; ++v) args.push_back(&acc[v]);
      for (size_t v = 0; v < n; ++v) xs.push_back(ScalarOf(*operands[v], from));
      for (size_t v = 0; v < n; ++v) args.push_back(&xs[v]);
      ANVIL_ASSIGN_OR_RETURN(Literal r, call(body, args));
      for (size_t v = 0; v < n; ++v) acc[v] = Part(r, v);
    }
    for (size_t v = 0; v < n; ++v) CopyElement(acc[v], 0, results[v], k);
  }
  return Pack(std::move(results));
}

namespace {

// A dot over real or integer elements as B independent [M, K] x [K, N]
// products. Operands are gathered once into dense arrays of T (float for
// single-precision results, double for f64, wrapping uint64 for integers),
// and each result accumulates over k in order, rounding every step in T as
// the general loop does, so the two paths agree bit for bit.
struct DotLayout {
  // Per operand dimension: which of (b, m or n, k) it indexes and its weight there.
  struct Role {
    int part;  // 0: batch, 1: free, 2: contracting
    int64_t weight;
  };
  std::vector<Role> lhs, rhs;
  int64_t batch = 1, rows = 1, cols = 1, depth = 1;
};

DotLayout MakeDotLayout(const std::vector<int64_t>& ld, const std::vector<int64_t>& rd, const std::vector<int64_t>& lb,
                        const std::vector<int64_t>& rb, const std::vector<int64_t>& lc,
                        const std::vector<int64_t>& rc) {
  DotLayout layout;
  layout.lhs.assign(ld.size(), {1, 0});
  layout.rhs.assign(rd.size(), {1, 0});
  // Row-major weights within each part, in the order the result (batch,
  // free) or the accumulation (contracting, in lc order) walks them.
  for (size_t j = lb.size(); j-- > 0;) {
    layout.lhs[lb[j]] = {0, layout.batch};
    layout.rhs[rb[j]] = {0, layout.batch};
    layout.batch *= ld[lb[j]];
  }
  for (size_t j = lc.size(); j-- > 0;) {
    layout.lhs[lc[j]] = {2, layout.depth};
    layout.rhs[rc[j]] = {2, layout.depth};
    layout.depth *= ld[lc[j]];
  }
  for (size_t d = ld.size(); d-- > 0;) {
    if (layout.lhs[d].part != 1) continue;
    layout.lhs[d].weight = layout.rows;
    layout.rows *= ld[d];
  }
  for (size_t d = rd.size(); d-- > 0;) {
    if (layout.rhs[d].part != 1) continue;
    layout.rhs[d].weight = layout.cols;
    layout.cols *= rd[d];
  }
  return layout;
}

// Gathers `operand` into [batch][outer][depth] (lhs: outer = rows) or
// [batch][depth][outer] (rhs: outer = cols) order.
template <typename T, typename Read>
std::vector<T> Gather(const Literal& operand, const std::vector<DotLayout::Role>& roles, const DotLayout& layout,
                      bool is_lhs, Read read) {
  const int64_t outer = is_lhs ? layout.rows : layout.cols;
  std::vector<T> out(static_cast<size_t>(layout.batch * outer * layout.depth));
  const auto& dims = operand.shape().dims();
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t e = 0; e < operand.element_count(); ++e) {
    int64_t part[3] = {0, 0, 0};
    for (size_t d = 0; d < dims.size(); ++d) part[roles[d].part] += index[d] * roles[d].weight;
    const int64_t at = is_lhs ? (part[0] * outer + part[1]) * layout.depth + part[2]
                              : (part[0] * layout.depth + part[2]) * outer + part[1];
    out[static_cast<size_t>(at)] = read(e);
    for (size_t d = dims.size(); d-- > 0;) {  // next row-major index
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

template <typename T, typename Read, typename Write>
void DenseDot(const Literal& lhs, const Literal& rhs, const DotLayout& layout, Read read_lhs, Read read_rhs,
              Write write) {
  const std::vector<T> a = Gather<T>(lhs, layout.lhs, layout, true, read_lhs);
  const std::vector<T> b = Gather<T>(rhs, layout.rhs, layout, false, read_rhs);
  const int64_t m_count = layout.rows, n_count = layout.cols, k_count = layout.depth;
  // Blocks of rows and columns whose sums stay in cache while the k loop
  // streams one row of b past all of them; each sum still adds its terms in
  // k order, so blocking changes no rounding.
  constexpr int64_t kRows = 64, kCols = 256;
  std::vector<T> acc(static_cast<size_t>(kRows * kCols));
  for (int64_t batch = 0; batch < layout.batch; ++batch) {
    for (int64_t m0 = 0; m0 < m_count; m0 += kRows) {
      const int64_t rows = std::min(kRows, m_count - m0);
      for (int64_t n0 = 0; n0 < n_count; n0 += kCols) {
        const int64_t cols = std::min(kCols, n_count - n0);
        std::fill(acc.begin(), acc.end(), T{0});
        for (int64_t k = 0; k < k_count; ++k) {
          const T* b_row = b.data() + (batch * k_count + k) * n_count + n0;
          for (int64_t r = 0; r < rows; ++r) {
            const T scale = a[static_cast<size_t>((batch * m_count + m0 + r) * k_count + k)];
            T* sums = acc.data() + r * kCols;
            for (int64_t n = 0; n < cols; ++n) sums[n] += scale * b_row[n];
          }
        }
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t n = 0; n < cols; ++n) write((batch * m_count + m0 + r) * n_count + n0 + n, acc[r * kCols + n]);
        }
      }
    }
  }
}

}  // namespace

StatusOr<Literal> EvalDot(const Instruction& i, const Literal& lhs, const Literal& rhs) {
  ANVIL_ASSIGN_OR_RETURN(auto lb, IntListAttribute(i, "lhs_batch_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto rb, IntListAttribute(i, "rhs_batch_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto lc, IntListAttribute(i, "lhs_contracting_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto rc, IntListAttribute(i, "rhs_contracting_dims"));
  const auto& ld = lhs.shape().dims();
  const auto& rd = rhs.shape().dims();
  const auto lf = FreeDims(lhs.shape().rank(), lb, lc);
  const auto rf = FreeDims(rhs.shape().rank(), rb, rc);
  std::vector<int64_t> contract_dims;
  for (int64_t d : lc) contract_dims.push_back(ld[d]);
  const int64_t contract_count =
      std::accumulate(contract_dims.begin(), contract_dims.end(), int64_t{1}, std::multiplies<>());
  const ElementType t = i.shape.element_type();
  const bool single = IsFloat(t) && t != ElementType::kF64;
  Literal out(Shape(t, i.shape.dims()));
  if (!IsComplex(t) && !IsPred(t) && !IsComplex(lhs.shape().element_type()) &&
      !IsComplex(rhs.shape().element_type())) {
    const DotLayout layout = MakeDotLayout(ld, rd, lb, rb, lc, rc);
    if (layout.batch * layout.rows * layout.cols != out.element_count()) {
      return InvalidArgument("dot of " + lhs.shape().ToString() + " and " + rhs.shape().ToString() +
                             " cannot produce " + i.shape.ToString());
    }
    if (single) {
      auto read = [](const Literal& l) { return [&l](int64_t e) { return static_cast<float>(l.GetDouble(e)); }; };
      DenseDot<float>(lhs, rhs, layout, read(lhs), read(rhs), [&](int64_t k, float v) { out.SetDouble(k, v); });
    } else if (IsFloat(t)) {
      auto read = [](const Literal& l) { return [&l](int64_t e) { return l.GetDouble(e); }; };
      DenseDot<double>(lhs, rhs, layout, read(lhs), read(rhs), [&](int64_t k, double v) { out.SetDouble(k, v); });
    } else {
      auto read = [](const Literal& l) { return [&l](int64_t e) { return BitsAt(l, e); }; };
      DenseDot<uint64_t>(lhs, rhs, layout, read(lhs), read(rhs), [&](int64_t k, uint64_t v) { SetBits(out, k, v); });
    }
    return out;
  }
  const auto ls = Strides(ld), rs = Strides(rd);
  std::vector<int64_t> out_index, c_index, l_index(ld.size()), r_index(rd.size());
  for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
    Unflatten(k, out.shape().dims(), out_index);
    size_t pos = 0;
    for (size_t b = 0; b < lb.size(); ++b, ++pos) {
      l_index[lb[b]] = out_index[pos];
      r_index[rb[b]] = out_index[pos];
    }
    for (int64_t d : lf) l_index[d] = out_index[pos++];
    for (int64_t d : rf) r_index[d] = out_index[pos++];
    std::complex<double> sum_c = 0;
    double sum = 0;
    uint64_t sum_i = 0;
    // Single-precision results accumulate in single precision, rounding
    // after every step as a device would; the corpus's expected values are
    // computed that way, and differ from a double sum where terms cancel.
    std::complex<float> sum_cf = 0;
    float sum_f = 0;
    for (int64_t c = 0; c < contract_count; ++c) {
      Unflatten(c, contract_dims, c_index);
      for (size_t j = 0; j < lc.size(); ++j) {
        l_index[lc[j]] = c_index[j];
        r_index[rc[j]] = c_index[j];
      }
      int64_t li = Flatten(l_index, ls), ri = Flatten(r_index, rs);
      if (t == ElementType::kC64) {
        std::complex<float> a(lhs.GetComplex(li)), b(rhs.GetComplex(ri));
        sum_cf += a * b;
      } else if (IsComplex(t)) {
        sum_c += lhs.GetComplex(li) * rhs.GetComplex(ri);
      } else if (single) {
        sum_f += static_cast<float>(lhs.GetDouble(li)) * static_cast<float>(rhs.GetDouble(ri));
      } else if (IsFloat(t)) {
        sum += lhs.GetDouble(li) * rhs.GetDouble(ri);
      } else if (IsPred(t)) {
        sum_i |= BitsAt(lhs, li) & BitsAt(rhs, ri);
      } else {
        sum_i += BitsAt(lhs, li) * BitsAt(rhs, ri);
      }
    }
    if (t == ElementType::kC64) {
      out.SetComplex(k, sum_cf.real(), sum_cf.imag());
    } else if (IsComplex(t)) {
      out.SetComplex(k, sum_c.real(), sum_c.imag());
    } else if (single) {
      out.SetDouble(k, sum_f);
    } else if (IsFloat(t)) {
      out.SetDouble(k, sum);
    } else {
      SetBits(out, k, sum_i);
    }
  }
  return out;
}

StatusOr<Literal> EvalSort(const Instruction& i, const std::vector<const Literal*>& operands, const CallFn& call) {
  ANVIL_ASSIGN_OR_RETURN(auto dims, IntListAttribute(i, "dimensions"));
  const int64_t dim = dims.at(0);
  const Computation& comparator = *i.called_computations.at(0);
  const auto& shape_dims = operands[0]->shape().dims();
  const auto strides = Strides(shape_dims);
  const int64_t length = shape_dims[dim];
  std::vector<Literal> results;
  for (const Literal* o : operands) results.emplace_back(*o);
  std::vector<int64_t> index;
  Status error = OkStatus();
  for (int64_t k = 0; k < operands[0]->element_count(); ++k) {
    Unflatten(k, shape_dims, index);
    if (index[dim] != 0) continue;  // one pass per row along `dim`
    std::vector<int64_t> order(static_cast<size_t>(length));
    std::iota(order.begin(), order.end(), 0);
    auto at = [&](int64_t p) { return k + p * strides[dim]; };
    // A merge sort of our own: stable, and safe with a comparator that is
    // not a strict weak order (std::stable_sort may then read out of range).
    MergeSort(order, [&](int64_t a, int64_t b) {
      if (!error.ok()) return false;
      std::vector<Literal> scalars;
      for (const Literal* o : operands) {
        scalars.push_back(ScalarOf(*o, at(a)));
        scalars.push_back(ScalarOf(*o, at(b)));
      }
      std::vector<const Literal*> args;
      for (const Literal& s : scalars) args.push_back(&s);
      auto r = call(comparator, args);
      if (!r.ok()) {
        error = r.status();
        return false;
      }
      return r->GetUint(0) != 0;
    });
    if (!error.ok()) return error;
    for (size_t v = 0; v < operands.size(); ++v) {
      for (int64_t p = 0; p < length; ++p) CopyElement(*operands[v], at(order[p]), results[v], at(p));
    }
  }
  return Pack(std::move(results));
}

StatusOr<Literal> EvalMap(const Instruction& i, const std::vector<const Literal*>& operands, const CallFn& call) {
  const Computation& body = *i.called_computations.at(0);
  Literal out(Shape(i.shape.element_type(), i.shape.dims()));
  for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
    std::vector<Literal> scalars;
    for (const Literal* o : operands) scalars.push_back(ScalarOf(*o, k));
    std::vector<const Literal*> args;
    for (const Literal& s : scalars) args.push_back(&s);
    ANVIL_ASSIGN_OR_RETURN(Literal r, call(body, args));
    CopyElement(r, 0, out, k);
  }
  return out;
}

}  // namespace anvil::hlo::eval
