// Custom calls that XLA's own backends and builder library emit, for the
// reference evaluator: cuBLAS GEMMs (a dot with alpha and beta), the
// builder's Einsum and TridiagonalSolver, and the bounded-dynamic-shape
// markers. Anvil runs every array at its static bound,
// so SliceToDynamic keeps the data as it is and PadToStatic reports the
// bounds as the sizes.
#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "hlo/attributes.h"
#include "hlo/evaluator_internal.h"

namespace anvil::hlo::eval {
namespace {

// The integers of `"key":["1","2"]` (or `[1,2]`) in a JSON backend config.
std::vector<int64_t> JsonIntList(std::string_view config, std::string_view key) {
  std::vector<int64_t> out;
  const std::string quoted = "\"" + std::string(key) + "\"";
  size_t at = config.find(quoted);
  if (at == std::string_view::npos) return out;
  at = config.find('[', at);
  const size_t end = config.find(']', at);
  if (at == std::string_view::npos || end == std::string_view::npos) return out;
  for (size_t p = at + 1; p < end; ++p) {
    if ((config[p] >= '0' && config[p] <= '9') || config[p] == '-') {
      char* stop = nullptr;
      const std::string digits(config.substr(p, end - p));
      out.push_back(std::strtoll(digits.c_str(), &stop, 10));
      p += static_cast<size_t>(stop - digits.c_str());
    }
  }
  return out;
}

// The number after `"key":` in a JSON backend config, or `fallback`.
double JsonNumber(std::string_view config, std::string_view key, double fallback) {
  const std::string quoted = "\"" + std::string(key) + "\":";
  const size_t at = config.find(quoted);
  if (at == std::string_view::npos) return fallback;
  const std::string rest(config.substr(at + quoted.size(), 32));
  char* stop = nullptr;
  const double value = std::strtod(rest.c_str(), &stop);
  return stop == rest.c_str() ? fallback : value;
}

StatusOr<Literal> CublasGemm(const Instruction& i, const std::vector<const Literal*>& operands) {
  // The config is JSON inside an HLO string; drop its escapes to read it.
  std::string config;
  for (char ch : StringAttribute(i, "backend_config")) {
    if (ch != '\\') config += ch;
  }
  if (config.find("\"epilogue\":\"DEFAULT\"") == std::string::npos && config.find("\"epilogue\"") != std::string::npos) {
    return Unimplemented("__cublas$gemm with an epilogue other than DEFAULT");
  }
  if (operands.size() < 2 || !i.shape.IsArray()) {
    return Unimplemented("__cublas$gemm producing " + i.shape.ToString() + " from " +
                         std::to_string(operands.size()) + " operands");
  }
  Instruction dot;
  dot.name = i.name;
  dot.opcode = Opcode::kDot;
  dot.shape = i.shape;
  dot.attributes = {{"lhs_batch_dims", FormatIntList(JsonIntList(config, "lhs_batch_dimensions"))},
                    {"lhs_contracting_dims", FormatIntList(JsonIntList(config, "lhs_contracting_dimensions"))},
                    {"rhs_batch_dims", FormatIntList(JsonIntList(config, "rhs_batch_dimensions"))},
                    {"rhs_contracting_dims", FormatIntList(JsonIntList(config, "rhs_contracting_dimensions"))}};
  ANVIL_ASSIGN_OR_RETURN(Literal product, EvalDot(dot, *operands[0], *operands[1]));
  const double alpha = JsonNumber(config, "alpha_real", 1), beta = JsonNumber(config, "beta", 0);
  if (alpha == 1 && beta == 0) return product;
  if (beta != 0 && operands.size() < 3) return InvalidArgument("__cublas$gemm with beta != 0 needs a third operand");
  for (int64_t k = 0, k_end = product.element_count(); k < k_end; ++k) {
    double v = alpha * product.GetDouble(k);
    if (beta != 0) v += beta * operands[2]->GetDouble(k);
    SetReal(product, k, v);
  }
  return product;
}

// XLA builder's Einsum ("ij,jk->ik" in the backend config): the sum, over
// every label not in the result, of the product of the operands; a label
// repeated within a term takes a diagonal, repeated in the result it places
// values on one.
StatusOr<Literal> Einsum(const Instruction& i, const std::vector<const Literal*>& operands) {
  const std::string config = StringAttribute(i, "backend_config");
  const size_t arrow = config.find("->");
  if (arrow == std::string::npos || !i.shape.IsArray()) return InvalidArgument("einsum config '" + config + "' has no ->");
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = config.find(',', start);
    terms.push_back(config.substr(start, std::min(comma, arrow) - start));
    if (comma == std::string::npos || comma > arrow) break;
    start = comma + 1;
  }
  const std::string result_term = config.substr(arrow + 2);
  if (terms.size() != operands.size()) return InvalidArgument("einsum config '" + config + "' names another operand count");
  std::string labels;  // each label once, with its extent
  std::vector<int64_t> extents;
  auto bind = [&](const std::string& term, const std::vector<int64_t>& dims) -> Status {
    if (term.size() != dims.size()) return InvalidArgument("einsum term '" + term + "' does not match its rank");
    for (size_t d = 0; d < term.size(); ++d) {
      const size_t at = labels.find(term[d]);
      if (at == std::string::npos) {
        labels += term[d];
        extents.push_back(dims[d]);
      } else if (extents[at] != dims[d]) {
        return InvalidArgument(std::string("einsum label '") + term[d] + "' has two extents");
      }
    }
    return OkStatus();
  };
  for (size_t t = 0; t < terms.size(); ++t) ANVIL_RETURN_IF_ERROR(bind(terms[t], operands[t]->shape().dims()));
  ANVIL_RETURN_IF_ERROR(bind(result_term, i.shape.dims()));
  // Each term's dimensions as indices into `labels`, found once.
  auto label_indices = [&](const std::string& term) {
    std::vector<size_t> indices;
    for (char label : term) indices.push_back(labels.find(label));
    return indices;
  };
  std::vector<std::vector<size_t>> term_labels;
  for (const std::string& term : terms) term_labels.push_back(label_indices(term));
  const std::vector<size_t> result_labels = label_indices(result_term);
  auto position = [&](const std::vector<size_t>& term, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& value) {
    int64_t linear = 0;
    for (size_t d = 0; d < term.size(); ++d) linear = linear * dims[d] + value[term[d]];
    return linear;
  };
  std::vector<double> sums(static_cast<size_t>(i.shape.ElementCount()), 0.0);
  std::vector<int64_t> value(labels.size(), 0);
  int64_t total = 1;
  for (int64_t e : extents) total *= e;
  for (int64_t step = 0; step < total; ++step) {
    double product = 1;
    for (size_t t = 0; t < terms.size(); ++t) {
      product *= operands[t]->GetDouble(position(term_labels[t], operands[t]->shape().dims(), value));
    }
    sums[static_cast<size_t>(position(result_labels, i.shape.dims(), value))] += product;
    for (size_t d = labels.size(); d-- > 0;) {  // next assignment of label values
      if (++value[d] < extents[d]) break;
      value[d] = 0;
    }
  }
  Literal out(i.shape);
  for (size_t k = 0; k < sums.size(); ++k) SetReal(out, static_cast<int64_t>(k), sums[k]);
  return out;
}

// XLA builder's TridiagonalSolver (Thomas algorithm): diagonals given apart
// as [..., 1, M] (lower, main, upper) or stacked as [..., 3, M] (upper, main,
// lower rows); the right-hand sides are [..., K, M], each row one system.
StatusOr<Literal> TridiagonalSolve(const Instruction& i, const std::vector<const Literal*>& operands) {
  if ((operands.size() != 2 && operands.size() != 4) || !i.shape.IsArray()) {
    return InvalidArgument("TridiagonalSolver takes (diagonals, rhs) or (lower, main, upper, rhs)");
  }
  const Literal& rhs = *operands.back();
  const auto& rd = rhs.shape().dims();
  if (rd.size() < 2 || i.shape.dims() != rd) return InvalidArgument("TridiagonalSolver's rhs must be [..., K, M]");
  const int64_t m = rd.back(), k_count = rd[rd.size() - 2];
  const int64_t batch = rhs.element_count() / std::max<int64_t>(1, m * k_count);
  // diagonal(d, b, j): lower (d = 0), main (1) or upper (2) of batch b at j.
  auto diagonal = [&](int d, int64_t b, int64_t j) {
    if (operands.size() == 4) return operands[static_cast<size_t>(d)]->GetDouble(b * m + j);
    return operands[0]->GetDouble((b * 3 + (2 - d)) * m + j);
  };
  const int64_t expected = operands.size() == 4 ? batch * m : batch * 3 * m;
  for (size_t d = 0; d + 1 < operands.size(); ++d) {
    if (operands[d]->element_count() != expected) return InvalidArgument("TridiagonalSolver's diagonals do not fit its rhs");
  }
  Literal out(i.shape);
  std::vector<double> main(static_cast<size_t>(m)), y(static_cast<size_t>(m));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t r = 0; r < k_count; ++r) {
      const int64_t base = (b * k_count + r) * m;
      for (int64_t j = 0; j < m; ++j) {
        main[j] = diagonal(1, b, j);
        y[j] = rhs.GetDouble(base + j);
        if (j > 0) {
          const double w = diagonal(0, b, j) / main[j - 1];
          main[j] -= w * diagonal(2, b, j - 1);
          y[j] -= w * y[j - 1];
        }
      }
      for (int64_t j = m; j-- > 0;) {
        if (j + 1 < m) y[j] -= diagonal(2, b, j) * y[j + 1];
        y[j] /= main[j];
        SetReal(out, base + j, y[j]);
      }
    }
  }
  return out;
}

