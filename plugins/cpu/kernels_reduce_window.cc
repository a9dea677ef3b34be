// reduce-window of one operand whose body is one op (reducers.h). A window
// as long as its dimension, padded so that output o covers inputs 0..o (the
// cumulative sums, products and extrema JAX lowers cumsum and friends to)
// runs as a scan: the same combines in the same order as the window walk,
// so bit for bit the same, in O(n) rather than O(n^2). Otherwise, for each
// dimension a table, made at compile time, gives the input index that output
// position o reads through window tap w, or -1 where the tap falls in the
// padding or between base-dilated elements; executing walks the taps of each
// output element in row-major window order from the init value, as the
// evaluator does, so results agree bit for bit. Outputs split across threads.
#include <numeric>
#include <optional>

#include "hlo/attributes.h"
#include "hlo/patterns.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/reducers.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;

struct WindowTables {
  std::vector<int64_t> out_dims, taps, in_strides;
  // tap_input[d][o * taps[d] + w]: input index along d, or -1.
  std::vector<std::vector<int64_t>> tap_input;
};

// Walks output elements in row-major order with an odometer. Dimensions
// whose window is one element wide (a pooling window's batch and channels)
// only move the base offset; the taps of the others ("windowed", in their
// order, so that the walk stays row-major) are enumerated with the last
// windowed dimension's taps as the innermost loop.
template <typename T, typename Combine>
Kernel ReduceWindowOf(std::shared_ptr<const WindowTables> t, Slot in, Slot init, Slot out, Combine combine) {
  std::vector<size_t> windowed;
  for (size_t d = 0; d < t->taps.size(); ++d) {
    if (t->taps[d] > 1) windowed.push_back(d);
  }
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(in));
    const T start = *static_cast<const T*>(frame.At(init));
    T* y = static_cast<T*>(frame.At(out));
    const size_t rank = t->out_dims.size(), wrank = windowed.size();
    const int64_t outputs = std::accumulate(t->out_dims.begin(), t->out_dims.end(), int64_t{1}, std::multiplies<>());
    const int64_t window = std::accumulate(t->taps.begin(), t->taps.end(), int64_t{1}, std::multiplies<>());
    const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, window));
    frame.parallel->For(outputs, grain, [&](int64_t lo, int64_t hi) {
      std::vector<int64_t> o(rank), w(wrank), partial(wrank + 1);
      std::vector<const int64_t*> row(rank);  // each dimension's taps for its output position
      int64_t rest = lo;
      for (size_t d = rank; d-- > 0;) {
        o[d] = rest % t->out_dims[d];
        rest /= t->out_dims[d];
      }
      for (int64_t k = lo; k < hi; ++k) {
        int64_t base = 0;
        bool inside = true;
        for (size_t d = 0; d < rank; ++d) {
          row[d] = t->tap_input[d].data() + o[d] * t->taps[d];
          if (t->taps[d] == 1) {
            inside &= row[d][0] >= 0;
            base += row[d][0] * t->in_strides[d];
          }
        }
        T acc = start;
        if (inside && wrank == 0) {
          acc = combine(acc, x[base]);
        } else if (inside) {
          // partial[j]: the offset of the windowed dimensions before j at
          // their current taps, or -1 when one of them is in a hole.
          std::fill(w.begin(), w.end(), 0);
          partial[0] = base;
          for (size_t j = 0; j + 1 < wrank; ++j) {
            const int64_t p = row[windowed[j]][0];
            partial[j + 1] = partial[j] < 0 || p < 0 ? -1 : partial[j] + p * t->in_strides[windowed[j]];
          }
          const size_t last = windowed[wrank - 1];
          const int64_t* last_row = row[last];
          const int64_t last_taps = t->taps[last], last_stride = t->in_strides[last];
          for (;;) {
            if (partial[wrank - 1] >= 0) {
              const T* line = x + partial[wrank - 1];
              for (int64_t tap = 0; tap < last_taps; ++tap) {
                if (last_row[tap] >= 0) acc = combine(acc, line[last_row[tap] * last_stride]);
              }
            }
            // The next taps of the outer windowed dimensions.
            size_t j = wrank - 1;
            while (j-- > 0) {
              if (++w[j] < t->taps[windowed[j]]) break;
              w[j] = 0;
            }
            if (j == static_cast<size_t>(-1)) break;
            for (size_t i = j; i + 1 < wrank; ++i) {
              const int64_t p = row[windowed[i]][w[i]];
              partial[i + 1] = partial[i] < 0 || p < 0 ? -1 : partial[i] + p * t->in_strides[windowed[i]];
            }
          }
        }
        y[k] = acc;
        for (size_t d = rank; d-- > 0;) {
          if (++o[d] < t->out_dims[d]) break;
          o[d] = 0;
        }
      }
    });
  };
}

// A prefix window along one dimension: `lines` rows of `length` elements
// `stride` apart (outer * length * inner, in row-major terms).
struct Scan {
  int64_t outer = 1, length = 1, inner = 1;
};

// Output o along the scanned dimension combines inputs 0..o, in order.
template <typename T, typename Combine>
Kernel ScanOf(Scan s, Slot in, Slot init, Slot out, Combine combine) {
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(in));
    const T start = *static_cast<const T*>(frame.At(init));
    T* y = static_cast<T*>(frame.At(out));
    const int64_t lines = s.outer * s.inner;
    const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, s.length));
    frame.parallel->For(lines, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t line = lo; line < hi; ++line) {
        const int64_t base = (line / s.inner) * s.length * s.inner + line % s.inner;
        T acc = start;
        for (int64_t o = 0; o < s.length; ++o) {
          acc = combine(acc, x[base + o * s.inner]);
          y[base + o * s.inner] = acc;
        }
      }
    });
  };
}

