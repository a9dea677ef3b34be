// scatter of one operand whose body is one op on (current, update): add,
// multiply, maximum, minimum, and, or, or the update itself (a plain
// store). The index arithmetic of the StableHLO spec is laid out at compile
// time: for each update dimension, whether it walks the scatter indices or
// the update window, and the operand stride it moves; executing decodes
// each update element's index, reads its index vector, and combines in
// place. Updates apply in row-major order of the update index, one thread
// (targets may repeat), and one whose target falls outside the operand is
// skipped, as in the evaluator.
#include <algorithm>
#include <cstring>

#include "hlo/attributes.h"
#include "hlo/patterns.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/index_values.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/reducers.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;
using hlo::Opcode;

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Where an update element lands, by the update's dimensions.
struct ScatterLayout {
  std::vector<int64_t> update_dims;
  // Per update dimension: the scatter-index position it is (>= 0), or -1
  // for a window dimension, which then moves operand dimension window_to[d].
  std::vector<int64_t> scatter_position, window_to;
  // The index vector: component c moves operand dimension component_to[c];
  // its element in the indices array is at sum over scatter positions s of
  // index[s] * index_stride[s] + c * component_stride.
  std::vector<int64_t> component_to, index_stride;
  int64_t component_stride = 0;
  // Batching: scatter position batch_from[b] moves operand dimension batch_to[b].
  std::vector<int64_t> batch_from, batch_to;
  std::vector<int64_t> operand_dims, operand_strides;
  ElementType index_type = ElementType::kS32;
};

std::optional<ScatterLayout> Layout(const hlo::Instruction& i) {
  auto update_window_dims = hlo::IntListAttribute(i, "update_window_dims");
  auto inserted_window_dims = hlo::IntListAttribute(i, "inserted_window_dims");
  auto input_batching_dims = hlo::IntListAttribute(i, "input_batching_dims");
  auto indices_batching_dims = hlo::IntListAttribute(i, "scatter_indices_batching_dims");
  auto to_operand = hlo::IntListAttribute(i, "scatter_dims_to_operand_dims");
  const hlo::Shape& indices = i.operands[1]->shape;
  auto ivd = hlo::IntAttribute(i, "index_vector_dim", indices.rank());
  if (!update_window_dims.ok() || !inserted_window_dims.ok() || !input_batching_dims.ok() ||
      !indices_batching_dims.ok() || !to_operand.ok() || !ivd.ok() || !IsIndexType(indices.element_type()) ||
      input_batching_dims->size() != indices_batching_dims->size()) {
    return std::nullopt;
  }
  ScatterLayout l;
  l.index_type = indices.element_type();
  l.operand_dims = i.operands[0]->shape.dims();
  l.operand_strides = RowMajorStrides(l.operand_dims);
  l.update_dims = i.operands[2]->shape.dims();
  const int rank = static_cast<int>(l.operand_dims.size());
  std::vector<int64_t> window_input_dims;
  for (int d = 0; d < rank; ++d) {
    if (!Contains(*inserted_window_dims, d) && !Contains(*input_batching_dims, d)) window_input_dims.push_back(d);
  }
  // Indices dimensions other than the index vector's, in order: the scatter positions.
  const std::vector<int64_t> idx_strides = RowMajorStrides(indices.dims());
  std::vector<int64_t> scatter_index_dims;
  for (int d = 0; d < indices.rank(); ++d) {
    if (d != *ivd) scatter_index_dims.push_back(d);
  }
  int64_t s = 0, w = 0;
  for (int d = 0; d < static_cast<int>(l.update_dims.size()); ++d) {
    if (Contains(*update_window_dims, d)) {
      if (w >= static_cast<int64_t>(window_input_dims.size())) return std::nullopt;
      l.scatter_position.push_back(-1);
      l.window_to.push_back(window_input_dims[static_cast<size_t>(w++)]);
    } else {
      if (s >= static_cast<int64_t>(scatter_index_dims.size())) return std::nullopt;
      l.scatter_position.push_back(s);
      l.index_stride.push_back(idx_strides[static_cast<size_t>(scatter_index_dims[static_cast<size_t>(s)])]);
      l.window_to.push_back(-1);
      ++s;
    }
  }
  l.component_to = *to_operand;
  l.component_stride = *ivd < indices.rank() ? idx_strides[static_cast<size_t>(*ivd)] : 0;
  if (*ivd >= indices.rank() && l.component_to.size() > 1) return std::nullopt;
  for (size_t b = 0; b < input_batching_dims->size(); ++b) {
    const int64_t from = (*indices_batching_dims)[b];
    l.batch_from.push_back(from < *ivd ? from : from - 1);
    l.batch_to.push_back((*input_batching_dims)[b]);
  }
  for (int64_t d : l.component_to) {
    if (d < 0 || d >= rank) return std::nullopt;
  }
  return l;
}

