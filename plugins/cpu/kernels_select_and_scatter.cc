// select-and-scatter (the gradient of max pooling) whose select is one
// compare of its two parameters and whose scatter is one op (reducers.h).
// For each source element, the window it came from is walked in row-major
// order: the first element inside the operand is selected, and each later
// one replaces it unless select(selected, candidate) holds; the source value
// is then combined into the result at the selected place. The result starts
// as the init value everywhere. The order is the evaluator's, so the two
// agree bit for bit.
//
// Windows overlap only along dimensions whose window is wider than one: two
// sources that differ along a one-wide dimension (a pool's batch and
// channels) select in different places. So the sources are split into
// groups by their position along the one-wide dimensions, groups run on
// different threads, and each group walks its sources in row-major order,
// which is the evaluator's order for every place it writes. Taps are read
// from per-dimension tables made at compile time (MakeWindowTaps). (The
// gradient of a 3x3 stride-2 max pool of f32[32,64,112,112]: one thread,
// every tap's index computed, 737 ms; see docs/architecture.md.)
#include <algorithm>

#include "hlo/attributes.h"
#include "hlo/patterns.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/isa.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/reducers.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;
using hlo::Opcode;

struct Windows {
  std::vector<int64_t> operand_strides, source_dims, source_strides;
  // Per dimension: the operand index that source position o reads through
  // tap w, tap_input[d][o * taps[d] + w], or -1 outside the operand.
  std::vector<int64_t> taps;
  std::vector<std::vector<int64_t>> tap_input;
  std::vector<size_t> grouped, windowed;  // one-wide dimensions, and the others
  // tap_offset[j]: windowed dimension j's tap_input times its operand stride
  // (-1 stays -1).
  std::vector<std::vector<int64_t>> tap_offset;
  WindowInterior interior;  // the last windowed dimension's
  // The elements a group can write, when the groups tile the result: every
  // one-wide dimension maps source position o to operand position o, and
  // the windowed dimensions are the last ones, so each group's elements
  // are one run of this many, starting at its base. The group then fills
  // its run with the init value just before it scatters into it, while the
  // run is in cache, instead of a pass over the whole result first (the
  // gradient of a 3x3 stride-2 pool of f32[32,64,112,112], whose 103 MB
  // result is then written once: 48.7 -> 46 ms on a machine whose 260 MB
  // L3 held the filled result anyway).
  int64_t group_run = 0;
};

// Selections of n consecutive sources along the last windowed dimension,
// side by side, through one tap whose inputs are a strided run: candidate j
// is x[at + j * step]. `first`: the tap is every source's first inside the
// operand, so it is taken. Each lane is one source's choice, so the order
// of each source's taps stays the evaluator's; compiled again for AVX2 and
// AVX-512, where the lanes are vector lanes.
template <typename T, typename Keep>
[[gnu::always_inline]] inline void SelectRunStrided(T* best, int64_t* selected, const T* x, int64_t at, int64_t n,
                                                    int64_t step, bool first, Keep keep) {
  if (first) {
    for (int64_t j = 0; j < n; ++j) {
      best[j] = x[at + j * step];
      selected[j] = at + j * step;
    }
    return;
  }
  for (int64_t j = 0; j < n; ++j) {
    const T v = x[at + j * step];
    const bool take = !keep(best[j], v);
    best[j] = take ? v : best[j];
    selected[j] = take ? at + j * step : selected[j];
  }
}

// With the stride a constant where it is 1 or 2 (a stride-2 pool's): the
// loads are then whole vectors, or pairs of them with a permute, where a
// stride known only at run time is read as a gather (the pool gradient
// above: 46 -> 33 ms, eager PyTorch's 32.7 ms).
template <typename T, typename Keep>
[[gnu::always_inline]] inline void SelectRunLoop(T* best, int64_t* selected, const T* x, int64_t at, int64_t n,
                                                 int64_t step, bool first, Keep keep) {
  if (step == 1) return SelectRunStrided(best, selected, x, at, n, 1, first, keep);
  if (step == 2) return SelectRunStrided(best, selected, x, at, n, 2, first, keep);
  SelectRunStrided(best, selected, x, at, n, step, first, keep);
}