// The scan a window describes, if it is a prefix window along exactly one
// dimension (size n = the dimension, padded n-1 below and 0 above, stride 1,
// no dilation) with windows of one element everywhere else.
std::optional<Scan> PrefixScan(const std::vector<hlo::WindowDim>& window, const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& out_dims) {
  if (dims != out_dims) return std::nullopt;
  std::optional<size_t> axis;
  for (size_t d = 0; d < window.size(); ++d) {
    const hlo::WindowDim& w = window[d];
    if (w.stride != 1 || w.base_dilation != 1 || w.window_dilation != 1 || w.reversal) return std::nullopt;
    if (w.size == 1 && w.pad_low == 0 && w.pad_high == 0) continue;
    if (axis || dims[d] < 2 || w.size != dims[d] || w.pad_low != dims[d] - 1 || w.pad_high != 0) return std::nullopt;
    axis = d;
  }
  if (!axis) return std::nullopt;
  Scan s;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d < *axis) s.outer *= dims[d];
    if (d > *axis) s.inner *= dims[d];
  }
  s.length = dims[*axis];
  return s;
}

template <typename T>
Kernel Typed(hlo::Opcode op, std::shared_ptr<const WindowTables> t, const std::optional<Scan>& scan,
             const std::vector<Slot>& in, const Slot& out) {
  Kernel kernel;
  reducer::Visit<T>(op, [&](auto combine) {
    kernel = scan ? ScanOf<T>(*scan, in[0], in[1], out, combine) : ReduceWindowOf<T>(t, in[0], in[1], out, combine);
  });
  return kernel;
}

// bf16 and f16 windows round every step (in f32, once), as the evaluator does.
template <typename N>
Kernel Narrow(hlo::Opcode op, std::shared_ptr<const WindowTables> t, const std::optional<Scan>& scan,
              const std::vector<Slot>& in, const Slot& out) {
  Kernel kernel;
  reducer::Visit<float>(op, [&](auto f) {
    kernel = scan ? ScanOf<N>(*scan, in[0], in[1], out, ThroughFloat<N>(f))
                  : ReduceWindowOf<N>(t, in[0], in[1], out, ThroughFloat<N>(f));
  });
  return kernel;
}

}  // namespace

std::optional<WindowTaps> MakeWindowTaps(const std::vector<hlo::WindowDim>& window, const std::vector<int64_t>& in_dims,
                                         const std::vector<int64_t>& out_dims) {
  WindowTaps t;
  int64_t table_size = 0;
  for (size_t d = 0; d < in_dims.size(); ++d) {
    const hlo::WindowDim& wd = window[d];
    table_size += out_dims[d] * wd.size;
    if (table_size > (int64_t{1} << 26)) return std::nullopt;
    t.taps.push_back(wd.size);
    std::vector<int64_t> table(static_cast<size_t>(out_dims[d] * wd.size));
    for (int64_t o = 0; o < out_dims[d]; ++o) {
      for (int64_t w = 0; w < wd.size; ++w) {
        // The position in the padded, base-dilated input.
        const int64_t p = o * wd.stride + w * wd.window_dilation - wd.pad_low;
        const bool hole = p < 0 || p % wd.base_dilation != 0 || p / wd.base_dilation >= in_dims[d];
        table[static_cast<size_t>(o * wd.size + w)] = hole ? -1 : p / wd.base_dilation;
      }
    }
    t.tap_input.push_back(std::move(table));
  }
  return t;
}

Kernel ReduceWindowKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.operands.size() != 2 || in.size() != 2 || !i.shape.IsArray() || i.called_computations.size() != 1) return nullptr;
  const std::optional<hlo::Opcode> op = hlo::SingleOpReducer(*i.called_computations[0]);
  if (!op) return nullptr;
  const hlo::Attribute* a = i.FindAttribute("window");
  auto window = hlo::ParseWindow(a ? a->value : "");
  const auto& in_dims = i.operands[0]->shape.dims();
  if (!window.ok() || window->size() != in_dims.size()) return nullptr;
  const std::optional<Scan> scan = PrefixScan(*window, in_dims, i.shape.dims());
  auto t = std::make_shared<WindowTables>();
  t->out_dims = i.shape.dims();
  t->in_strides = RowMajorStrides(in_dims);
  if (!scan) {
    std::optional<WindowTaps> taps = MakeWindowTaps(*window, in_dims, t->out_dims);
    if (!taps) return nullptr;  // a window table that large: the evaluator's
    t->taps = std::move(taps->taps);
    t->tap_input = std::move(taps->tap_input);
  }
  switch (i.shape.element_type()) {
    case ElementType::kBF16: return Narrow<Bf16>(*op, t, scan, in, out);
    case ElementType::kF16: return Narrow<F16>(*op, t, scan, in, out);
    default:  // complex: the evaluator's
      return reducer::ForNativeType<Kernel>(i.shape.element_type(),
                                            [&]<typename T>() { return Typed<T>(*op, t, scan, in, out); });
  }
}

}  // namespace anvil::cpu
