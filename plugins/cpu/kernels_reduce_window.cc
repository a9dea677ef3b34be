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
#include <algorithm>
#include <numeric>
#include <optional>
#include <tuple>

#include "hlo/attributes.h"
#include "hlo/element_type.h"
#include "hlo/patterns.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/combine_run.h"
#include "plugins/cpu/isa.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/reducers.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;

struct WindowTables {
  std::vector<int64_t> out_dims, taps, in_strides;
  // tap_input[d][o * taps[d] + w]: input index along d, or -1.
  std::vector<std::vector<int64_t>> tap_input;
  WindowInterior last;  // the last dimension's interior
};

// Output rows (every output dimension but the last fixed) are split across
// threads, and each row's outputs advance side by side, in blocks of up to
// kRowBlock: for each tap of the other windowed dimensions, in row-major
// order, then each tap of the last dimension, in order, every output of the
// block combines its input, so each output still walks its taps in the
// evaluator's order and the bits are the evaluator's. Inside the last
// dimension's interior the inputs of one tap are a strided run, a loop the
// compiler vectorises; at its edges (padding, base dilation) the tap table
// says where each output reads. Dimensions whose window is one element wide
// (a pooling window's batch and channels) only move a row's base offset.
// (A 3x3 stride-2 max pool of f32[32,64,112,112]: one output at a time
// through the tables, 350 ms; by rows, see docs/architecture.md.)
constexpr int64_t kRowBlock = 256;

template <typename T, typename Combine>
Kernel ReduceWindowOf(std::shared_ptr<const WindowTables> t, Slot in, Slot init, Slot out, Combine combine) {
  const size_t rank = t->out_dims.size();
  if (rank == 0) {
    return [=](const Frame& frame) {
      *static_cast<T*>(frame.At(out)) =
          combine(*static_cast<const T*>(frame.At(init)), *static_cast<const T*>(frame.At(in)));
    };
  }
  const size_t last = rank - 1;
  std::vector<size_t> outer_windowed;  // windowed dimensions before the last
  for (size_t d = 0; d < last; ++d) {
    if (t->taps[d] > 1) outer_windowed.push_back(d);
  }
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(in));
    const T start = *static_cast<const T*>(frame.At(init));
    T* y = static_cast<T*>(frame.At(out));
    const int64_t length = t->out_dims[last];
    int64_t rows = 1;
    for (size_t d = 0; d < last; ++d) rows *= t->out_dims[d];
    if (length == 0 || rows == 0) return;
    const int64_t window = std::accumulate(t->taps.begin(), t->taps.end(), int64_t{1}, std::multiplies<>());
    const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, window * length));
    const int64_t last_taps = t->taps[last], last_in_stride = t->in_strides[last];
    const int64_t* last_table = t->tap_input[last].data();
    const Isa isa = HostIsa();
    frame.parallel->For(rows, grain, [&](int64_t lo, int64_t hi) {
      const size_t wrank = outer_windowed.size();
      std::vector<int64_t> o(last), w(wrank), partial(wrank + 1), lines;
      T acc[kRowBlock];
      int64_t rest = lo;
      for (size_t d = last; d-- > 0;) {
        o[d] = rest % t->out_dims[d];
        rest /= t->out_dims[d];
      }
      // acc[0, n) for outputs j0 .. j0 + n - 1 of the row whose input lines
      // (the other windowed dimensions' taps) start at `lines`.
      auto block = [&](int64_t j0, int64_t n, bool interior) {
        std::fill(acc, acc + n, start);
        for (int64_t line_offset : lines) {
          const T* line = x + line_offset;
          if (interior) {
            const int64_t step = t->last.stride * last_in_stride;
            for (int64_t tap = 0; tap < last_taps; ++tap) {
              const T* p = line + (j0 * t->last.stride + t->last.tap_offsets[tap]) * last_in_stride;
              CombineRun(isa, acc, p, n, step, combine);
            }
          } else {
            for (int64_t j = 0; j < n; ++j) {
              const int64_t* taps = last_table + (j0 + j) * last_taps;
              for (int64_t tap = 0; tap < last_taps; ++tap) {
                if (taps[tap] >= 0) acc[j] = combine(acc[j], line[taps[tap] * last_in_stride]);
              }
            }
          }
        }
      };
      for (int64_t r = lo; r < hi; ++r) {
        T* y_row = y + r * length;
        int64_t base = 0;
        bool inside = true;
        for (size_t d = 0; d < last; ++d) {
          if (t->taps[d] == 1) {
            const int64_t p = t->tap_input[d][o[d]];
            inside &= p >= 0;
            base += p * t->in_strides[d];
          }
        }
        lines.clear();
        if (inside) {
          // The other windowed dimensions' taps in row-major order; a tap in
          // a hole reads nothing.
          std::fill(w.begin(), w.end(), 0);
          partial[0] = base;
          for (size_t j = 0;; ) {
            for (; j < wrank; ++j) {
              const size_t d = outer_windowed[j];
              const int64_t p = t->tap_input[d][o[d] * t->taps[d] + w[j]];
              partial[j + 1] = partial[j] < 0 || p < 0 ? -1 : partial[j] + p * t->in_strides[d];
            }
            if (partial[wrank] >= 0) lines.push_back(partial[wrank]);
            while (j-- > 0) {
              if (++w[j] < t->taps[outer_windowed[j]]) break;
              w[j] = 0;
            }
            if (j == static_cast<size_t>(-1)) break;
          }
        }
        // The row's edges through the tap table, its interior as strided runs.
        const int64_t begin = std::min(t->last.begin, length), end = std::max(begin, std::min(t->last.end, length));
        for (const auto& [from, to, interior] : {std::tuple{int64_t{0}, begin, false}, std::tuple{begin, end, true},
                                                 std::tuple{end, length, false}}) {
          for (int64_t j0 = from; j0 < to; j0 += kRowBlock) {
            const int64_t n = std::min(kRowBlock, to - j0);
            block(j0, n, interior);
            std::copy(acc, acc + n, y_row + j0);
          }
        }
        for (size_t d = last; d-- > 0;) {
          if (++o[d] < t->out_dims[d]) break;
          o[d] = 0;
        }
      }
    });
  };
}

