// Kernels that move elements: broadcast, transpose, slice, reverse,
// concatenate, dynamic-slice, dynamic-update-slice; and iota. Each copy
// becomes one or more strided copies whose strides are computed here, at
// compile time; the dynamic ones add a base offset from their start
// indices at run time.
#include <algorithm>
#include <cstring>
#include <limits>

#include "hlo/attributes.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/index_values.h"
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

// A copy that reads its source across rows (a transpose: the source's
// unit-stride dimension `across` is not the innermost one) done row by row
// would touch a new cache line with every element it reads. It runs in
// square tiles instead: kTile rows of the output at a time, each tile's
// kTile source lines read while they are in cache.
template <typename T>
void RunTiledCopy(const StridedCopy& c, int across, const T* src, T* dst, const Parallel& parallel) {
  constexpr int64_t kTile = 32;
  const int rank = static_cast<int>(c.dims.size());
  const int64_t inner = c.dims[rank - 1], tall = c.dims[across];
  const int64_t s_in = c.src_strides[rank - 1], d_in = c.dst_strides[rank - 1];
  const int64_t s_across = c.src_strides[across], d_across = c.dst_strides[across];
  // The other dimensions (neither `across` nor the innermost) index the
  // planes a tile lies in.
  std::vector<int> outer;
  int64_t planes = 1;
  for (int d = 0; d < rank - 1; ++d) {
    if (d != across) {
      outer.push_back(d);
      planes *= c.dims[d];
    }
  }
  const int64_t bands = (tall + kTile - 1) / kTile;
  if (planes == 0 || tall == 0 || inner == 0) return;
  const int64_t grain = std::max<int64_t>(1, (1 << 15) / (kTile * inner));
  parallel.For(planes * bands, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t unit = lo; unit < hi; ++unit) {
      int64_t plane = unit / bands, s = c.src_base, t = c.dst_base;
      for (size_t k = outer.size(); k-- > 0;) {
        const int d = outer[k];
        const int64_t i = plane % c.dims[d];
        plane /= c.dims[d];
        s += i * c.src_strides[d];
        t += i * c.dst_strides[d];
      }
      const int64_t r0 = unit % bands * kTile, r1 = std::min(tall, r0 + kTile);
      for (int64_t k0 = 0; k0 < inner; k0 += kTile) {
        const int64_t k1 = std::min(inner, k0 + kTile);
        for (int64_t r = r0; r < r1; ++r) {
          const T* from = src + s + r * s_across;
          T* to = dst + t + r * d_across;
          for (int64_t k = k0; k < k1; ++k) to[k * d_in] = from[k * s_in];
        }
      }
    }
  });
}

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
  if (s_in != 1 && s_in != 0 && inner >= 8) {
    for (int d = 0; d < rank - 1; ++d) {
      if (c.src_strides[d] == 1 && c.dims[d] >= 8) return RunTiledCopy(c, d, src, dst, parallel);
    }
  }
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

// A broadcast of one element (a splat of any type: a bf16 constant in
// mixed-precision programs) fills its result, where the strided copy would
// walk an index per element (2M bf16: 1.7 -> 0.3 ms).
template <typename T>
Kernel FillOf(Slot from, Slot out, int64_t n) {
  return [=](const Frame& frame) {
    const T value = *static_cast<const T*>(frame.At(from));
    T* y = static_cast<T*>(frame.At(out));
    frame.parallel->For(n, int64_t{1} << 14, [&](int64_t lo, int64_t hi) { std::fill(y + lo, y + hi, value); });
  };
}

Kernel Fill(int size, Slot from, Slot out, int64_t n) {
  switch (size) {
    case 1: return FillOf<uint8_t>(from, out, n);
    case 2: return FillOf<uint16_t>(from, out, n);
    case 4: return FillOf<uint32_t>(from, out, n);
    case 8: return FillOf<uint64_t>(from, out, n);
    default: return nullptr;
  }
}

// Picks the element-size specialisation.
Kernel ForSize(int size, std::vector<std::pair<Slot, StridedCopy>> copies, Slot out) {
  switch (size) {
    case 1: return CopiesOf<uint8_t>(std::move(copies), out);
    case 2: return CopiesOf<uint16_t>(std::move(copies), out);
    case 4: return CopiesOf<uint32_t>(std::move(copies), out);
    case 8: return CopiesOf<uint64_t>(std::move(copies), out);
    case 16: return CopiesOf<Bytes16>(std::move(copies), out);
    default: return nullptr;
  }
}

