// Kernels that move elements: broadcast, transpose, slice, reverse,
// concatenate. Each becomes one or more strided copies whose strides
// are computed here, at compile time.
#include <cstring>

#include "hlo/attributes.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

using hlo::Opcode;

// dst[dst_base + sum(i_d * dst_stride_d)] = src[src_base + sum(i_d * src_stride_d)]
// over the index space `dims`; strides and bases count elements.
struct StridedCopy {
  std::vector<int64_t> dims, src_strides, dst_strides;
  int64_t src_base = 0, dst_base = 0;
};

template <typename T>
void RunCopy(const StridedCopy& c, const T* src, T* dst, const Parallel& parallel) {
  const int rank = static_cast<int>(c.dims.size());
  if (rank == 0) {
    dst[c.dst_base] = src[c.src_base];
    return;
  }
  const int64_t inner = c.dims[rank - 1];
  const int64_t s_in = c.src_strides[rank - 1], d_in = c.dst_strides[rank - 1];
  int64_t rows = 1;
  for (int d = 0; d < rank - 1; ++d) rows *= c.dims[d];
  if (inner == 0 || rows == 0) return;
  const int64_t grain = std::max<int64_t>(1, (1 << 15) / inner);
  parallel.For(rows, grain, [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> index(static_cast<size_t>(rank - 1));
    // The outer index of row `lo`, then an odometer.
    int64_t r = lo;
    for (int d = rank - 2; d >= 0; --d) {
      index[d] = r % c.dims[d];
      r /= c.dims[d];
    }
    for (int64_t row = lo; row < hi; ++row) {
      int64_t s = c.src_base, t = c.dst_base;
      for (int d = 0; d < rank - 1; ++d) {
        s += index[d] * c.src_strides[d];
        t += index[d] * c.dst_strides[d];
      }
      if (s_in == 1 && d_in == 1) {
        std::memcpy(dst + t, src + s, static_cast<size_t>(inner) * sizeof(T));
      } else {
        for (int64_t k = 0; k < inner; ++k) dst[t + k * d_in] = src[s + k * s_in];
      }
      for (int d = rank - 2; d >= 0; --d) {
        if (++index[d] < c.dims[d]) break;
        index[d] = 0;
      }
    }
  });
}

template <typename T>
Kernel CopiesOf(std::vector<std::pair<Slot, StridedCopy>> copies, Slot out) {
  return [=](const Frame& frame) {
    T* dst = static_cast<T*>(frame.At(out));
    for (const auto& [slot, copy] : copies) {
      RunCopy<T>(copy, static_cast<const T*>(frame.At(slot)), dst, *frame.parallel);
    }
  };
}

// Picks the element-size specialisation.
Kernel ForSize(int size, std::vector<std::pair<Slot, StridedCopy>> copies, Slot out) {
  switch (size) {
    case 1: return CopiesOf<uint8_t>(std::move(copies), out);
    case 2: return CopiesOf<uint16_t>(std::move(copies), out);
    case 4: return CopiesOf<uint32_t>(std::move(copies), out);
    case 8: return CopiesOf<uint64_t>(std::move(copies), out);
    default: return nullptr;
  }
}

}  // namespace

Kernel DataMovementKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (!i.shape.IsArray() || i.operands.empty() || !i.operands[0]->shape.IsArray()) return nullptr;
  const int size = hlo::Info(i.shape.element_type()).byte_size;
  const auto& out_dims = i.shape.dims();
  const auto out_strides = RowMajorStrides(out_dims);
  const auto& in_dims = i.operands[0]->shape.dims();
  const auto in_strides = RowMajorStrides(in_dims);
  StridedCopy c;
  c.dims = out_dims;
  c.dst_strides = out_strides;
  switch (i.opcode) {
    case Opcode::kBroadcast: {
      auto dims = hlo::IntListAttribute(i, "dimensions");
      if (!dims.ok()) return nullptr;
      c.src_strides.assign(out_dims.size(), 0);
      for (size_t k = 0; k < dims->size(); ++k) {
        if (in_dims[k] != 1) c.src_strides[(*dims)[k]] = in_strides[k];
      }
      return ForSize(size, {{in[0], c}}, out);
    }
    case Opcode::kTranspose: {
      auto perm = hlo::IntListAttribute(i, "dimensions");
      if (!perm.ok()) return nullptr;
      c.src_strides.resize(out_dims.size());
      for (size_t d = 0; d < perm->size(); ++d) c.src_strides[d] = in_strides[(*perm)[d]];
      return ForSize(size, {{in[0], c}}, out);
    }
    case Opcode::kSlice: {
      const hlo::Attribute* a = i.FindAttribute("slice");
      auto slice = hlo::ParseSlice(a ? a->value : "");
      if (!slice.ok()) return nullptr;
      c.src_strides.resize(out_dims.size());
      for (size_t d = 0; d < slice->size(); ++d) {
        c.src_strides[d] = in_strides[d] * (*slice)[d].stride;
        c.src_base += in_strides[d] * (*slice)[d].start;
      }
      return ForSize(size, {{in[0], c}}, out);
    }
    case Opcode::kReverse: {
      auto dims = hlo::IntListAttribute(i, "dimensions");
      if (!dims.ok()) return nullptr;
      c.src_strides = in_strides;
      for (int64_t d : *dims) {
        c.src_base += (in_dims[d] - 1) * in_strides[d];
        c.src_strides[d] = -in_strides[d];
      }
      return ForSize(size, {{in[0], c}}, out);
    }
    case Opcode::kConcatenate: {
      auto dims = hlo::IntListAttribute(i, "dimensions");
      if (!dims.ok() || dims->size() != 1) return nullptr;
      const int64_t dim = (*dims)[0];
      std::vector<std::pair<Slot, StridedCopy>> copies;
      int64_t offset = 0;
      for (size_t k = 0; k < i.operands.size(); ++k) {
        StridedCopy part;
        part.dims = i.operands[k]->shape.dims();
        part.src_strides = RowMajorStrides(part.dims);
        part.dst_strides = out_strides;
        part.dst_base = offset * out_strides[dim];
        offset += part.dims[dim];
        copies.emplace_back(in[k], part);
      }
      return ForSize(size, std::move(copies), out);
    }
    default:
      return nullptr;
  }
}

}  // namespace anvil::cpu