// XLA builder's GetMatrixDiagonalViaGather: the main diagonal of each
// [..., M, N] matrix, [..., min(M, N)].
StatusOr<Literal> MatrixDiagonal(const Instruction& i, const std::vector<const Literal*>& operands) {
  if (operands.size() != 1 || operands[0]->shape().rank() < 2) {
    return InvalidArgument("GetMatrixDiagonalViaGather takes one operand of rank 2 or more");
  }
  const Literal& x = *operands[0];
  std::vector<int64_t> dims = x.shape().dims();
  const int64_t cols = dims.back();
  dims.pop_back();
  const int64_t rows = dims.back();
  dims.back() = std::min(rows, cols);
  const Shape diagonal(x.shape().element_type(), dims);
  if (!i.shape.Compatible(diagonal)) {
    return InvalidArgument("declared " + i.shape.ToString(false) + ", but the diagonal of " +
                           x.shape().ToString(false) + " is " + diagonal.ToString(false));
  }
  Literal out(diagonal);
  const int64_t length = dims.back(), batch = out.element_count() / std::max<int64_t>(1, length);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < length; ++j) CopyElement(x, (b * rows + j) * cols + j, out, b * length + j);
  }
  return out;
}

}  // namespace

bool IsBackendCustomCall(const std::string& target) {
  return target == "__cublas$gemm" || target == "xla_builder.matrix.Einsum" ||
         target == "xla_builder.tridiagonal.TridiagonalSolver" ||
         target == "xla_builder.matrix.GetMatrixDiagonalViaGather" || target == "SliceToDynamic" ||
         target == "PadToStatic" || target == "Qr" || target == "ProductOfElementaryHouseholderReflectors" ||
         target == "Eigh";
}

