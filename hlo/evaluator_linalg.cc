// Convolution, triangular solve, FFT and top-k for the reference evaluator.
// Accumulation is in double (or complex<double>, or 64-bit integers) and
// rounded once into the result type.
#include <algorithm>
#include <cmath>
#include <limits>
#include <complex>
#include <numeric>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/evaluator_internal.h"
#include "hlo/triangular_solve.h"

namespace anvil::hlo::eval {
namespace {

using C = std::complex<double>;

void Store(Literal& out, int64_t k, C value, uint64_t integer) {
  ElementType t = out.shape().element_type();
  if (IsComplex(t)) {
    out.SetComplex(k, value.real(), value.imag());
  } else if (IsFloat(t)) {
    out.SetDouble(k, value.real());
  } else {
    SetBits(out, k, integer);
  }
}

// e^(-+2 pi i m / n), exact at quarter turns so that, as in an exact DFT,
// what cancels comes out as zero rather than as rounding residue.
C Twiddle(int64_t m, int64_t n, bool inverse) {
  if ((4 * m) % n == 0) {
    static const C kQuarter[] = {C(1, 0), C(0, -1), C(-1, 0), C(0, 1)};
    C q = kQuarter[(4 * m / n) % 4];
    return inverse ? std::conj(q) : q;
  }
  double angle = (inverse ? 2.0 : -2.0) * M_PI * static_cast<double>(m) / static_cast<double>(n);
  return C(std::cos(angle), std::sin(angle));
}

}  // namespace

StatusOr<Literal> EvalConvolution(const Instruction& i, const Literal& lhs, const Literal& rhs) {
  const Attribute* labels = i.FindAttribute("dim_labels");
  if (!labels) return InvalidArgument("convolution needs dim_labels");
  ANVIL_ASSIGN_OR_RETURN(ConvDimensionNumbers dn, ParseDimLabels(labels->value));
  const size_t spatial = dn.input_spatial.size();
  std::vector<WindowDim> window(spatial);
  if (const Attribute* w = i.FindAttribute("window")) {
    ANVIL_ASSIGN_OR_RETURN(window, ParseWindow(w->value));
  }
  ANVIL_ASSIGN_OR_RETURN(int64_t feature_groups, IntAttribute(i, "feature_group_count", 1));
  ANVIL_ASSIGN_OR_RETURN(int64_t batch_groups, IntAttribute(i, "batch_group_count", 1));
  const auto& ld = lhs.shape().dims();
  const auto& rd = rhs.shape().dims();
  const auto ls = Strides(ld), rs = Strides(rd);
  Literal out(Shape(i.shape.element_type(), i.shape.dims()));
  const int64_t out_features = out.shape().dim(static_cast<int>(dn.output_feature));
  const int64_t in_batch = ld[dn.input_batch];
  const int64_t kernel_in = rd[dn.kernel_input_feature];
  const int64_t out_batch = in_batch / batch_groups;
  std::vector<int64_t> kernel_spatial_dims;
  for (int64_t d : dn.kernel_spatial) kernel_spatial_dims.push_back(rd[d]);
  const int64_t window_count =
      std::accumulate(kernel_spatial_dims.begin(), kernel_spatial_dims.end(), int64_t{1}, std::multiplies<>());
  if (IsFloat(lhs.shape().element_type()) && IsFloat(rhs.shape().element_type())) {
    return EvalRealConvolution(i, lhs, rhs, dn, window, feature_groups, batch_groups);
  }
  // Complex and integer convolutions, one output element at a time.
  const bool complex = IsComplex(lhs.shape().element_type());
  std::vector<int64_t> out_index, window_index, l_index(ld.size()), r_index(rd.size());
  for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
    Unflatten(k, out.shape().dims(), out_index);
    const int64_t b = out_index[dn.output_batch];
    const int64_t f = out_index[dn.output_feature];
    const int64_t feature_group = f / (out_features / feature_groups);
    const int64_t batch_group = f / (out_features / batch_groups);
    C sum = 0;
    uint64_t sum_i = 0;
    for (int64_t wk = 0; wk < window_count; ++wk) {
      Unflatten(wk, kernel_spatial_dims, window_index);
      bool inside = true;
      for (size_t s = 0; s < spatial && inside; ++s) {
        const WindowDim& w = window[s];
        int64_t p = out_index[dn.output_spatial[s]] * w.stride + window_index[s] * w.window_dilation - w.pad_low;
        if (p < 0 || p % w.base_dilation != 0) {
          inside = false;
          break;
        }
        p /= w.base_dilation;
        inside = p < ld[dn.input_spatial[s]];
        l_index[dn.input_spatial[s]] = p;
        r_index[dn.kernel_spatial[s]] = w.reversal ? kernel_spatial_dims[s] - 1 - window_index[s] : window_index[s];
      }
      if (!inside) continue;
      l_index[dn.input_batch] = batch_group * out_batch + b;
      r_index[dn.kernel_output_feature] = f;
      l_index[dn.input_feature] = feature_group * kernel_in;
      r_index[dn.kernel_input_feature] = 0;
      const int64_t l0 = Flatten(l_index, ls), r0 = Flatten(r_index, rs);
      for (int64_t c = 0; c < kernel_in; ++c) {
        const int64_t li = l0 + c * ls[dn.input_feature], ri = r0 + c * rs[dn.kernel_input_feature];
        if (complex) {
          sum += lhs.GetComplex(li) * rhs.GetComplex(ri);
        } else {
          sum_i += BitsAt(lhs, li) * BitsAt(rhs, ri);
        }
      }
    }
    Store(out, k, sum, sum_i);
  }
  return out;
}

