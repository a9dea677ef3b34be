// Reductions whose body is one commutative binary op (add, multiply, max,
// min, and, or; reducers.h) on one input: the body is recognised at compile
// time and becomes a typed accumulation loop.
#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/element_type.h"
#include "hlo/patterns.h"
#include "plugins/cpu/column_sums.h"
#include "plugins/cpu/combine_run.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/fusion_planner.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/reduced_dims.h"
#include "plugins/cpu/reducers.h"
#include "plugins/cpu/row_sums.h"
#include "plugins/cpu/row_tiles.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;
using hlo::Opcode;

// Each output combines its inputs in the evaluator's order, one after
// another, so no output's bits depend on how outputs are grouped (except
// where a long row or a narrow column is cut into chunks, below: by its
// shape alone, never by the thread count). Outputs are grouped for speed: a chain of dependent adds runs at one add per
// add latency, so several outputs advance side by side.
//  - When the last kept dimension is the input's innermost (a column sum),
//    a block of consecutive outputs reads consecutive elements at each
//    reduced position: the block's loop is a vector loop, and each row of
//    the input is read once, in order.
//  - Otherwise (the innermost dimension is reduced: a row sum), kRowGroup
//    outputs advance together, each its own chain.
//  - Where the order cannot change the result (`order_free`: max, min,
//    and, or, integer add and multiply, which wrap) and the innermost
//    dimension alone is reduced, each row is combined in kLanes lanes of
//    consecutive elements, folded at the end: a vector loop.
//  - An f32 sum (T float, Acc double) of contiguous rows advances
//    kSumRows rows at once through SumRowsInDouble (row_sums.h): in order,
//    vectorised across the rows, or for long rows in 32 lanes of doubles
//    each, folded at the end; the last rows, fewer than kSumRows, the same
//    way one at a time (SumRowInDouble).
// Few outputs of long contiguous rows (output o's row at o * inner): the
// rows' chunks of kRowSumChunk elements are computed on any thread, and
// each output then combines its chunks' results in order, from the initial
// value. An f32 sum (Acc double) takes row_sums.h's chunk rule, so its
// bits are those of the one-thread row loop; an order-free reducer's
// result is the same however its row is divided.
template <typename T, typename Acc, typename Combine>
Kernel SplitLongRows(Slot in, Slot init, Slot out, int64_t outputs, int64_t inner, Combine combine) {
  constexpr bool kF32Sum = std::is_same_v<T, float> && std::is_same_v<Acc, double>;
  [[maybe_unused]] constexpr int64_t kLanes = 32;
  const int64_t chunks = RowChunks(inner);
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(in));
    const T start = *static_cast<const T*>(frame.At(init));
    T* y = static_cast<T*>(frame.At(out));
    const Isa isa = HostIsa();
    // Not a std::vector: vector<bool> (a pred reduce's partials) packs them
    // into shared words, which threads writing distinct entries would race on.
    const std::unique_ptr<Acc[]> partial(new Acc[static_cast<size_t>(outputs * chunks)]);
    frame.parallel->For(outputs * chunks, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const T* row = x + p / chunks * inner;
        const int64_t c = p % chunks;
        const T* chunk = row + c * kRowSumChunk;
        const int64_t len = std::min(kRowSumChunk, inner - c * kRowSumChunk);
        if constexpr (kF32Sum) {
          partial[p] = RowChunkSum(chunk, len);
        } else {
          partial[p] = CombineChunk<kLanes>(isa, chunk, len, combine);
        }
      }
    });
    for (int64_t o = 0; o < outputs; ++o) {
      Acc acc = start;
      for (int64_t c = 0; c < chunks; ++c) {
        if constexpr (kF32Sum) {
          acc += partial[o * chunks + c];
        } else {
          acc = combine(acc, partial[o * chunks + c]);
        }
      }
      y[o] = static_cast<T>(acc);
    }
  };
}