template <typename T, typename Keep>
void SelectRunBaseline(T* best, int64_t* selected, const T* x, int64_t at, int64_t n, int64_t step, bool first,
                       Keep keep) {
  SelectRunLoop(best, selected, x, at, n, step, first, keep);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <typename T, typename Keep>
__attribute__((target("avx2"))) void SelectRunAvx2(T* best, int64_t* selected, const T* x, int64_t at, int64_t n,
                                                   int64_t step, bool first, Keep keep) {
  SelectRunLoop(best, selected, x, at, n, step, first, keep);
}

template <typename T, typename Keep>
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"))) void SelectRunAvx512(T* best, int64_t* selected,
                                                                                    const T* x, int64_t at, int64_t n,
                                                                                    int64_t step, bool first,
                                                                                    Keep keep) {
  SelectRunLoop(best, selected, x, at, n, step, first, keep);
}
#endif

template <typename T, typename Keep>
void SelectRun(Isa isa, T* best, int64_t* selected, const T* x, int64_t at, int64_t n, int64_t step, bool first,
               Keep keep) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == Isa::kAvx512) return SelectRunAvx512(best, selected, x, at, n, step, first, keep);
  if (isa == Isa::kAvx2) return SelectRunAvx2(best, selected, x, at, n, step, first, keep);
#endif
  SelectRunBaseline(best, selected, x, at, n, step, first, keep);
}

constexpr int64_t kSourceBlock = 256;

// The operand element that one source selects: its window's taps in
// row-major order, the first inside the operand taken, each later one
// replacing it unless keep(selected, candidate). -1 when no tap is inside.
// The selected value stays in a register and the choice is a select, not a
// branch (which way it goes is the data's).
template <typename T, typename Keep>
struct Selection {
  const T* x;
  Keep keep;
  int64_t selected = -1;
  T best{};
  void Consider(int64_t at) {
    const T v = x[at];
    const bool take = selected < 0 || !keep(best, v);
    selected = take ? at : selected;
    best = take ? v : best;
  }
};

template <typename T, typename Keep, typename Combine>
Kernel SelectAndScatterOf(std::shared_ptr<const Windows> w, int64_t count, Slot operand, Slot source, Slot init,
                          Slot out, Keep keep, Combine combine) {
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(operand));
    const T* src = static_cast<const T*>(frame.At(source));
    const T start = *static_cast<const T*>(frame.At(init));
    T* y = static_cast<T*>(frame.At(out));
    int64_t groups = 1, per_group = 1, window = 1;
    for (size_t d : w->grouped) groups *= w->source_dims[d];
    for (size_t d : w->windowed) per_group *= w->source_dims[d];
    for (size_t d : w->windowed) window *= w->taps[d];
    if (w->group_run == 0 || groups == 0 || per_group == 0) {
      frame.parallel->For(count, 1 << 16, [&](int64_t lo, int64_t hi) { std::fill(y + lo, y + hi, start); });
    }
    if (groups == 0 || per_group == 0) return;
    const size_t wrank = w->windowed.size();
    const Isa isa = HostIsa();
    const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, per_group * window));
    frame.parallel->For(groups, grain, [&](int64_t lo, int64_t hi) {
      std::vector<int64_t> s(wrank), t(wrank);
      T best[kSourceBlock];
      int64_t selected[kSourceBlock];
      for (int64_t group = lo; group < hi; ++group) {
        // The group's place along the one-wide dimensions.
        int64_t rest = group, base = 0, source_base = 0;
        bool inside = true;
        for (size_t j = w->grouped.size(); j-- > 0;) {
          const size_t d = w->grouped[j];
          const int64_t o = rest % w->source_dims[d];
          rest /= w->source_dims[d];
          const int64_t p = w->tap_input[d][o];
          inside &= p >= 0;
          base += p * w->operand_strides[d];
          source_base += o * w->source_strides[d];
        }
        if (w->group_run > 0) std::fill(y + base, y + base + w->group_run, start);
        if (!inside) continue;  // its one tap is outside the operand: nothing selected
        if (wrank == 2) {
          // A 2-D pool's window (most of them), a row of sources at a time:
          // the row's interior side by side through strided runs, its edges
          // one source at a time through the tap tables; then the row's
          // sources scatter in order.
          const size_t d0 = w->windowed[0], d1 = w->windowed[1];
          const int64_t rows = w->source_dims[d0], cols = w->source_dims[d1];
          const int64_t taps0 = w->taps[d0], taps1 = w->taps[d1];
          const int64_t row_stride = w->source_strides[d0], col_stride = w->source_strides[d1];
          const int64_t stride1 = w->operand_strides[d1];
          const int64_t begin = std::min(w->interior.begin, cols), end = std::max(begin, std::min(w->interior.end, cols));
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t* off0 = w->tap_offset[0].data() + r * taps0;
            const T* src_row = src + source_base + r * row_stride;
            auto scatter = [&](int64_t c, int64_t selected) {
              if (selected >= 0) y[selected] = combine(y[selected], src_row[c * col_stride]);
            };
            auto edge = [&](int64_t c) {
              const int64_t* off1 = w->tap_offset[1].data() + c * taps1;
              Selection<T, Keep> pick{x, keep};
              for (int64_t t0 = 0; t0 < taps0; ++t0) {
                if (off0[t0] < 0) continue;
                for (int64_t t1 = 0; t1 < taps1; ++t1) {
                  if (off1[t1] >= 0) pick.Consider(base + off0[t0] + off1[t1]);
                }
              }
              scatter(c, pick.selected);
            };
            for (int64_t c = 0; c < begin; ++c) edge(c);
            for (int64_t c0 = begin; c0 < end; c0 += kSourceBlock) {
              const int64_t n = std::min(kSourceBlock, end - c0);
              bool first = true;
              for (int64_t t0 = 0; t0 < taps0; ++t0) {
                if (off0[t0] < 0) continue;
                for (int64_t t1 = 0; t1 < taps1; ++t1) {
                  const int64_t at = base + off0[t0] + (c0 * w->interior.stride + w->interior.tap_offsets[t1]) * stride1;
                  SelectRun(isa, best, selected, x, at, n, w->interior.stride * stride1, first, keep);
                  first = false;
                }
              }
              for (int64_t j = 0; j < n; ++j) scatter(c0 + j, first ? -1 : selected[j]);
            }
            for (int64_t c = end; c < cols; ++c) edge(c);
          }
          continue;
        }
        // Any other number of windowed dimensions: odometers over the
        // sources and over each one's taps.
        std::fill(s.begin(), s.end(), 0);
        for (int64_t k = 0; k < per_group; ++k) {
          int64_t source_at = source_base;
          for (size_t j = 0; j < wrank; ++j) source_at += s[j] * w->source_strides[w->windowed[j]];
          Selection<T, Keep> pick{x, keep};
          std::fill(t.begin(), t.end(), 0);
          for (int64_t tap = 0; tap < window; ++tap) {
            int64_t at = base;
            for (size_t j = 0; j < wrank && at >= 0; ++j) {
              const int64_t o = w->tap_offset[j][s[j] * w->taps[w->windowed[j]] + t[j]];
              at = o < 0 ? -1 : at + o;
            }
            if (at >= 0) pick.Consider(at);
            for (size_t j = wrank; j-- > 0;) {
              if (++t[j] < w->taps[w->windowed[j]]) break;
              t[j] = 0;
            }
          }
          if (pick.selected >= 0) y[pick.selected] = combine(y[pick.selected], src[source_at]);
          for (size_t j = wrank; j-- > 0;) {
            if (++s[j] < w->source_dims[w->windowed[j]]) break;
            s[j] = 0;
          }
        }
      }
    });
  };
}

