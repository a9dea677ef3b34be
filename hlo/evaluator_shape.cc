// Ops of the reference evaluator that move elements without computing:
// broadcast, reshape, transpose, slice, concatenate, pad, reverse, iota,
// dynamic slices, gather.
#include <algorithm>
#include <cstring>

#include "hlo/attributes.h"
#include "hlo/evaluator_internal.h"

namespace anvil::hlo::eval {
namespace {

// Walks every element of `out`, calling `source(index)` for the linear index
// of the operand element to copy (or -1 to leave the element as is).
template <typename Source>
void Gather(const Literal& in, Literal& out, Source source) {
  const auto& dims = out.shape().dims();
  const auto size = static_cast<size_t>(Info(out.shape().element_type()).byte_size);
  const uint8_t* from_data = in.data().data();
  uint8_t* to_data = out.mutable_data().data();
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
    const int64_t from = source(index);
    if (from >= 0) {
      const uint8_t* src = from_data + static_cast<size_t>(from) * size;
      uint8_t* dst = to_data + static_cast<size_t>(k) * size;
      switch (size) {  // fixed sizes: one move each instead of a memcpy call
        case 1: *dst = *src; break;
        case 2: std::memcpy(dst, src, 2); break;
        case 4: std::memcpy(dst, src, 4); break;
        case 8: std::memcpy(dst, src, 8); break;
        default: std::memcpy(dst, src, size);
      }
    }
    for (size_t d = dims.size(); d-- > 0;) {  // next row-major index
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
}

int64_t ClampIndex(int64_t start, int64_t operand_size, int64_t slice_size) {
  return std::clamp<int64_t>(start, 0, std::max<int64_t>(0, operand_size - slice_size));
}

StatusOr<std::vector<int64_t>> StartIndices(const std::vector<const Literal*>& operands, size_t first, size_t rank) {
  std::vector<int64_t> starts;
  if (operands.size() == first + 1 && operands[first]->shape().rank() == 1 && rank != 1) {
    for (int64_t d = 0; d < operands[first]->element_count(); ++d) starts.push_back(operands[first]->GetInt(d));
  } else {
    for (size_t k = first; k < operands.size(); ++k) starts.push_back(operands[k]->GetInt(0));
  }
  if (starts.size() != rank) return InvalidArgument("start indices do not match the operand's rank");
  return starts;
}

StatusOr<Literal> EvalGather(const Instruction& i, const Literal& operand, const Literal& indices) {
  ANVIL_ASSIGN_OR_RETURN(auto offset_dims, IntListAttribute(i, "offset_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto collapsed, IntListAttribute(i, "collapsed_slice_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto operand_batching, IntListAttribute(i, "operand_batching_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto indices_batching, IntListAttribute(i, "start_indices_batching_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto start_index_map, IntListAttribute(i, "start_index_map"));
  ANVIL_ASSIGN_OR_RETURN(auto slice_sizes, IntListAttribute(i, "slice_sizes"));
  ANVIL_ASSIGN_OR_RETURN(int64_t ivd, IntAttribute(i, "index_vector_dim", indices.shape().rank()));
  Literal out(Shape(i.shape.element_type(), i.shape.dims()));
  const auto& od = operand.shape().dims();
  const auto in_strides = Strides(od);
  const auto idx_strides = Strides(indices.shape().dims());
  const int out_rank = i.shape.rank();
  std::vector<int64_t> batch_dims;  // output dims that index the batch
  for (int d = 0; d < out_rank; ++d) {
    if (std::find(offset_dims.begin(), offset_dims.end(), d) == offset_dims.end()) batch_dims.push_back(d);
  }
  // Operand dims that the offset dims walk, in order.
  std::vector<int64_t> offset_operand_dims;
  for (int d = 0; d < operand.shape().rank(); ++d) {
    bool dropped = std::count(collapsed.begin(), collapsed.end(), d) ||
                   std::count(operand_batching.begin(), operand_batching.end(), d);
    if (!dropped) offset_operand_dims.push_back(d);
  }
  std::vector<int64_t> index, batch_index, full_start(od.size()), operand_index(od.size());
  for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
    Unflatten(k, i.shape.dims(), index);
    // The batch position in the indices tensor (index_vector_dim left out).
    batch_index.clear();
    for (int64_t d : batch_dims) batch_index.push_back(index[d]);
    std::fill(full_start.begin(), full_start.end(), 0);
    auto index_at = [&](int64_t component) {
      std::vector<int64_t> at;
      size_t b = 0;
      for (int d = 0; d < indices.shape().rank(); ++d) at.push_back(d == ivd ? component : batch_index[b++]);
      return indices.GetInt(Flatten(at, idx_strides));
    };
    for (size_t c = 0; c < start_index_map.size(); ++c) {
      int64_t od_index = start_index_map[c];
      full_start[od_index] = ClampIndex(index_at(static_cast<int64_t>(c)), od[od_index], slice_sizes[od_index]);
    }
    for (size_t b = 0; b < operand_batching.size(); ++b) {
      // The batch coordinate of the indices' batching dim feeds the operand's.
      int64_t idx_dim = indices_batching[b];
      int64_t pos = idx_dim < ivd || ivd >= indices.shape().rank() ? idx_dim : idx_dim - 1;
      full_start[operand_batching[b]] = batch_index[pos];
    }
    for (size_t d = 0; d < od.size(); ++d) operand_index[d] = full_start[d];
    for (size_t o = 0; o < offset_dims.size(); ++o) operand_index[offset_operand_dims[o]] += index[offset_dims[o]];
    CopyElement(operand, Flatten(operand_index, in_strides), out, k);
  }
  return out;
}

}  // namespace

StatusOr<Literal> EvalShapeOp(const Instruction& i, const std::vector<const Literal*>& operands) {
  Literal out(Shape(i.shape.element_type(), i.shape.dims()));
  switch (i.opcode) {
    case Opcode::kBroadcast: {
      const Literal& in = *operands[0];
      if (in.element_count() == 1 && out.element_count() > 0) {  // a scalar everywhere
        CopyElement(in, 0, out, 0);
        out.BroadcastFirstElement();
        return out;
      }
      ANVIL_ASSIGN_OR_RETURN(auto dims, IntListAttribute(i, "dimensions"));
      const auto strides = Strides(in.shape().dims());
      Gather(in, out, [&](const std::vector<int64_t>& index) {
        int64_t from = 0;
        for (size_t d = 0; d < dims.size(); ++d) {
          int64_t size = in.shape().dim(static_cast<int>(d));
          from += (size == 1 ? 0 : index[dims[d]]) * strides[d];
        }
        return from;
      });
      return out;
    }
    case Opcode::kReshape:
    case Opcode::kBitcast:
      out.mutable_data() = operands[0]->data();
      return out;
    case Opcode::kTranspose: {
      const Literal& in = *operands[0];
      ANVIL_ASSIGN_OR_RETURN(auto perm, IntListAttribute(i, "dimensions"));
      const auto strides = Strides(in.shape().dims());
      Gather(in, out, [&](const std::vector<int64_t>& index) {
        int64_t from = 0;
        for (size_t d = 0; d < perm.size(); ++d) from += index[d] * strides[perm[d]];
        return from;
      });
      return out;
    }
    case Opcode::kSlice: {
      const Literal& in = *operands[0];
      const Attribute* a = i.FindAttribute("slice");
      ANVIL_ASSIGN_OR_RETURN(auto slice, ParseSlice(a ? a->value : ""));
      const auto strides = Strides(in.shape().dims());
      Gather(in, out, [&](const std::vector<int64_t>& index) {
        int64_t from = 0;
        for (size_t d = 0; d < slice.size(); ++d) from += (slice[d].start + index[d] * slice[d].stride) * strides[d];
        return from;
      });
      return out;
    }
    case Opcode::kReverse: {
      const Literal& in = *operands[0];
      if (in.element_count() == 1 && out.element_count() > 0) {  // a scalar everywhere
        CopyElement(in, 0, out, 0);
        out.BroadcastFirstElement();
        return out;
      }
      ANVIL_ASSIGN_OR_RETURN(auto dims, IntListAttribute(i, "dimensions"));
      const auto strides = Strides(in.shape().dims());
      Gather(in, out, [&](const std::vector<int64_t>& index) {
        int64_t from = 0;
        for (size_t d = 0; d < index.size(); ++d) {
          bool flip = std::count(dims.begin(), dims.end(), static_cast<int64_t>(d)) > 0;
          from += (flip ? in.shape().dim(static_cast<int>(d)) - 1 - index[d] : index[d]) * strides[d];
        }
        return from;
      });
      return out;
    }
    case Opcode::kConcatenate: {
      ANVIL_ASSIGN_OR_RETURN(auto dims, IntListAttribute(i, "dimensions"));
      const int64_t dim = dims.at(0);
      int64_t offset = 0;
      const auto out_strides = Strides(out.shape().dims());
      std::vector<int64_t> index;
      for (const Literal* in : operands) {
        for (int64_t k = 0, k_end = in->element_count(); k < k_end; ++k) {
          Unflatten(k, in->shape().dims(), index);
          index[dim] += offset;
          CopyElement(*in, k, out, Flatten(index, out_strides));
        }
        offset += in->shape().dim(static_cast<int>(dim));
      }
      return out;
    }
    case Opcode::kPad: {
      const Literal& in = *operands[0];
      const Literal& value = *operands[1];
      const Attribute* a = i.FindAttribute("padding");
      ANVIL_ASSIGN_OR_RETURN(auto pads, ParsePadding(a ? a->value : ""));
      for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) CopyElement(value, 0, out, k);
      const auto out_strides = Strides(out.shape().dims());
      std::vector<int64_t> index;
      for (int64_t k = 0, k_end = in.element_count(); k < k_end; ++k) {
        Unflatten(k, in.shape().dims(), index);
        bool inside = true;
        for (size_t d = 0; d < index.size(); ++d) {
          index[d] = pads[d].low + index[d] * (pads[d].interior + 1);
          inside &= index[d] >= 0 && index[d] < out.shape().dim(static_cast<int>(d));
        }
        if (inside) CopyElement(in, k, out, Flatten(index, out_strides));
      }
      return out;
    }
    case Opcode::kIota: {
      ANVIL_ASSIGN_OR_RETURN(int64_t dim, IntAttribute(i, "iota_dimension", std::nullopt));
      std::vector<int64_t> index;
      for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
        Unflatten(k, out.shape().dims(), index);
        if (IsComplex(out.shape().element_type()) || IsFloat(out.shape().element_type())) {
          out.SetDouble(k, static_cast<double>(index[dim]));
        } else {
          SetBits(out, k, static_cast<uint64_t>(index[dim]));
        }
      }
      return out;
    }
    case Opcode::kDynamicSlice: {
      const Literal& in = *operands[0];
      const auto& od = in.shape().dims();
      ANVIL_ASSIGN_OR_RETURN(auto starts, StartIndices(operands, 1, od.size()));
      for (size_t d = 0; d < od.size(); ++d) starts[d] = ClampIndex(starts[d], od[d], out.shape().dim(static_cast<int>(d)));
      const auto strides = Strides(od);
      Gather(in, out, [&](const std::vector<int64_t>& index) {
        int64_t from = 0;
        for (size_t d = 0; d < index.size(); ++d) from += (starts[d] + index[d]) * strides[d];
        return from;
      });
      return out;
    }
    case Opcode::kDynamicUpdateSlice: {
      const Literal& in = *operands[0];
      const Literal& update = *operands[1];
      const auto& od = in.shape().dims();
      ANVIL_ASSIGN_OR_RETURN(auto starts, StartIndices(operands, 2, od.size()));
      for (size_t d = 0; d < od.size(); ++d) starts[d] = ClampIndex(starts[d], od[d], update.shape().dim(static_cast<int>(d)));
      out.mutable_data() = in.data();
      const auto strides = Strides(od);
      std::vector<int64_t> index;
      for (int64_t k = 0, k_end = update.element_count(); k < k_end; ++k) {
        Unflatten(k, update.shape().dims(), index);
        for (size_t d = 0; d < index.size(); ++d) index[d] += starts[d];
        CopyElement(update, k, out, Flatten(index, strides));
      }
      return out;
    }
    case Opcode::kGather:
      return EvalGather(i, *operands[0], *operands[1]);
    default:
      return Unimplemented("the evaluator does not run " + std::string(i.OpcodeSpelling()));
  }
}

}  // namespace anvil::hlo::eval