// A reduce down fewer than kNarrowColumns columns (fusion_planner.h:
// channel statistics of an NHWC image with 32 channels, the mean of a tall
// [1M, 8]) would be one unit of work per block of kept rows, so on one
// thread where there is one such block. Its reduced rows are cut into chunks of kColumnChunkRows instead,
// whatever the thread count: each chunk adds its rows to its own
// accumulators (an f32 sum in double from -0, its rows in order; an
// order-free reducer from its first row, contiguous rows a block at a time,
// CombineContiguousRows, in an order that cannot change its result), and
// each column then combines its initial value and its chunks' results in
// order. A fused reduce of such columns (ColumnReduceInChunks) computes the
// same chunks by the same rules, with the same bits.
template <typename T, typename Acc, typename Combine>
Kernel SplitColumnRows(Slot in, Slot init, Slot out, std::vector<int64_t> kept_dims, std::vector<int64_t> kept_strides,
                       std::vector<int64_t> reduced_dims, std::vector<int64_t> reduced_strides, Combine combine) {
  constexpr bool kF32Sum = std::is_same_v<T, float> && std::is_same_v<Acc, double>;
  const int64_t last = kept_dims.back();
  int64_t groups = 1, inner = 1;  // blocks of `last` kept columns, and rows reduced
  for (size_t d = 0; d + 1 < kept_dims.size(); ++d) groups *= kept_dims[d];
  for (int64_t d : reduced_dims) inner *= d;
  const int64_t chunks = (inner + kColumnChunkRows - 1) / kColumnChunkRows;
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(in));
    const T start = *static_cast<const T*>(frame.At(init));
    T* y = static_cast<T*>(frame.At(out));
    const Isa isa = HostIsa();
    // The input offset of kept row g's first column.
    auto base_of = [&](int64_t g) {
      int64_t base = 0, o = g * last;
      for (size_t d = kept_dims.size(); d-- > 0;) {
        base += (o % kept_dims[d]) * kept_strides[d];
        o /= kept_dims[d];
      }
      return base;
    };
    // Not a std::vector: vector<bool> packs entries into shared words.
    const std::unique_ptr<Acc[]> partial(new Acc[static_cast<size_t>(groups * chunks * last)]);
    frame.parallel->For(groups * chunks, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const T* row = x + base_of(p / chunks);
        const int64_t k0 = p % chunks * kColumnChunkRows, k1 = std::min(inner, k0 + kColumnChunkRows);
        Acc* acc = &partial[static_cast<size_t>(p * last)];
        int64_t k = k0;
        ReducedWalk walk(reduced_dims, reduced_strides, k0);  // at the chunk's first row
        if constexpr (kF32Sum) {
          std::fill(acc, acc + last, -0.0);  // the sum's identity: -0 + -0 stays -0
        } else {
          const T* first = row + walk.offset();
          for (int64_t j = 0; j < last; ++j) acc[j] = first[j];
          ++k;
        }
        if constexpr (kF32Sum) {
          if (reduced_dims.size() == 1) {
            // column_sums.h: the accumulators in registers across the rows
            AddRowsToColumnSums(row + walk.offset(), k1 - k0, reduced_strides[0], last, acc);
            continue;
          }
        }
        if (k > k0) walk.Next();  // past the first row, which started the accumulators
        if constexpr (!kF32Sum) {
          if (reduced_dims.size() == 1 && reduced_strides[0] == last) {
            // The chunk's rows lie one after another: blocks of rows
            // combined as one run (combine_run.h).
            CombineContiguousRows(isa, acc, row + walk.offset(), k1 - k, last, combine);
            continue;
          }
        }
        for (; k < k1; ++k, walk.Next()) {
          const T* r = row + walk.offset();
          if constexpr (kF32Sum) {
            AddRowToColumnSums(r, last, acc);  // column_sums.h: vector lanes of doubles
          } else {
            CombineRun(isa, acc, r, last, 1, combine);  // combine_run.h
          }
        }
      }
    });
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t j = 0; j < last; ++j) {
        Acc acc = start;
        for (int64_t c = 0; c < chunks; ++c) {
          const Acc v = partial[static_cast<size_t>((g * chunks + c) * last + j)];
          if constexpr (kF32Sum) {
            acc += v;
          } else {
            acc = combine(acc, v);
          }
        }
        y[g * last + j] = static_cast<T>(acc);
      }
    }
  };
}