// The element offset of a dynamic window of `window` in an array of `dims`
// (strides `strides`) from the start index scalars at `starts`, each clamped
// so that the window lies inside, as HLO defines it.
struct DynamicWindow {
  std::vector<Slot> starts;
  std::vector<hlo::ElementType> start_types;
  std::vector<int64_t> dims, window, strides;

  int64_t Offset(const Frame& frame) const {
    int64_t offset = 0;
    for (size_t d = 0; d < starts.size(); ++d) {
      const int64_t start = std::clamp<int64_t>(ReadIndex(frame.At(starts[d]), start_types[d]), 0, dims[d] - window[d]);
      offset += start * strides[d];
    }
    return offset;
  }
};

// Reads the start-index operands from `first` on; false if they are not
// one integer scalar per dimension.
bool ReadDynamicWindow(const hlo::Instruction& i, const std::vector<Slot>& in, size_t first,
                       const std::vector<int64_t>& window, DynamicWindow& w) {
  const auto& dims = i.operands[0]->shape.dims();
  if (i.operands.size() != first + dims.size() || in.size() != i.operands.size() || window.size() != dims.size()) {
    return false;
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    const hlo::Shape& s = i.operands[first + d]->shape;
    if (!s.IsArray() || s.rank() != 0 || !IsIndexType(s.element_type())) return false;
    w.starts.push_back(in[first + d]);
    w.start_types.push_back(s.element_type());
  }
  w.dims = dims;
  w.window = window;
  w.strides = RowMajorStrides(dims);
  return true;
}

template <typename T>
Kernel DynamicSliceOf(DynamicWindow w, StridedCopy c, Slot from, Slot out) {
  return [=](const Frame& frame) {
    StridedCopy copy = c;
    copy.src_base = w.Offset(frame);
    RunCopy<T>(copy, static_cast<const T*>(frame.At(from)), static_cast<T*>(frame.At(out)), *frame.parallel);
  };
}

// dynamic-update-slice: the operand copied to the result (unless they are
// one buffer), then the update written over its clamped window.
template <typename T>
Kernel DynamicUpdateSliceOf(DynamicWindow w, StridedCopy whole, StridedCopy update, Slot operand, Slot patch, Slot out) {
  return [=](const Frame& frame) {
    T* dst = static_cast<T*>(frame.At(out));
    const T* src = static_cast<const T*>(frame.At(operand));
    if (src != dst) RunCopy<T>(whole, src, dst, *frame.parallel);
    StridedCopy copy = update;
    copy.dst_base = w.Offset(frame);
    RunCopy<T>(copy, static_cast<const T*>(frame.At(patch)), dst, *frame.parallel);
  };
}

// pad: the result filled with the padding value, then the operand's
// elements that land inside copied to their places (negative padding
// drops elements, interior padding spreads them).
template <typename T>
Kernel PadOf(StridedCopy c, int64_t count, Slot operand, Slot value, Slot out, bool copies) {
  return [=](const Frame& frame) {
    T* y = static_cast<T*>(frame.At(out));
    const T fill = *static_cast<const T*>(frame.At(value));
    frame.parallel->For(count, 1 << 15, [&](int64_t lo, int64_t hi) { std::fill(y + lo, y + hi, fill); });
    if (copies) RunCopy<T>(c, static_cast<const T*>(frame.At(operand)), y, *frame.parallel);
  };
}

template <template <typename> class Make, typename... Args>
Kernel BySize(int size, Args&&... args) {
  switch (size) {
    case 1: return Make<uint8_t>::Run(std::forward<Args>(args)...);
    case 2: return Make<uint16_t>::Run(std::forward<Args>(args)...);
    case 4: return Make<uint32_t>::Run(std::forward<Args>(args)...);
    case 8: return Make<uint64_t>::Run(std::forward<Args>(args)...);
    case 16: return Make<Bytes16>::Run(std::forward<Args>(args)...);
    default: return nullptr;
  }
}
template <typename T>
struct MakeDynamicSlice {
  template <typename... A>
  static Kernel Run(A&&... a) { return DynamicSliceOf<T>(std::forward<A>(a)...); }
};
template <typename T>
struct MakePad {
  template <typename... A>
  static Kernel Run(A&&... a) { return PadOf<T>(std::forward<A>(a)...); }
};
template <typename T>
struct MakeDynamicUpdateSlice {
  template <typename... A>
  static Kernel Run(A&&... a) { return DynamicUpdateSliceOf<T>(std::forward<A>(a)...); }
};