// Output o along the scanned dimension combines inputs 0..o, in order.
// Where the scanned dimension is not the innermost (cumsum along axis 0),
// a block of neighbouring lines advances together, one step of each per
// pass along the block's contiguous elements: a vector loop, each output
// still combined in its line's order (so the same bits), where a line at
// a time read one element per cache line and waited on each combine
// (cumsum of f32[2048,1024] along axis 0: 22 ms).
template <typename T, typename Combine>
Kernel ScanOf(Scan s, Slot in, Slot init, Slot out, Combine combine) {
  constexpr int64_t kBlock = 256;
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(in));
    const T start = *static_cast<const T*>(frame.At(init));
    T* y = static_cast<T*>(frame.At(out));
    if (s.inner > 1) {
      const int64_t blocks_per_outer = (s.inner + kBlock - 1) / kBlock;
      const int64_t grain = std::max<int64_t>(1, (1 << 14) / (s.length * std::min(kBlock, s.inner)));
      frame.parallel->For(s.outer * blocks_per_outer, grain, [&](int64_t lo, int64_t hi) {
        T acc[kBlock];
        for (int64_t unit = lo; unit < hi; ++unit) {
          const int64_t first = unit % blocks_per_outer * kBlock, count = std::min(kBlock, s.inner - first);
          const int64_t base = unit / blocks_per_outer * s.length * s.inner + first;
          std::fill(acc, acc + count, start);
          for (int64_t o = 0; o < s.length; ++o) {
            const T* row = x + base + o * s.inner;
            T* to = y + base + o * s.inner;
            for (int64_t j = 0; j < count; ++j) {
              acc[j] = combine(acc[j], row[j]);
              to[j] = acc[j];
            }
          }
        }
      });
      return;
    }
    const int64_t lines = s.lines();
    const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, s.length));
    frame.parallel->For(lines, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t line = lo; line < hi; ++line) {
        const int64_t base = s.LineStart(line);
        T acc = start;
        for (int64_t o = 0; o < s.length; ++o) {
          acc = combine(acc, x[base + o * s.inner]);
          y[base + o * s.inner] = acc;
        }
      }
    });
  };
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

// Each line of a scan on its own: acc = begin(init), then for each
// position in order (from the line's end where `from_end`) acc = step(acc,
// x) and the output there is emit(acc). The scans that carry a wider
// value than they store (narrow sums in double) or run backwards (suffix
// windows) take it; ScanOf's blocked lines serve the rest.
template <typename T, typename Acc, typename Begin, typename Step, typename Emit>
Kernel LineScanOf(Scan s, bool from_end, Slot in, Slot init, Slot out, Begin begin, Step step, Emit emit) {
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(in));
    const Acc start = begin(*static_cast<const T*>(frame.At(init)));
    T* y = static_cast<T*>(frame.At(out));
    const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, s.length));
    frame.parallel->For(s.lines(), grain, [&](int64_t lo, int64_t hi) {
      for (int64_t line = lo; line < hi; ++line) {
        const int64_t base = s.LineStart(line);
        Acc acc = start;
        for (int64_t k = 0; k < s.length; ++k) {
          const int64_t at = base + (from_end ? s.length - 1 - k : k) * s.inner;
          acc = step(acc, x[at]);
          y[at] = emit(acc);
        }
      }
    });
  };
}