// Acc: the accumulator's type (double for f32 sums, see ReduceOf).
// The widest column block: its accumulators stay in L1 (4 KB of doubles).
constexpr int64_t kColumnBlock = 512;
template <typename T, typename Acc = T, typename Combine>
Kernel Reduce(Slot in, Slot init, Slot out, std::vector<int64_t> kept_dims, std::vector<int64_t> kept_strides,
              std::vector<int64_t> reduced_dims, std::vector<int64_t> reduced_strides, Combine combine,
              bool order_free = false) {
  constexpr bool kF32Sum = std::is_same_v<T, float> && std::is_same_v<Acc, double>;
  constexpr int64_t kRowGroup = kF32Sum ? kSumRows : 8, kLanes = 32;
  static_assert(kColumnBlock >= kRowGroup, "acc holds a column block or a row group");
  int64_t outputs = 1, inner = 1;
  for (int64_t d : kept_dims) outputs *= d;
  for (int64_t d : reduced_dims) inner *= d;
  const bool columns = !kept_dims.empty() && kept_strides.back() == 1 && kept_dims.back() > 1;
  const bool contiguous_rows = reduced_dims.size() == 1 && reduced_strides[0] == 1;
  const bool lanes = order_free && !columns && reduced_dims.size() == 1 && reduced_strides[0] == 1 && inner >= 2 * kLanes;
  // Outputs in units of work: column blocks along the last kept dimension,
  // or row groups.
  const int64_t last = kept_dims.empty() ? 1 : kept_dims.back();
  // Column blocks are as wide as kColumnBlock allows (each input row is then
  // read in long runs), of equal width, and at least one per thread where
  // the kept rows alone give fewer units than threads.
  const int64_t blocks_per_row =
      !columns ? 0
      : outputs / last < Parallel::Threads()
          ? std::max((last + kColumnBlock - 1) / kColumnBlock, std::min<int64_t>(Parallel::Threads(), (last + 63) / 64))
          : (last + kColumnBlock - 1) / kColumnBlock;
  const int64_t column_block = columns ? ((last + blocks_per_row - 1) / blocks_per_row + 15) / 16 * 16 : 0;
  const int64_t units = columns ? outputs / last * blocks_per_row : (outputs + kRowGroup - 1) / kRowGroup;
  const int64_t unit_outputs = columns ? std::min(last, column_block) : kRowGroup;
  const int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, inner * unit_outputs));
  // Fewer units than threads, of long rows (a whole array's sum, max or
  // min): each row's chunks are shared between the threads instead.
  if (!columns && contiguous_rows && (kF32Sum || lanes) && units < Parallel::Threads() &&
      inner >= 2 * kRowSumChunk) {
    return SplitLongRows<T, Acc>(in, init, out, outputs, inner, combine);
  }
  if (columns && last < kNarrowColumns && (kF32Sum || (order_free && std::is_same_v<Acc, T>)) &&
      inner >= 2 * kColumnChunkRows) {
    return SplitColumnRows<T, Acc>(in, init, out, kept_dims, kept_strides, reduced_dims, reduced_strides, combine);
  }
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(in));
    const T start = *static_cast<const T*>(frame.At(init));
    T* y = static_cast<T*>(frame.At(out));
    const Isa isa = HostIsa();
    const int kept = static_cast<int>(kept_dims.size());
    // The input offset of output o's first reduced position.
    auto base_of = [&](int64_t o) {
      int64_t base = 0;
      for (int d = kept - 1; d >= 0; --d) {
        base += (o % kept_dims[d]) * kept_strides[d];
        o /= kept_dims[d];
      }
      return base;
    };
    frame.parallel->For(units, grain, [&](int64_t lo, int64_t hi) {
      Acc acc[kColumnBlock];
      int64_t bases[kRowGroup];
      for (int64_t u = lo; u < hi; ++u) {
        if (columns) {
          const int64_t first = u / blocks_per_row * last + u % blocks_per_row * column_block;
          const int64_t count = std::min(column_block, last - u % blocks_per_row * column_block);
          const T* row = x + base_of(first);
          std::fill(acc, acc + count, Acc(start));
          ReducedWalk walk(reduced_dims, reduced_strides);
          for (int64_t k = 0; k < inner; ++k, walk.Next()) {
            const T* p = row + walk.offset();
            if constexpr (kF32Sum) {
              AddRowToColumnSums(p, count, acc);  // column_sums.h: vector lanes of doubles
            } else if constexpr (std::is_same_v<Acc, T>) {
              CombineRun(isa, acc, p, count, 1, combine);  // combine_run.h
            } else {
              for (int64_t j = 0; j < count; ++j) acc[j] = combine(acc[j], p[j]);
            }
          }
          for (int64_t j = 0; j < count; ++j) y[first + j] = static_cast<T>(acc[j]);
        } else if (lanes) {
          for (int64_t o = u * kRowGroup; o < std::min(outputs, (u + 1) * kRowGroup); ++o) {
            const T* row = x + base_of(o);
            // Each element and the initial value combined once (an integer
            // sum's initial value must not be added once per lane).
            // Whole groups of kLanes in lanes, the rest after them.
            const int64_t groups = inner / kLanes;
            Acc total = start;
            if constexpr (std::is_same_v<Acc, T>) {
              total = combine(total, CombineRowInLanes<kLanes>(isa, row, groups, combine));  // combine_run.h
            } else {
              for (int64_t j = 0; j < kLanes; ++j) acc[j] = row[j];
              for (int64_t g = 1; g < groups; ++g) {
                for (int64_t j = 0; j < kLanes; ++j) acc[j] = combine(acc[j], row[g * kLanes + j]);
              }
              for (int64_t j = 0; j < kLanes; ++j) total = combine(total, acc[j]);
            }
            for (int64_t k = groups * kLanes; k < inner; ++k) total = combine(total, row[k]);
            y[o] = static_cast<T>(total);
          }
        } else {
          const int64_t first = u * kRowGroup, count = std::min(kRowGroup, outputs - first);
          for (int64_t j = 0; j < count; ++j) bases[j] = base_of(first + j);
          std::fill(acc, acc + count, Acc(start));
          ReducedWalk walk(reduced_dims, reduced_strides);
          if (count == kRowGroup && contiguous_rows) {
            // Each row's next elements are read as a run and turned through
            // a tile, so that the rows' chains advance as one vector loop (a
            // row sum of f32[4096,1024]: 1.85 -> 1.5 ms); an f32 sum's tile
            // is vector registers (row_sums.h: 1.05 -> 0.41-0.48 ms).
            if constexpr (kF32Sum) {
              SumRowsInDouble(x, bases, inner, acc);
            } else {
              CombineRowsThroughTile<kRowGroup>(x, bases, inner, acc, combine);
            }
          } else if (kF32Sum && contiguous_rows) {
            // The last rows, fewer than a group: each row alone, in the
            // order a group's rows are summed in (row_sums.h).
            if constexpr (kF32Sum) {
              for (int64_t j = 0; j < count; ++j) SumRowInDouble(x + bases[j], inner, &acc[j]);
            }
          } else if (count == kRowGroup) {
            for (int64_t k = 0; k < inner; ++k, walk.Next()) {
              const int64_t at = walk.offset();
              for (int64_t j = 0; j < kRowGroup; ++j) acc[j] = combine(acc[j], x[bases[j] + at]);
            }
          } else {
            for (int64_t k = 0; k < inner; ++k, walk.Next()) {
              const int64_t at = walk.offset();
              for (int64_t j = 0; j < count; ++j) acc[j] = combine(acc[j], x[bases[j] + at]);
            }
          }
          for (int64_t j = 0; j < count; ++j) y[first + j] = static_cast<T>(acc[j]);
        }
      }
    });
  };
}