// iota: element k holds its index along `dim`, (k / stride) % extent,
// converted to T. The value is constant over runs of `stride` elements, so
// it is computed (and converted) once per run, not divided out per element
// (two 64-bit divisions: an s32[8192,1000] iota took 57 ms).
template <typename T>
Kernel IotaOf(int64_t n, int64_t stride, int64_t extent, Slot out) {
  return [=](const Frame& frame) {
    T* y = static_cast<T*>(frame.At(out));
    frame.parallel->For(n, 1 << 15, [&](int64_t lo, int64_t hi) {
      auto convert = [](int64_t v) {
        if constexpr (std::is_same_v<T, Bf16>) {
          return ToBf16(static_cast<float>(v));
        } else if constexpr (std::is_same_v<T, F16>) {
          return ToF16(static_cast<float>(v));
        } else {
          return static_cast<T>(v);
        }
      };
      int64_t v = lo / stride % extent, into_run = lo % stride;
      if (stride == 1) {  // along the innermost dimension: 0, 1, ... extent - 1 again and again
        for (int64_t k = lo; k < hi;) {
          const int64_t count = std::min(hi - k, extent - v);
          for (int64_t j = 0; j < count; ++j) y[k + j] = convert(v + j);
          k += count;
          v = 0;
        }
        return;
      }
      for (int64_t k = lo; k < hi;) {
        const int64_t end = std::min(hi, k + stride - into_run);
        std::fill(y + k, y + end, convert(v));
        k = end;
        into_run = 0;
        if (++v == extent) v = 0;
      }
    });
  };
}

// real, imag and complex: the parts of c64 (two f32) and c128 (two f64)
// elements, moved; real and imag of a real array are the array and zeros.
template <typename F>
Kernel ComplexPartsOf(hlo::Opcode op, const std::vector<Slot>& in, Slot out, int64_t n, bool of_complex) {
  const Slot a = in[0], b = in.size() > 1 ? in[1] : Slot{};
  return [=](const Frame& frame) {
    F* y = static_cast<F*>(frame.At(out));
    const F* x = static_cast<const F*>(frame.At(a));
    frame.parallel->For(n, 1 << 15, [&](int64_t lo, int64_t hi) {
      if (op == hlo::Opcode::kComplex) {
        const F* im = static_cast<const F*>(frame.At(b));
        for (int64_t k = lo; k < hi; ++k) {
          y[2 * k] = x[k];
          y[2 * k + 1] = im[k];
        }
      } else if (!of_complex) {
        for (int64_t k = lo; k < hi; ++k) y[k] = op == hlo::Opcode::kReal ? x[k] : F(0);
      } else {
        const int part = op == hlo::Opcode::kReal ? 0 : 1;
        for (int64_t k = lo; k < hi; ++k) y[k] = x[2 * k + part];
      }
    });
  };
}

}  // namespace

Kernel ComplexPartsKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  using hlo::ElementType;
  if (!i.shape.IsArray() || in.empty()) return nullptr;
  const ElementType from = i.operands[0]->shape.element_type(), to = i.shape.element_type();
  const int64_t n = i.shape.ElementCount();
  if (i.opcode == hlo::Opcode::kComplex) {
    if (in.size() != 2 || i.operands[0]->shape.dims() != i.shape.dims() || i.operands[1]->shape.dims() != i.shape.dims()) {
      return nullptr;  // an implicit broadcast: the evaluator's
    }
    if (to == ElementType::kC64 && from == ElementType::kF32) return ComplexPartsOf<float>(i.opcode, in, out, n, false);
    if (to == ElementType::kC128 && from == ElementType::kF64) return ComplexPartsOf<double>(i.opcode, in, out, n, false);
    return nullptr;
  }
  if (i.opcode != hlo::Opcode::kReal && i.opcode != hlo::Opcode::kImag) return nullptr;
  if (from == ElementType::kC64 && to == ElementType::kF32) return ComplexPartsOf<float>(i.opcode, in, out, n, true);
  if (from == ElementType::kC128 && to == ElementType::kF64) return ComplexPartsOf<double>(i.opcode, in, out, n, true);
  if (from == to && from == ElementType::kF32) return ComplexPartsOf<float>(i.opcode, in, out, n, false);
  if (from == to && from == ElementType::kF64) return ComplexPartsOf<double>(i.opcode, in, out, n, false);
  return nullptr;
}