// bf16 and f16 sums carry a double and round once, as the evaluator's do
// (and XLA's CPU backend, which computes these types in f32): JAX's bf16
// cumsum, a prefix window, rounded at every step stopped growing at 128 in
// a sum of 300 halves. Each output walks its taps in the evaluator's order
// (row-major in the window), so the bits are the evaluator's; a scan
// carries one sum along each line.
template <typename N>
Kernel NarrowSum(hlo::ElementType type, std::shared_ptr<const WindowTables> t, const std::optional<Scan>& scan,
                 const std::vector<Slot>& in, const Slot& out) {
  const hlo::FloatFormat format = *hlo::Info(type).float_format;
  auto narrow = [format](double v) { return N{static_cast<uint16_t>(hlo::EncodeFloat(format, v))}; };
  const Slot x_slot = in[0], init_slot = in[1];
  if (scan) {
    return LineScanOf<N, double>(
        *scan, /*from_end=*/false, x_slot, init_slot, out, [](N v) { return static_cast<double>(ToFloat(v)); },
        [](double acc, N v) { return acc + static_cast<double>(ToFloat(v)); }, narrow);
  }
  return [=](const Frame& frame) {
    const N* x = static_cast<const N*>(frame.At(x_slot));
    const double start = ToFloat(*static_cast<const N*>(frame.At(init_slot)));
    N* y = static_cast<N*>(frame.At(out));
    const size_t rank = t->out_dims.size();
    int64_t outputs = 1, window = 1;
    for (size_t d = 0; d < rank; ++d) {
      outputs *= t->out_dims[d];
      window *= t->taps[d];
    }
    const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, window));
    frame.parallel->For(outputs, grain, [&](int64_t lo, int64_t hi) {
      std::vector<int64_t> o(rank), w(rank);
      for (int64_t k = lo; k < hi; ++k) {
        for (size_t d = rank, rest = static_cast<size_t>(k); d-- > 0;) {
          o[d] = static_cast<int64_t>(rest % static_cast<size_t>(t->out_dims[d]));
          rest /= static_cast<size_t>(t->out_dims[d]);
        }
        double acc = start;
        std::fill(w.begin(), w.end(), 0);
        for (int64_t tap = 0; tap < window; ++tap) {
          int64_t at = 0;
          bool inside = true;
          for (size_t d = 0; d < rank && inside; ++d) {
            const int64_t p = t->tap_input[d][static_cast<size_t>(o[d] * t->taps[d] + w[d])];
            inside = p >= 0;
            at += p * t->in_strides[d];
          }
          if (inside) acc += ToFloat(x[at]);
          for (size_t d = rank; d-- > 0;) {
            if (++w[d] < t->taps[d]) break;
            w[d] = 0;
          }
        }
        y[k] = narrow(acc);
      }
    });
  };
}

// Other bf16 and f16 windows round every step (in f32, once), as the
// evaluator does.
template <typename N>
Kernel Narrow(hlo::Opcode op, std::shared_ptr<const WindowTables> t, const std::optional<Scan>& scan,
              const std::vector<Slot>& in, const Slot& out) {
  if (op == hlo::Opcode::kAdd) {
    return NarrowSum<N>(std::is_same_v<N, Bf16> ? ElementType::kBF16 : ElementType::kF16, t, scan, in, out);
  }
  Kernel kernel;
  reducer::Visit<float>(op, [&](auto f) {
    kernel = scan ? ScanOf<N>(*scan, in[0], in[1], out, ThroughFloat<N>(f))
                  : ReduceWindowOf<N>(t, in[0], in[1], out, ThroughFloat<N>(f));
  });
  return kernel;
}

// A suffix window (hlo::SuffixScan: JAX's cumsum and cummax with
// reverse=True) scanned from each line's end: output o is the init combined
// with inputs o..n-1. For a body exactly associative and commutative (max,
// min, and, or; integer add and multiply, which wrap) that is the window
// walk's bits in any order. Float sums and products carry a double from
// the end and round once per output (bf16 and f16 as their prefix sums do),
// which the walk, rounding each step in order, only approaches: the one
// place these kernels leave the evaluator's bits, within its rounding
// error, since no scan gives them. The walk took O(n^2): JAX's reverse
// cummax of f32[3, 8193] 48 s.
template <typename N>
Kernel NarrowSuffixScan(hlo::Opcode op, hlo::ElementType type, const Scan& s, const std::vector<Slot>& in,
                        const Slot& out) {
  const auto widen = [](N v) { return ToFloat(v); };
  if (op == hlo::Opcode::kMaximum || op == hlo::Opcode::kMinimum) {
    Kernel kernel;
    reducer::Visit<float>(op, [&](auto f) {
      kernel = LineScanOf<N, N>(s, /*from_end=*/true, in[0], in[1], out, [](N v) { return v; }, ThroughFloat<N>(f),
                                  [](N v) { return v; });
    });
    return kernel;
  }
  if (op != hlo::Opcode::kAdd) return nullptr;
  const hlo::FloatFormat format = *hlo::Info(type).float_format;
  return LineScanOf<N, double>(
      s, /*from_end=*/true, in[0], in[1], out, [widen](N v) { return static_cast<double>(widen(v)); },
      [widen](double acc, N v) { return acc + static_cast<double>(widen(v)); },
      [format](double acc) { return N{static_cast<uint16_t>(hlo::EncodeFloat(format, acc))}; });
}