template <typename T>
Kernel ReduceOf(Opcode op, Slot in, Slot init, Slot out, std::vector<int64_t> kd, std::vector<int64_t> ks,
                std::vector<int64_t> rd, std::vector<int64_t> rs) {
  if constexpr (std::is_same_v<T, float>) {
    // f32 sums carry a double and round once: a batch-norm or bias
    // gradient sums a million terms, where an f32 running sum loses up to
    // n/2 ULP to rounding.
    if (op == Opcode::kAdd) {
      return Reduce<T, double>(in, init, out, kd, ks, rd, rs, [](double a, double b) { return a + b; });
    }
  }
  // Float sums and products round at every step, so their order is the
  // evaluator's; every other reducer gives the same bits in any order.
  const bool order_free = !((op == Opcode::kAdd || op == Opcode::kMultiply) && std::is_floating_point_v<T>);
  Kernel kernel;
  reducer::Visit<T>(op, [&](auto combine) { kernel = Reduce<T>(in, init, out, kd, ks, rd, rs, combine, order_free); });
  return kernel;
}

// bf16 and f16 sums carry a double and round once, as f32 sums do and as
// the evaluator's do (XLA's CPU backend computes these types in f32):
// rounded at every step, a sum stops growing once its terms fall below
// half its last place. Each output adds its terms in the evaluator's order,
// so the two give the same bits; outputs are spread over the threads.
template <typename N>
Kernel NarrowSum(ElementType t, Slot in, Slot init, Slot out, std::vector<int64_t> kd, std::vector<int64_t> ks,
                 std::vector<int64_t> rd, std::vector<int64_t> rs) {
  const hlo::FloatFormat format = *hlo::Info(t).float_format;
  int64_t outputs = 1, inner = 1;
  for (int64_t d : kd) outputs *= d;
  for (int64_t d : rd) inner *= d;
  const int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, inner));
  return [=](const Frame& frame) {
    const N* x = static_cast<const N*>(frame.At(in));
    const double start = ToFloat(*static_cast<const N*>(frame.At(init)));
    N* y = static_cast<N*>(frame.At(out));
    frame.parallel->For(outputs, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) {
        int64_t base = 0;
        for (int64_t d = static_cast<int64_t>(kd.size()) - 1, rest = o; d >= 0; --d) {
          base += (rest % kd[d]) * ks[d];
          rest /= kd[d];
        }
        double acc = start;
        ReducedWalk walk(rd, rs);
        for (int64_t k = 0; k < inner; ++k, walk.Next()) acc += ToFloat(x[base + walk.offset()]);
        y[o] = N{static_cast<uint16_t>(hlo::EncodeFloat(format, acc))};
      }
    });
  };
}