// keep(selected, candidate) for the select computation's compare.
template <typename T>
Kernel Typed(const std::string& direction, Opcode scatter, std::shared_ptr<const Windows> w,
             int64_t count, const std::vector<Slot>& in, const Slot& out) {
  auto value = [](T v) {
    if constexpr (std::is_same_v<T, Bf16> || std::is_same_v<T, F16>) {
      return ToFloat(v);
    } else {
      return v;
    }
  };
  Kernel kernel;
  auto with_keep = [&](auto compare) {
    auto keep = [=](T a, T b) { return compare(value(a), value(b)); };
    if constexpr (std::is_same_v<T, Bf16> || std::is_same_v<T, F16>) {
      reducer::Visit<float>(scatter, [&](auto f) {
        kernel = SelectAndScatterOf<T>(w, count, in[0], in[1], in[2], out, keep, ThroughFloat<T>(f));
      });
    } else {
      reducer::Visit<T>(scatter, [&](auto f) {
        kernel = SelectAndScatterOf<T>(w, count, in[0], in[1], in[2], out, keep, f);
      });
    }
  };
  if (direction == "GE") with_keep([](auto a, auto b) { return a >= b; });
  if (direction == "GT") with_keep([](auto a, auto b) { return a > b; });
  if (direction == "LE") with_keep([](auto a, auto b) { return a <= b; });
  if (direction == "LT") with_keep([](auto a, auto b) { return a < b; });
  return kernel;
}

}  // namespace