StatusOr<Literal> EvalTriangularSolve(const Instruction& i, const Literal& a, const Literal& b) {
  ANVIL_ASSIGN_OR_RETURN(const TriangularSolveOptions options, TriangularSolveOptionsOf(i));
  const int rank = a.shape().rank();
  const int64_t m = a.shape().dim(rank - 1);
  const int64_t rows = b.shape().dim(rank - 2), cols = b.shape().dim(rank - 1);
  const int64_t batches = a.element_count() / std::max<int64_t>(1, m * m);
  Literal out(Shape(i.shape.element_type(), i.shape.dims()));
  std::vector<C> matrix(static_cast<size_t>(m * m)), rhs(static_cast<size_t>(rows * cols)), x(rhs.size());
  for (int64_t batch = 0; batch < batches; ++batch) {
    for (int64_t k = 0; k < m * m; ++k) matrix[static_cast<size_t>(k)] = a.GetComplex(batch * m * m + k);
    for (int64_t k = 0; k < rows * cols; ++k) rhs[static_cast<size_t>(k)] = b.GetComplex(batch * rows * cols + k);
    SolveTriangular(options, m, rows, cols, matrix.data(), rhs.data(), x.data());
    for (int64_t k = 0; k < rows * cols; ++k) Store(out, batch * rows * cols + k, x[static_cast<size_t>(k)], 0);
  }
  return out;
}

StatusOr<Literal> EvalCholesky(const Instruction& i, const Literal& a) {
  const bool lower = BoolAttribute(i, "lower");
  const int rank = a.shape().rank();
  if (rank < 2) return InvalidArgument("cholesky needs a matrix");
  const int64_t n = a.shape().dim(rank - 1);
  const int64_t batches = n == 0 ? 0 : a.element_count() / (n * n);
  Literal out(Shape(i.shape.element_type(), i.shape.dims()));
  for (int64_t b = 0; b < batches; ++b) {
    // L with A = L L^H, read from the triangle `lower` names.
    auto at = [&](int64_t r, int64_t c) {
      C v = lower ? a.GetComplex(b * n * n + r * n + c) : std::conj(a.GetComplex(b * n * n + c * n + r));
      return v;
    };
    std::vector<C> l(static_cast<size_t>(n * n), C(0));
    // A pivot that is not positive (or NaN) means A is not positive
    // definite: the whole matrix is NaN, as LAPACK's potrf reports it
    // (info > 0) and JAX's CPU cholesky returns it.
    bool positive_definite = true;
    for (int64_t j = 0; j < n && positive_definite; ++j) {
      C d = at(j, j);
      for (int64_t k = 0; k < j; ++k) d -= l[j * n + k] * std::conj(l[j * n + k]);
      positive_definite = d.real() > 0;
      const double diag = std::sqrt(d.real());
      l[j * n + j] = diag;
      for (int64_t r = j + 1; r < n; ++r) {
        C v = at(r, j);
        for (int64_t k = 0; k < j; ++k) v -= l[r * n + k] * std::conj(l[j * n + k]);
        l[r * n + j] = v / diag;
      }
    }
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        C v = !positive_definite ? C(nan, nan) : lower ? l[r * n + c] : std::conj(l[c * n + r]);  // upper: U = L^H
        const int64_t k = b * n * n + r * n + c;
        if (IsComplex(out.shape().element_type())) {
          out.SetComplex(k, v.real(), v.imag());
        } else {
          out.SetDouble(k, v.real());
        }
      }
    }
  }
  return out;
}