std::optional<StatusOr<Literal>> EvalBackendCustomCall(const Instruction& i, const std::string& target,
                                                       const std::vector<const Literal*>& operands) {
  if (target == "__cublas$gemm") return CublasGemm(i, operands);
  if (target == "Qr") return HouseholderQr(i, operands);
  if (target == "ProductOfElementaryHouseholderReflectors") return HouseholderProduct(i, operands);
  if (target == "Eigh") return JacobiEigh(i, operands);
  if (target == "xla_builder.matrix.Einsum") return Einsum(i, operands);
  if (target == "xla_builder.tridiagonal.TridiagonalSolver") return TridiagonalSolve(i, operands);
  if (target == "xla_builder.matrix.GetMatrixDiagonalViaGather") return MatrixDiagonal(i, operands);
  if (target == "SliceToDynamic" && !operands.empty() && i.shape.IsArray()) {
    Literal out(i.shape);
    if (out.data().size() != operands[0]->data().size()) {
      return StatusOr<Literal>(InvalidArgument("SliceToDynamic changes the bound of its operand"));
    }
    out.mutable_data() = operands[0]->data();
    return StatusOr<Literal>(std::move(out));
  }
  if (target == "PadToStatic" && operands.size() == 1 && i.shape.IsTuple() && !i.shape.tuple_elements().empty()) {
    Literal out(i.shape);
    auto& elements = out.mutable_tuple_elements();
    if (elements[0].data().size() != operands[0]->data().size()) {
      return StatusOr<Literal>(InvalidArgument("PadToStatic changes the bound of its operand"));
    }
    elements[0].mutable_data() = operands[0]->data();
    const auto& dims = operands[0]->shape().dims();
    for (size_t d = 0; d + 1 < elements.size() && d < dims.size(); ++d) elements[d + 1].SetInt(0, dims[d]);
    return StatusOr<Literal>(std::move(out));
  }
  return std::nullopt;
}

}  // namespace anvil::hlo::eval