// The suffix scan of `op` on `type`, or null where no scan gives the walk's
// answer (a float body other than a sum, product, maximum or minimum).
Kernel SuffixScanKernel(hlo::Opcode op, hlo::ElementType type, const Scan& s, const std::vector<Slot>& in,
                        const Slot& out) {
  using hlo::Opcode;
  if (type == ElementType::kBF16) return NarrowSuffixScan<Bf16>(op, type, s, in, out);
  if (type == ElementType::kF16) return NarrowSuffixScan<F16>(op, type, s, in, out);
  return reducer::ForNativeType<Kernel>(type, [&]<typename T>() -> Kernel {
    const bool sum_or_product = op == Opcode::kAdd || op == Opcode::kMultiply;
    if constexpr (std::is_floating_point_v<T>) {
      if (sum_or_product) {
        const bool sum = op == Opcode::kAdd;
        return LineScanOf<T, double>(
            s, /*from_end=*/true, in[0], in[1], out, [](T v) { return static_cast<double>(v); },
            [sum](double acc, T v) { return sum ? acc + static_cast<double>(v) : acc * static_cast<double>(v); },
            [](double acc) { return static_cast<T>(acc); });
      }
    }
    Kernel kernel;
    reducer::Visit<T>(op, [&](auto combine) {
      kernel = LineScanOf<T, T>(s, /*from_end=*/true, in[0], in[1], out, [](T v) { return v; }, combine, [](T v) { return v; });
    });
    return kernel;
  });
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

WindowInterior InteriorOf(const hlo::WindowDim& window, const std::vector<int64_t>& table, int64_t taps,
                          int64_t positions) {
  WindowInterior interior;
  interior.stride = window.stride;
  for (int64_t w = 0; w < taps; ++w) interior.tap_offsets.push_back(w * window.window_dilation - window.pad_low);
  if (window.base_dilation != 1) return interior;
  auto all_inside = [&](int64_t o) {
    for (int64_t w = 0; w < taps; ++w) {
      if (table[static_cast<size_t>(o * taps + w)] < 0) return false;
    }
    return true;
  };
  while (interior.begin < positions && !all_inside(interior.begin)) ++interior.begin;
  interior.end = interior.begin;
  while (interior.end < positions && all_inside(interior.end)) ++interior.end;
  return interior;
}

Kernel ReduceWindowKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.operands.size() != 2 || in.size() != 2 || !i.shape.IsArray() || i.called_computations.size() != 1) return nullptr;
  const std::optional<hlo::Opcode> op = hlo::SingleOpReducer(*i.called_computations[0]);
  if (!op) return nullptr;
  const hlo::Attribute* a = i.FindAttribute("window");
  auto window = hlo::ParseWindow(a ? a->value : "");
  const auto& in_dims = i.operands[0]->shape.dims();
  if (!window.ok() || window->size() != in_dims.size()) return nullptr;
  const std::optional<Scan> scan = hlo::PrefixScan(*window, in_dims, i.shape.dims());
  if (const std::optional<Scan> suffix = hlo::SuffixScan(*window, in_dims, i.shape.dims())) {
    if (Kernel kernel = SuffixScanKernel(*op, i.shape.element_type(), *suffix, in, out)) return kernel;
  }
  auto t = std::make_shared<WindowTables>();
  t->out_dims = i.shape.dims();
  t->in_strides = RowMajorStrides(in_dims);
  if (!scan) {
    std::optional<WindowTaps> taps = MakeWindowTaps(*window, in_dims, t->out_dims);
    if (!taps) return nullptr;  // a window table that large: the evaluator's
    t->taps = std::move(taps->taps);
    t->tap_input = std::move(taps->tap_input);
    if (!t->out_dims.empty()) {
      t->last = InteriorOf(window->back(), t->tap_input.back(), t->taps.back(), t->out_dims.back());
    }
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
