// Scatter and select-and-scatter for the reference evaluator, by the
// StableHLO spec. Updates apply in row-major order of the update index;
// an update whose target falls outside the operand is skipped.
#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "hlo/attributes.h"
#include "hlo/evaluator_internal.h"

namespace anvil::hlo::eval {
namespace {

Literal ScalarOf(const Literal& l, int64_t k) {
  Literal s(Shape(l.shape().element_type(), {}));
  CopyElement(l, k, s, 0);
  return s;
}

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

StatusOr<Literal> EvalScatter(const Instruction& i, const std::vector<const Literal*>& operands, const CallFn& call) {
  const size_t n = (operands.size() - 1) / 2;
  const Literal& indices = *operands[n];
  ANVIL_ASSIGN_OR_RETURN(auto update_window_dims, IntListAttribute(i, "update_window_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto inserted_window_dims, IntListAttribute(i, "inserted_window_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto input_batching_dims, IntListAttribute(i, "input_batching_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto indices_batching_dims, IntListAttribute(i, "scatter_indices_batching_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto scatter_dims_to_operand_dims, IntListAttribute(i, "scatter_dims_to_operand_dims"));
  ANVIL_ASSIGN_OR_RETURN(int64_t ivd, IntAttribute(i, "index_vector_dim", indices.shape().rank()));
  const Computation& body = *i.called_computations.at(0);
  std::vector<Literal> results;
  for (size_t v = 0; v < n; ++v) results.push_back(*operands[v]);
  const auto& in_dims = operands[0]->shape().dims();
  const auto in_strides = Strides(in_dims);
  const int rank = static_cast<int>(in_dims.size());
  const Literal& updates0 = *operands[n + 1];
  const auto& up_dims = updates0.shape().dims();
  std::vector<int64_t> update_scatter_dims;
  for (int d = 0; d < static_cast<int>(up_dims.size()); ++d) {
    if (!Contains(update_window_dims, d)) update_scatter_dims.push_back(d);
  }
  const auto idx_strides = Strides(indices.shape().dims());
  const int idx_rank = indices.shape().rank();
  // Input dims the update window walks: those not inserted and not batching.
  std::vector<int64_t> window_input_dims;
  for (int d = 0; d < rank; ++d) {
    if (!Contains(inserted_window_dims, d) && !Contains(input_batching_dims, d)) window_input_dims.push_back(d);
  }
  std::vector<int64_t> update_index, scatter_index, result_index(static_cast<size_t>(rank)), at;
  for (int64_t k = 0, k_end = updates0.element_count(); k < k_end; ++k) {
    Unflatten(k, up_dims, update_index);
    scatter_index.clear();
    for (int64_t d : update_scatter_dims) scatter_index.push_back(update_index[d]);
    std::fill(result_index.begin(), result_index.end(), 0);
    // Start index from the indices tensor.
    auto index_component = [&](int64_t component) {
      at.clear();
      size_t s = 0;
      for (int d = 0; d < idx_rank; ++d) at.push_back(d == ivd ? component : scatter_index[s++]);
      return indices.GetInt(Flatten(at, idx_strides));
    };
    for (size_t c = 0; c < scatter_dims_to_operand_dims.size(); ++c) {
      result_index[scatter_dims_to_operand_dims[c]] += index_component(static_cast<int64_t>(c));
    }
    for (size_t b = 0; b < input_batching_dims.size(); ++b) {
      int64_t d_start = indices_batching_dims[b];
      result_index[input_batching_dims[b]] += scatter_index[d_start < ivd ? d_start : d_start - 1];
    }
    for (size_t w = 0; w < update_window_dims.size() && w < window_input_dims.size(); ++w) {
      result_index[window_input_dims[w]] += update_index[update_window_dims[w]];
    }
    bool inside = true;
    for (int d = 0; d < rank; ++d) inside &= result_index[d] >= 0 && result_index[d] < in_dims[d];
    if (!inside) continue;
    const int64_t target = Flatten(result_index, in_strides);
    std::vector<Literal> scalars;
    for (size_t v = 0; v < n; ++v) scalars.push_back(ScalarOf(results[v], target));
    for (size_t v = 0; v < n; ++v) scalars.push_back(ScalarOf(*operands[n + 1 + v], k));
    std::vector<const Literal*> args;
    for (const Literal& s : scalars) args.push_back(&s);
    ANVIL_ASSIGN_OR_RETURN(Literal r, call(body, args));
    for (size_t v = 0; v < n; ++v) {
      const Literal& part = r.shape().IsTuple() ? r.tuple_elements()[v] : r;
      CopyElement(part, 0, results[v], target);
    }
  }
  if (n == 1) return std::move(results[0]);
  std::vector<Shape> shapes;
  for (const Literal& l : results) shapes.push_back(l.shape());
  Literal t(Shape::Tuple(shapes));
  t.mutable_tuple_elements() = std::move(results);
  return t;
}

StatusOr<Literal> EvalSelectAndScatter(const Instruction& i, const std::vector<const Literal*>& operands,
                                       const CallFn& call) {
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  const Literal& init = *operands[2];
  const Attribute* w = i.FindAttribute("window");
  ANVIL_ASSIGN_OR_RETURN(auto window, ParseWindow(w ? w->value : ""));
  const Attribute* sa = i.FindAttribute("select");
  const Attribute* ca = i.FindAttribute("scatter");
  const bool select_first = sa < ca;
  const Computation& select = *i.called_computations.at(select_first ? 0 : 1);
  const Computation& scatter = *i.called_computations.at(select_first ? 1 : 0);
  Literal result(Shape(i.shape.element_type(), i.shape.dims()));
  for (int64_t k = 0, k_end = result.element_count(); k < k_end; ++k) CopyElement(init, 0, result, k);
  const auto& dims = operand.shape().dims();
  const auto strides = Strides(dims);
  std::vector<int64_t> window_dims;
  for (const WindowDim& d : window) window_dims.push_back(d.size);
  const int64_t window_count = std::accumulate(window_dims.begin(), window_dims.end(), int64_t{1}, std::multiplies<>());
  std::vector<int64_t> source_index, window_index, at(dims.size());
  for (int64_t s = 0; s < source.element_count(); ++s) {
    Unflatten(s, source.shape().dims(), source_index);
    int64_t selected = -1;
    for (int64_t wk = 0; wk < window_count; ++wk) {
      Unflatten(wk, window_dims, window_index);
      bool inside = true;
      for (size_t d = 0; d < dims.size() && inside; ++d) {
        at[d] = source_index[d] * window[d].stride + window_index[d] * window[d].window_dilation - window[d].pad_low;
        inside = at[d] >= 0 && at[d] < dims[d];
      }
      if (!inside) continue;
      const int64_t candidate = Flatten(at, strides);
      if (selected < 0) {
        selected = candidate;
        continue;
      }
      Literal a = ScalarOf(operand, selected), b = ScalarOf(operand, candidate);
      ANVIL_ASSIGN_OR_RETURN(Literal keep, call(select, {&a, &b}));
      if (!keep.GetUint(0)) selected = candidate;
    }
    if (selected < 0) continue;
    Literal current = ScalarOf(result, selected), update = ScalarOf(source, s);
    ANVIL_ASSIGN_OR_RETURN(Literal r, call(scatter, {&current, &update}));
    CopyElement(r, 0, result, selected);
  }
  return result;
}

StatusOr<Literal> EvalScan(const Instruction& i, const std::vector<const Literal*>& operands, const CallFn& call) {
  // chlo.scan: inputs, then initial carries; the body maps (input slices,
  // carries) to (output slices, new carries) along `dimension`.
  if (i.called_computations.size() != 1 || !i.shape.IsTuple() || operands.empty()) {
    return InvalidArgument("chlo.scan needs a body, inputs and a tuple result");
  }
  const std::string config = StringAttribute(i, "backend_config");
  auto option = [&](const std::string& key) -> std::string {
    size_t at = config.find(key + " = ");
    if (at == std::string::npos) return "";
    size_t start = at + key.size() + 3, end = config.find_first_of(",}", start);
    return config.substr(start, end - start);
  };
  const int64_t dim = std::atoll(option("dimension").c_str());
  const bool reverse = option("is_reverse") == "true";
  const int input_rank = operands[0]->shape().rank();
  const auto& results_shapes = i.shape.tuple_elements();
  // The carries are the trailing results of lower rank than the inputs.
  size_t m = 0;
  while (m < results_shapes.size() && results_shapes[results_shapes.size() - 1 - m].rank() < input_rank) ++m;
  const size_t n = operands.size() - m, outputs = results_shapes.size() - m;
  if (dim < 0 || dim >= input_rank) return InvalidArgument("chlo.scan dimension out of range");
  const int64_t length = operands[0]->shape().dim(static_cast<int>(dim));
  std::vector<Literal> carries, out;
  for (size_t c = 0; c < m; ++c) carries.push_back(*operands[n + c]);
  for (size_t o = 0; o < outputs; ++o) out.emplace_back(results_shapes[o]);
  const Computation& body = *i.called_computations[0];
  // Slices: the operand with `dim` fixed at t.
  auto slice = [&](const Literal& full, int64_t t) {
    std::vector<int64_t> dims = full.shape().dims();
    dims.erase(dims.begin() + dim);
    Literal part(Shape(full.shape().element_type(), dims));
    std::vector<int64_t> index;
    const auto strides = Strides(full.shape().dims());
    for (int64_t k = 0, k_end = part.element_count(); k < k_end; ++k) {
      Unflatten(k, dims, index);
      index.insert(index.begin() + dim, t);
      CopyElement(full, Flatten(index, strides), part, k);
    }
    return part;
  };
  for (int64_t step = 0; step < length; ++step) {
    const int64_t t = reverse ? length - 1 - step : step;
    std::vector<Literal> slices;
    for (size_t k = 0; k < n; ++k) slices.push_back(slice(*operands[k], t));
    std::vector<const Literal*> args;
    for (const Literal& l : slices) args.push_back(&l);
    for (const Literal& l : carries) args.push_back(&l);
    ANVIL_ASSIGN_OR_RETURN(Literal r, call(body, args));
    auto part = [&](size_t k) -> const Literal& { return r.shape().IsTuple() ? r.tuple_elements().at(k) : r; };
    for (size_t o = 0; o < outputs; ++o) {
      const Literal& piece = part(o);
      std::vector<int64_t> index;
      const auto strides = Strides(out[o].shape().dims());
      for (int64_t k = 0, k_end = piece.element_count(); k < k_end; ++k) {
        Unflatten(k, piece.shape().dims(), index);
        index.insert(index.begin() + dim, t);
        CopyElement(piece, k, out[o], Flatten(index, strides));
      }
    }
    for (size_t c = 0; c < m; ++c) carries[c] = part(outputs + c);
  }
  for (Literal& c : carries) out.push_back(std::move(c));
  Literal tuple(i.shape);
  tuple.mutable_tuple_elements() = std::move(out);
  return tuple;
}

}  // namespace anvil::hlo::eval