Kernel SelectAndScatterKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.operands.size() != 3 || in.size() != 3 || !i.shape.IsArray() || i.called_computations.size() != 2) return nullptr;
  // called_computations follow the attributes' order, as the evaluator reads them.
  const hlo::Attribute* sa = i.FindAttribute("select");
  const hlo::Attribute* ca = i.FindAttribute("scatter");
  const bool select_first = sa < ca;
  const hlo::Computation& select = *i.called_computations[select_first ? 0 : 1];
  const hlo::Computation& scatter = *i.called_computations[select_first ? 1 : 0];
  const std::optional<Opcode> combine = hlo::SingleOpReducer(scatter);
  const hlo::Instruction* root = select.root;
  if (!combine || !root || root->opcode != Opcode::kCompare || root->operands.size() != 2) return nullptr;
  const hlo::Instruction* a = root->operands[0];
  const hlo::Instruction* b = root->operands[1];
  if (a->opcode != Opcode::kParameter || b->opcode != Opcode::kParameter || a->parameter_number == b->parameter_number) {
    return nullptr;
  }
  if (hlo::StringAttribute(*root, "type") == "TOTALORDER") return nullptr;
  // compare(candidate, selected) is the mirrored compare of (selected,
  // candidate): GE becomes LE and so on (each false on a NaN either way).
  std::string direction = hlo::StringAttribute(*root, "direction");
  if (a->parameter_number == 1) {
    if (direction == "GE") direction = "LE";
    else if (direction == "LE") direction = "GE";
    else if (direction == "GT") direction = "LT";
    else if (direction == "LT") direction = "GT";
  }
  const hlo::Attribute* wa = i.FindAttribute("window");
  auto window = hlo::ParseWindow(wa ? wa->value : "");
  const std::vector<int64_t>& operand_dims = i.operands[0]->shape.dims();
  auto w = std::make_shared<Windows>();
  w->source_dims = i.operands[1]->shape.dims();
  if (!window.ok() || window->size() != operand_dims.size() || w->source_dims.size() != operand_dims.size()) {
    return nullptr;
  }
  for (const hlo::WindowDim& d : *window) {
    if (d.base_dilation != 1) return nullptr;
  }
  std::optional<WindowTaps> taps = MakeWindowTaps(*window, operand_dims, w->source_dims);
  if (!taps) return nullptr;  // tables that large: the evaluator's
  w->taps = std::move(taps->taps);
  w->tap_input = std::move(taps->tap_input);
  for (size_t d = 0; d < operand_dims.size(); ++d) (w->taps[d] == 1 ? w->grouped : w->windowed).push_back(d);
  w->operand_strides = RowMajorStrides(operand_dims);
  w->source_strides = RowMajorStrides(w->source_dims);
  for (size_t d : w->windowed) {
    std::vector<int64_t> offsets = w->tap_input[d];
    for (int64_t& o : offsets) o = o < 0 ? -1 : o * w->operand_strides[d];
    w->tap_offset.push_back(std::move(offsets));
  }
  if (!w->windowed.empty()) {
    const size_t d = w->windowed.back();
    w->interior = InteriorOf((*window)[d], w->tap_input[d], w->taps[d], w->source_dims[d]);
    bool tiles = w->windowed.back() == operand_dims.size() - 1 &&
                 w->windowed.front() + w->windowed.size() == operand_dims.size();
    for (size_t g : w->grouped) {
      tiles = tiles && w->source_dims[g] == operand_dims[g];
      for (int64_t o = 0; tiles && o < w->source_dims[g]; ++o) tiles = w->tap_input[g][o] == o;
    }
    if (tiles) w->group_run = w->operand_strides[w->windowed.front()] * operand_dims[w->windowed.front()];
  }
  const int64_t count = i.shape.ElementCount();
  switch (i.shape.element_type()) {
    case ElementType::kF32: return Typed<float>(direction, *combine, w, count, in, out);
    case ElementType::kF64: return Typed<double>(direction, *combine, w, count, in, out);
    case ElementType::kBF16: return Typed<Bf16>(direction, *combine, w, count, in, out);
    case ElementType::kF16: return Typed<F16>(direction, *combine, w, count, in, out);
    case ElementType::kS8: return Typed<int8_t>(direction, *combine, w, count, in, out);
    case ElementType::kS16: return Typed<int16_t>(direction, *combine, w, count, in, out);
    case ElementType::kS32: return Typed<int32_t>(direction, *combine, w, count, in, out);
    case ElementType::kS64: return Typed<int64_t>(direction, *combine, w, count, in, out);
    case ElementType::kU8: return Typed<uint8_t>(direction, *combine, w, count, in, out);
    case ElementType::kU16: return Typed<uint16_t>(direction, *combine, w, count, in, out);
    case ElementType::kU32: return Typed<uint32_t>(direction, *combine, w, count, in, out);
    case ElementType::kU64: return Typed<uint64_t>(direction, *combine, w, count, in, out);
    default: return nullptr;
  }
}

}  // namespace anvil::cpu