Kernel IotaKernel(const hlo::Instruction& i, const Slot& out) {
  using hlo::ElementType;
  if (!i.shape.IsArray() || i.shape.rank() == 0) return nullptr;
  auto dim = hlo::IntAttribute(i, "iota_dimension", std::nullopt);
  if (!dim.ok() || *dim < 0 || *dim >= i.shape.rank()) return nullptr;
  const int64_t n = i.shape.ElementCount();
  const int64_t stride = RowMajorStrides(i.shape.dims())[*dim], extent = i.shape.dim(static_cast<int>(*dim));
  if (extent == 0) return [](const Frame&) {};
  switch (i.shape.element_type()) {
    case ElementType::kF32: return IotaOf<float>(n, stride, extent, out);
    case ElementType::kF64: return IotaOf<double>(n, stride, extent, out);
    case ElementType::kBF16: return IotaOf<Bf16>(n, stride, extent, out);
    case ElementType::kF16: return IotaOf<F16>(n, stride, extent, out);
    case ElementType::kS8: return IotaOf<int8_t>(n, stride, extent, out);
    case ElementType::kS16: return IotaOf<int16_t>(n, stride, extent, out);
    case ElementType::kS32: return IotaOf<int32_t>(n, stride, extent, out);
    case ElementType::kS64: return IotaOf<int64_t>(n, stride, extent, out);
    case ElementType::kU8: return IotaOf<uint8_t>(n, stride, extent, out);
    case ElementType::kU16: return IotaOf<uint16_t>(n, stride, extent, out);
    case ElementType::kU32: return IotaOf<uint32_t>(n, stride, extent, out);
    case ElementType::kU64: return IotaOf<uint64_t>(n, stride, extent, out);
    default: return nullptr;  // pred, sub-byte and complex iotas: the evaluator's
  }
}

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
    case Opcode::kCopy:
      // Of any element type (f32 and the integers also have elementwise
      // copies): arrays are row-major whatever layout the HLO names, so a
      // copy, layout change or not, moves the bytes as they are.
      if (in_dims != out_dims || i.operands[0]->shape.element_type() != i.shape.element_type()) return nullptr;
      return [from = in[0], out, bytes = static_cast<size_t>(i.shape.ByteSize())](const Frame& frame) {
        if (bytes) std::memcpy(frame.At(out), frame.At(from), bytes);
      };
    case Opcode::kBroadcast: {
      if (i.operands[0]->shape.ElementCount() == 1) {
        if (Kernel fill = Fill(size, in[0], out, i.shape.ElementCount())) return fill;
      }
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
    case Opcode::kPad: {
      const hlo::Attribute* a = i.FindAttribute("padding");
      auto pads = hlo::ParsePadding(a ? a->value : "");
      if (!pads.ok() || pads->size() != in_dims.size() || in.size() != 2) return nullptr;
      c.dims.clear();
      c.src_strides.clear();
      c.dst_strides.clear();
      bool copies = true;
      for (size_t d = 0; d < in_dims.size(); ++d) {
        const hlo::PadDim& p = (*pads)[d];
        const int64_t step = p.interior + 1;
        // Input elements i with 0 <= low + i * step < out: i in [first, last].
        const int64_t first = p.low >= 0 ? 0 : (-p.low + step - 1) / step;
        const int64_t room = out_dims[d] - 1 - p.low;
        const int64_t last = std::min(in_dims[d] - 1, room < 0 ? -1 : room / step);
        const int64_t n = std::max<int64_t>(0, last - first + 1);
        copies &= n > 0;
        c.dims.push_back(n);
        c.src_strides.push_back(in_strides[d]);
        c.dst_strides.push_back(out_strides[d] * step);
        c.src_base += first * in_strides[d];
        c.dst_base += (p.low + first * step) * out_strides[d];
      }
      return BySize<MakePad>(size, c, i.shape.ElementCount(), in[0], in[1], out, copies);
    }
    case Opcode::kDynamicSlice: {
      DynamicWindow w;
      if (!ReadDynamicWindow(i, in, 1, out_dims, w)) return nullptr;
      c.src_strides = in_strides;
      return BySize<MakeDynamicSlice>(size, w, c, in[0], out);
    }
    case Opcode::kDynamicUpdateSlice: {
      if (i.operands.size() < 2 || !i.operands[1]->shape.IsArray()) return nullptr;
      const auto& update_dims = i.operands[1]->shape.dims();
      DynamicWindow w;
      if (!ReadDynamicWindow(i, in, 2, update_dims, w)) return nullptr;
      c.src_strides = out_strides;  // the whole operand, element for element
      StridedCopy update;
      update.dims = update_dims;
      update.src_strides = RowMajorStrides(update_dims);
      update.dst_strides = out_strides;
      return BySize<MakeDynamicUpdateSlice>(size, w, c, update, in[0], in[1], out);
    }
    default:
      return nullptr;
  }
}

}  // namespace anvil::cpu