template <typename T, typename Combine>
Kernel ScatterOf(ScatterLayout l, Slot operand, Slot indices, Slot updates, Slot out, int64_t operand_count,
                 Combine combine) {
  return [=](const Frame& frame) {
    T* y = static_cast<T*>(frame.At(out));
    const T* x = static_cast<const T*>(frame.At(operand));
    if (x != y) std::memcpy(y, x, static_cast<size_t>(operand_count) * sizeof(T));
    const T* u = static_cast<const T*>(frame.At(updates));
    const void* idx = frame.At(indices);
    const size_t up_rank = l.update_dims.size(), rank = l.operand_dims.size();
    int64_t count = 1;
    for (int64_t d : l.update_dims) count *= d;
    // When the update's innermost dimension is a window dimension moving the
    // operand's innermost one (rows of an embedding gradient), a run of
    // update elements lands on consecutive operand elements: the index
    // arithmetic is done once per run, and the part of the run inside the
    // operand is combined in one loop, in the same order.
    const int64_t run = up_rank > 0 && rank > 0 && l.window_to[up_rank - 1] == static_cast<int64_t>(rank - 1)
                            ? l.update_dims[up_rank - 1]
                            : 1;
    if (run == 0) return;
    std::vector<int64_t> index(up_rank, 0), target(rank);
    for (int64_t k = 0; k < count; k += run) {
      std::fill(target.begin(), target.end(), 0);
      int64_t vector_at = 0;
      for (size_t d = 0; d < up_rank; ++d) {
        if (l.scatter_position[d] >= 0) {
          vector_at += index[d] * l.index_stride[static_cast<size_t>(l.scatter_position[d])];
        } else {
          target[static_cast<size_t>(l.window_to[d])] += index[d];
        }
      }
      for (size_t c = 0; c < l.component_to.size(); ++c) {
        target[static_cast<size_t>(l.component_to[c])] +=
            ReadIndex(idx, l.index_type, vector_at + static_cast<int64_t>(c) * l.component_stride);
      }
      for (size_t b = 0; b < l.batch_from.size(); ++b) {
        // The scatter position's update dimension carries the batch index.
        for (size_t d = 0; d < up_rank; ++d) {
          if (l.scatter_position[d] == l.batch_from[b]) target[static_cast<size_t>(l.batch_to[b])] += index[d];
        }
      }
      bool inside = true;
      int64_t at = 0;
      // The innermost dimension is checked per element of the run below.
      const size_t checked = run == 1 ? rank : rank - 1;
      for (size_t d = 0; d < rank; ++d) {
        if (d < checked) inside &= target[d] >= 0 && target[d] < l.operand_dims[d];
        at += target[d] * l.operand_strides[d];
      }
      if (run == 1) {
        if (inside) y[at] = combine(y[at], u[k]);
      } else if (inside) {
        // Elements j of the run land on target[rank - 1] + j.
        const int64_t first = target[rank - 1], length = l.operand_dims[rank - 1];
        const int64_t j0 = std::max<int64_t>(0, -first), j1 = std::min(run, length - first);
        for (int64_t j = j0; j < j1; ++j) y[at + j] = combine(y[at + j], u[k + j]);
      }
      for (size_t d = run == 1 ? up_rank : up_rank - 1; d-- > 0;) {
        if (++index[d] < l.update_dims[d]) break;
        index[d] = 0;
      }
    }
  };
}

// The body as a function of (current, update) for T, or nullptr.
template <typename T>
Kernel ScatterTyped(std::optional<Opcode> op, bool assign, const ScatterLayout& l, const std::vector<Slot>& in,
                    const Slot& out, int64_t n) {
  if (assign) return ScatterOf<T>(l, in[0], in[1], in[2], out, n, [](T, T update) { return update; });
  Kernel kernel;
  if (op) reducer::Visit<T>(*op, [&](auto combine) { kernel = ScatterOf<T>(l, in[0], in[1], in[2], out, n, combine); });
  return kernel;
}

// bf16 and f16 bodies computed in f32 and rounded once, as the evaluator's
// bf16 and f16 arithmetic is.
template <typename N>
Kernel NarrowScatter(std::optional<Opcode> op, bool assign, const ScatterLayout& l, const std::vector<Slot>& in,
                     const Slot& out, int64_t n) {
  if (assign) return ScatterOf<N>(l, in[0], in[1], in[2], out, n, [](N, N update) { return update; });
  Kernel kernel;
  if (op) {
    reducer::Visit<float>(*op, [&](auto f) { kernel = ScatterOf<N>(l, in[0], in[1], in[2], out, n, ThroughFloat<N>(f)); });
  }
  return kernel;
}

}  // namespace

Kernel ScatterKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.operands.size() != 3 || in.size() != 3 || !i.shape.IsArray() || i.called_computations.size() != 1) return nullptr;
  const hlo::Computation& body = *i.called_computations[0];
  const ElementType t = i.shape.element_type();
  if (i.operands[0]->shape.element_type() != t || i.operands[2]->shape.element_type() != t) return nullptr;
  // A body returning its second parameter stores the update.
  const bool assign = body.root && body.root->opcode == Opcode::kParameter && body.root->parameter_number == 1 &&
                      body.parameters.size() == 2;
  const std::optional<Opcode> op = hlo::SingleOpReducer(body);
  if (!assign && !op) return nullptr;
  const std::optional<ScatterLayout> layout = Layout(i);
  if (!layout) return nullptr;
  const int64_t n = i.shape.ElementCount();
  switch (t) {
    case ElementType::kBF16: return NarrowScatter<Bf16>(op, assign, *layout, in, out, n);
    case ElementType::kF16: return NarrowScatter<F16>(op, assign, *layout, in, out, n);
    case ElementType::kC64:  // a store moves the element's bytes
      return assign ? ScatterOf<uint64_t>(*layout, in[0], in[1], in[2], out, n, [](uint64_t, uint64_t u) { return u; })
                    : nullptr;
    default:  // c128, sub-byte, complex arithmetic: the evaluator's
      return reducer::ForNativeType<Kernel>(t, [&]<typename T>() { return ScatterTyped<T>(op, assign, *layout, in, out, n); });
  }
}

}  // namespace anvil::cpu