StatusOr<Literal> EvalFft(const Instruction& i, const Literal& in) {
  const std::string type = StringAttribute(i, "fft_type");
  ANVIL_ASSIGN_OR_RETURN(auto lengths, IntListAttribute(i, "fft_length"));
  const int rank = in.shape().rank();
  const int n_dims = static_cast<int>(lengths.size());
  // Work on a complex copy shaped like the full (not halved) signal.
  std::vector<int64_t> dims = in.shape().dims();
  if (type == "IRFFT") dims.back() = lengths.back();
  std::vector<C> data(static_cast<size_t>(std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>())));
  const auto strides = Strides(dims);
  std::vector<int64_t> index;
  for (size_t k = 0; k < data.size(); ++k) {
    Unflatten(static_cast<int64_t>(k), dims, index);
    if (type == "IRFFT") {
      // Rebuild the Hermitian-symmetric half the input leaves out.
      int64_t last = index.back(), n = dims.back(), stored = in.shape().dims().back();
      bool mirrored = last >= stored;
      std::vector<int64_t> src = index;
      if (mirrored) {
        for (int d = rank - n_dims; d < rank; ++d) src[d] = (dims[d] - index[d]) % dims[d];
      }
      src.back() = mirrored ? (n - last) % n : last;
      auto in_strides = Strides(in.shape().dims());
      C v = in.GetComplex(Flatten(src, in_strides));
      data[k] = mirrored ? std::conj(v) : v;
    } else {
      data[k] = in.GetComplex(static_cast<int64_t>(k));
    }
  }
  const bool inverse = type == "IFFT" || type == "IRFFT";
  for (int d = rank - n_dims; d < rank; ++d) {
    const int64_t n = dims[d];
    std::vector<C> line(static_cast<size_t>(n)), result(static_cast<size_t>(n));
    for (size_t k = 0; k < data.size(); ++k) {
      Unflatten(static_cast<int64_t>(k), dims, index);
      if (index[d] != 0) continue;
      for (int64_t e = 0; e < n; ++e) line[e] = data[k + e * strides[d]];
      for (int64_t f = 0; f < n; ++f) {
        C sum = 0;
        for (int64_t e = 0; e < n; ++e) {
          sum += line[e] * Twiddle((f * e) % n, n, inverse);
        }
        result[f] = inverse ? sum / static_cast<double>(n) : sum;
      }
      for (int64_t e = 0; e < n; ++e) data[k + e * strides[d]] = result[e];
    }
  }
  Literal out(Shape(i.shape.element_type(), i.shape.dims()));
  for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
    Unflatten(k, out.shape().dims(), index);
    C v = data[static_cast<size_t>(Flatten(index, strides))];
    if (IsComplex(out.shape().element_type())) {
      out.SetComplex(k, v.real(), v.imag());
    } else {
      out.SetDouble(k, v.real());
    }
  }
  return out;
}

StatusOr<Literal> EvalTopK(const Instruction& i, const Literal& in) {
  ANVIL_ASSIGN_OR_RETURN(int64_t k, IntAttribute(i, "k", std::nullopt));
  const bool largest = StringAttribute(i, "largest") != "false";
  const auto& dims = in.shape().dims();
  const int64_t n = dims.back();
  const int64_t rows = n == 0 ? 0 : in.element_count() / n;
  const Shape& value_shape = i.shape.tuple_elements().at(0);
  const Shape& index_shape = i.shape.tuple_elements().at(1);
  Literal values(Shape(value_shape.element_type(), value_shape.dims()));
  Literal indices(Shape(index_shape.element_type(), index_shape.dims()));
  const ElementType t = in.shape().element_type();
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    // Floats rank by their total order (-NaN < -inf < ... < +inf < +NaN),
    // integers by value; ties keep index order.
    auto key = [&](int64_t e) -> std::pair<int64_t, uint64_t> {
      const int64_t at = r * n + e;
      if (IsFloat(t)) return {TotalOrderKey(in, at), 0};
      if (IsSignedInt(t)) return {in.GetInt(at), 0};
      return {0, BitsAt(in, at)};
    };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? key(a) > key(b) : key(a) < key(b);
    });
    for (int64_t e = 0; e < k && e < n; ++e) {
      CopyElement(in, r * n + order[e], values, r * k + e);
      indices.SetInt(r * k + e, order[e]);
    }
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(values));
  parts.push_back(std::move(indices));
  Literal tuple(i.shape);
  tuple.mutable_tuple_elements() = std::move(parts);
  return tuple;
}

}  // namespace anvil::hlo::eval