// Other bf16 and f16 reductions round every step, as the evaluator's bf16
// and f16 arithmetic does: each step in f32, rounded once (reducers.h's
// ops); maximum and minimum are exact either way.
template <typename N>
Kernel NarrowReduceOf(Opcode op, Slot in, Slot init, Slot out, std::vector<int64_t> kd, std::vector<int64_t> ks,
                      std::vector<int64_t> rd, std::vector<int64_t> rs) {
  if (op == Opcode::kAdd) {
    return NarrowSum<N>(std::is_same_v<N, Bf16> ? ElementType::kBF16 : ElementType::kF16, in, init, out, kd, ks, rd, rs);
  }
  Kernel kernel;
  reducer::Visit<float>(op, [&](auto f) { kernel = Reduce<N>(in, init, out, kd, ks, rd, rs, ThroughFloat<N>(f)); });
  return kernel;
}

}  // namespace

Kernel ReduceKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.operands.size() != 2 || !i.shape.IsArray() || i.called_computations.size() != 1) return nullptr;
  auto op = hlo::SingleOpReducer(*i.called_computations[0]);
  if (!op) return nullptr;
  auto reduced = hlo::IntListAttribute(i, "dimensions");
  if (!reduced.ok()) return nullptr;
  ReducedDims split = SplitReduced(i.operands[0]->shape.dims(), *reduced);
  const std::vector<int64_t>& kd = split.kept_dims;
  const std::vector<int64_t>& ks = split.kept_strides;
  const std::vector<int64_t>& rd = split.reduced_dims;
  const std::vector<int64_t>& rs = split.reduced_strides;
  if (rd.empty()) return nullptr;
  switch (i.shape.element_type()) {
    case ElementType::kBF16: return NarrowReduceOf<Bf16>(*op, in[0], in[1], out, kd, ks, rd, rs);
    case ElementType::kF16: return NarrowReduceOf<F16>(*op, in[0], in[1], out, kd, ks, rd, rs);
    default:
      return reducer::ForNativeType<Kernel>(i.shape.element_type(), [&]<typename T>() {
        return ReduceOf<T>(*op, in[0], in[1], out, kd, ks, rd, rs);
      });
  }
}

Kernel RowReduceKernel(Opcode op, int64_t rows, int64_t row_length, const Slot& in, const Slot& init,
                       const Slot& out) {
  return ReduceOf<float>(op, in, init, out, {rows}, {row_length}, {row_length}, {1});
}

}  // namespace anvil::cpu
