// A reduce of rows that computes its operand as it goes (fusion_planner.h,
// RowReduceInBlocks): layer norm's sum of squared deviations, softmax's sum
// of exponentials. Each thread takes blocks of whole rows, computes a
// block of the operand with the operand's fused loop into a buffer of its
// own (about 64 KB: it stays in L2), or straight into the operand's memory
// when others read it later (FusionGroup::root_stored), and reduces the
// block from there with the reduce kernel's own loops (RowReduceKernel).
// Each output so combines the same values in the same order as a reduce of
// the stored operand would; the operand's trip to memory and back is gone
// (or, when it is stored, the second read of it). Rows longer than a block
// (RowReduceInChunks: a whole array's loss or norm) are computed and
// reduced a chunk of kRowSumChunk elements at a time, every chunk of every
// row on any thread, and each row's chunks combined in order (row_sums.h's
// chunk rule, which the unfused reduce follows too).
//
// A reduce of columns (ColumnReduceInBlocks: softmax over axis 0, a bias
// gradient) does the same within each thread's block of columns, as the
// reduce kernel's column path divides them: it computes a few rows of its
// columns at a time into a buffer of its own, or into the stored operand,
// and adds them to the columns' accumulators row after row (f32 sums in
// double, kernels_reduce.cc), so each output again takes its terms in the
// order the unfused reduce would. Fewer than kNarrowColumns columns
// (ColumnReduceInChunks: an NHWC image's channel statistics) are reduced
// a chunk of kColumnChunkRows rows at a time on any thread instead, each
// column combining its chunks in order, as the unfused reduce does.
#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "hlo/patterns.h"
#include "plugins/cpu/column_sums.h"
#include "plugins/cpu/combine_run.h"
#include "plugins/cpu/fusion_planner.h"
#include "plugins/cpu/kernels_fused.h"
#include "plugins/cpu/reducers.h"
#include "plugins/cpu/row_sums.h"

namespace anvil::cpu {
namespace {

// A block's elements, about: enough rows to amortise a block's set-up,
// few enough to stay in L2 beside the fused loop's tiles.
constexpr int64_t kBlockElements = int64_t{1} << 14;

// Runs a row-reduce kernel built for a block (RowReduceKernel: parameter 0
// the block's rows, parameter 1 the initial value, output 0 the block's
// results) on `values`, on this thread alone.
void ReduceBlock(const Kernel& kernel, const float* values, void* init, float* results) {
  const Parallel serial(nullptr);
  Frame block;
  block.parameters = {const_cast<float*>(values), init};
  block.outputs = {results};
  block.parallel = &serial;
  kernel(block);
}

// The row-reduce kernels for `rows` rows of `row` elements in blocks of
// `block_rows`: a whole block's, and the last block's when that is
// shorter. A block's reduce reads parameter 0 (the block), parameter 1
// (the initial value) and writes output 0 (the block's outputs).
struct BlockKernels {
  BlockKernels(hlo::Opcode op, int64_t row, int64_t rows, int64_t block_rows) {
    const Slot block_in{Slot::Kind::kParameter, 0, 0}, block_init{Slot::Kind::kParameter, 1, 0},
        block_out{Slot::Kind::kOutput, 0, 0};
    const int64_t blocks = (rows + block_rows - 1) / block_rows;
    const int64_t last_rows = rows - (blocks - 1) * block_rows;
    full = RowReduceKernel(op, block_rows, row, block_in, block_init, block_out);
    last = last_rows == block_rows ? full : RowReduceKernel(op, last_rows, row, block_in, block_init, block_out);
  }
  bool ok() const { return full && last; }
  const Kernel& For(int64_t rows, int64_t block_rows) const { return rows == block_rows ? full : last; }
  Kernel full, last;
};

// The chunk rule (row_sums.h) begins where blocks of rows end, so a row is
// reduced in blocks or in chunks, never both, and either way with the
// unfused reduce's bits.
static_assert(kMaxBlockedRow == kRowSumChunk);

// A reduce of long rows (RowReduceInChunks): every chunk of every row is
// computed by the group's loop into L2 (or straight into the stored root)
// and reduced there, on any thread; each row then combines its chunks'
// results in order from the initial value, as the reduce kernel does
// (kernels_reduce.cc's SplitLongRows). (x * x).mean() of f32[4096, 4096]
// is one pass over x.
template <typename Acc, typename Combine>
Kernel ChunkedRowReduce(std::shared_ptr<const FusedLoop> loop, int64_t rows, int64_t row, const Slot& init,
                        const Slot& out, std::optional<Slot> root_out, Combine combine) {
  constexpr bool kSum = std::is_same_v<Acc, double>;
  [[maybe_unused]] constexpr int kLanes = 32;
  const int64_t chunks = RowChunks(row);
  return [=](const Frame& frame) {
    const float start = *static_cast<const float*>(frame.At(init));
    float* y = static_cast<float*>(frame.At(out));
    float* stored = root_out ? static_cast<float*>(frame.At(*root_out)) : nullptr;
    const Isa isa = HostIsa();
    const std::unique_ptr<Acc[]> partial(new Acc[static_cast<size_t>(rows * chunks)]);  // as SplitLongRows's
    frame.parallel->For(rows * chunks, 1, [&](int64_t lo, int64_t hi) {
      const std::unique_ptr<float[]> buffer(stored ? nullptr : new float[kRowSumChunk]);
      for (int64_t p = lo; p < hi; ++p) {
        const int64_t begin = p / chunks * row + p % chunks * kRowSumChunk;
        const int64_t len = std::min(kRowSumChunk, row - p % chunks * kRowSumChunk);
        float* values = stored ? stored + begin : buffer.get();
        loop->Run(frame, begin, begin + len, values);
        if constexpr (kSum) {
          partial[p] = RowChunkSum(values, len);
        } else {
          partial[p] = CombineChunk<kLanes>(isa, values, len, combine);
        }
      }
    });
    for (int64_t r = 0; r < rows; ++r) {
      Acc acc = start;
      for (int64_t c = 0; c < chunks; ++c) acc = combine(acc, partial[r * chunks + c]);
      y[r] = static_cast<float>(acc);
    }
  };
}

}  // namespace

Kernel FusedRowReduceKernel(const hlo::Instruction& reduce, const std::vector<const hlo::Instruction*>& members,
                            const std::vector<const hlo::Instruction*>& inputs, const std::vector<Slot>& input_slots,
                            const Slot& init, const Slot& out, std::optional<Slot> root_out) {
  const bool chunked = RowReduceInChunks(reduce);
  if ((!RowReduceInBlocks(reduce) && !chunked) || members.empty() || members.back() != reduce.operands[0]) {
    return nullptr;
  }
  const std::optional<hlo::Opcode> op = hlo::SingleOpReducer(*reduce.called_computations[0]);
  std::shared_ptr<const FusedLoop> loop = MakeFusedLoop(members, inputs, input_slots);
  if (!op || !loop) return nullptr;
  const int64_t rows = reduce.shape.ElementCount();
  const int64_t row = reduce.operands[0]->shape.ElementCount() / rows;
  if (chunked) {
    if (*op == hlo::Opcode::kAdd) {
      return ChunkedRowReduce<double>(loop, rows, row, init, out, root_out, [](double a, double b) { return a + b; });
    }
    Kernel kernel;
    reducer::Visit<float>(*op, [&](auto combine) {
      kernel = ChunkedRowReduce<float>(loop, rows, row, init, out, root_out, combine);
    });
    return kernel;
  }
  // Whole groups of the row-sum kernel's rows to a block.
  const int64_t block_rows = std::max(kSumRows, kBlockElements / row / kSumRows * kSumRows);
  const int64_t blocks = (rows + block_rows - 1) / block_rows;
  const BlockKernels kernels(*op, row, rows, block_rows);
  if (!kernels.ok()) return nullptr;
  return [loop, kernels, rows, row, block_rows, blocks, init, out, root_out](const Frame& frame) {
    void* start = frame.At(init);
    float* y = static_cast<float*>(frame.At(out));
    // A stored root is computed straight into its memory, block by block,
    // and each block reduced from there while it is still in L2.
    float* stored = root_out ? static_cast<float*>(frame.At(*root_out)) : nullptr;
    frame.parallel->For(blocks, 1, [&](int64_t lo, int64_t hi) {
      const std::unique_ptr<float[]> buffer(stored ? nullptr : new float[block_rows * row]);
      const Parallel serial(nullptr);  // the block is this thread's alone
      Frame block;
      block.parameters = {nullptr, start};
      block.outputs = {nullptr};
      block.parallel = &serial;
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t r0 = b * block_rows, r1 = std::min(rows, r0 + block_rows);
        float* values = stored ? stored + r0 * row : buffer.get();
        loop->Run(frame, r0 * row, r1 * row, values);
        block.parameters[0] = values;
        block.outputs[0] = y + r0;
        kernels.For(r1 - r0, block_rows)(block);
      }
    });
  };
}

namespace {

// The widest block of columns one thread reduces (as kernels_reduce.cc's
// kColumnBlock: its accumulators stay in L1), and about how many elements
// of them a block of rows computes at once (in L2 beside the loop's tiles).
constexpr int64_t kColumnBlock = 512;
constexpr int64_t kColumnBlockElements = int64_t{1} << 13;

// Adds rows [0, rows) of `values` (`stride` apart, `count` columns each) to
// `acc`, one row after another.
template <typename Acc, typename Combine>
void CombineRows(Isa isa, const float* values, int64_t rows, int64_t stride, int64_t count, Acc* acc,
                 Combine combine) {
  for (int64_t r = 0; r < rows; ++r) {
    if constexpr (std::is_same_v<Acc, double>) {
      AddRowToColumnSums(values + r * stride, count, acc);  // column_sums.h
    } else {
      CombineRun(isa, acc, values + r * stride, count, 1, combine);  // combine_run.h
    }
  }
}

template <typename Acc, typename Combine>
Kernel ColumnReduce(std::shared_ptr<const FusedLoop> loop, int64_t rows, int64_t columns, const Slot& init,
                    const Slot& out, std::optional<Slot> root_out, Combine combine) {
  // Column blocks of equal width, a multiple of 16, at least one per thread.
  const int64_t blocks = std::max((columns + kColumnBlock - 1) / kColumnBlock,
                                  std::min<int64_t>(Parallel::Threads(), (columns + 63) / 64));
  const int64_t width = ((columns + blocks - 1) / blocks + 15) / 16 * 16;
  const int64_t units = (columns + width - 1) / width;
  const int64_t block_rows = std::max<int64_t>(1, kColumnBlockElements / width);
  return [=](const Frame& frame) {
    const Acc start = static_cast<Acc>(*static_cast<const float*>(frame.At(init)));
    float* y = static_cast<float*>(frame.At(out));
    float* stored = root_out ? static_cast<float*>(frame.At(*root_out)) : nullptr;
    const Isa isa = HostIsa();
    frame.parallel->For(units, 1, [&](int64_t lo, int64_t hi) {
      const std::unique_ptr<float[]> buffer(stored ? nullptr : new float[block_rows * width]);
      Acc acc[kColumnBlock];
      for (int64_t u = lo; u < hi; ++u) {
        const int64_t first = u * width, count = std::min(width, columns - first);
        std::fill(acc, acc + count, start);
        for (int64_t r0 = 0; r0 < rows; r0 += block_rows) {
          const int64_t n = std::min(block_rows, rows - r0);
          // A stored root is computed straight into its memory and read
          // back from there while it is still in cache.
          float* values = stored ? stored + r0 * columns + first : buffer.get();
          const int64_t stride = stored ? columns : count;
          loop->RunRows(frame, r0 * columns + first, count, n, columns, values, stride);
          CombineRows(isa, values, n, stride, count, acc, combine);
        }
        for (int64_t j = 0; j < count; ++j) y[first + j] = static_cast<float>(acc[j]);
      }
    });
  };
}

// A reduce of fewer than kNarrowColumns columns (ColumnReduceInChunks):
// every chunk of kColumnChunkRows rows is computed by the group's loop a
// few rows at a time (contiguous: the kept dimensions are the innermost)
// into L1 (or straight into the stored root) and added to the chunk's own
// accumulators, on any thread; each column then combines its initial
// value and its chunks in order, as the unfused reduce does
// (kernels_reduce.cc's SplitColumnRows), with the same bits. An NHWC
// image's variance over 32 channels is one pass over the image.
template <typename Acc, typename Combine>
Kernel ChunkedColumnReduce(std::shared_ptr<const FusedLoop> loop, int64_t rows, int64_t columns, const Slot& init,
                           const Slot& out, std::optional<Slot> root_out, Combine combine) {
  constexpr bool kSum = std::is_same_v<Acc, double>;
  const int64_t chunks = (rows + kColumnChunkRows - 1) / kColumnChunkRows;
  const int64_t block_rows = std::max<int64_t>(1, kColumnBlockElements / columns);
  return [=](const Frame& frame) {
    const Acc start = static_cast<Acc>(*static_cast<const float*>(frame.At(init)));
    float* y = static_cast<float*>(frame.At(out));
    float* stored = root_out ? static_cast<float*>(frame.At(*root_out)) : nullptr;
    const Isa isa = HostIsa();
    const std::unique_ptr<Acc[]> partial(new Acc[static_cast<size_t>(chunks * columns)]);
    frame.parallel->For(chunks, 1, [&](int64_t lo, int64_t hi) {
      const std::unique_ptr<float[]> buffer(stored ? nullptr : new float[block_rows * columns]);
      for (int64_t c = lo; c < hi; ++c) {
        Acc* acc = &partial[static_cast<size_t>(c * columns)];
        const int64_t r0 = c * kColumnChunkRows, r1 = std::min(rows, r0 + kColumnChunkRows);
        for (int64_t b = r0; b < r1; b += block_rows) {
          const int64_t n = std::min(block_rows, r1 - b);
          float* values = stored ? stored + b * columns : buffer.get();
          loop->Run(frame, b * columns, (b + n) * columns, values);
          if constexpr (kSum) {
            if (b == r0) std::fill(acc, acc + columns, -0.0);  // the identity, as SplitColumnRows's
            AddRowsToColumnSums(values, n, columns, columns, acc);  // column_sums.h
          } else if (b == r0) {
            // Max and min, order free: the block's rows combined as runs
            // (combine_run.h), as SplitColumnRows combines its chunks'.
            std::copy(values, values + columns, acc);  // the chunk's first row
            CombineContiguousRows(isa, acc, values + columns, n - 1, columns, combine);
          } else {
            CombineContiguousRows(isa, acc, values, n, columns, combine);
          }
        }
      }
    });
    for (int64_t j = 0; j < columns; ++j) {
      Acc acc = start;
      for (int64_t c = 0; c < chunks; ++c) acc = combine(acc, partial[static_cast<size_t>(c * columns + j)]);
      y[j] = static_cast<float>(acc);
    }
  };
}

}  // namespace

Kernel FusedColumnReduceKernel(const hlo::Instruction& reduce, const std::vector<const hlo::Instruction*>& members,
                               const std::vector<const hlo::Instruction*>& inputs,
                               const std::vector<Slot>& input_slots, const Slot& init, const Slot& out,
                               std::optional<Slot> root_out) {
  const bool chunked = ColumnReduceInChunks(reduce);
  if ((!ColumnReduceInBlocks(reduce) && !chunked) || members.empty() || members.back() != reduce.operands[0]) {
    return nullptr;
  }
  const std::optional<hlo::Opcode> op = hlo::SingleOpReducer(*reduce.called_computations[0]);
  std::shared_ptr<const FusedLoop> loop = MakeFusedLoop(members, inputs, input_slots);
  if (!op || !loop) return nullptr;
  const int64_t columns = reduce.shape.ElementCount();
  const int64_t rows = reduce.operands[0]->shape.ElementCount() / columns;
  if (chunked) {
    if (*op == hlo::Opcode::kAdd) {
      return ChunkedColumnReduce<double>(loop, rows, columns, init, out, root_out,
                                         [](double a, double b) { return a + b; });
    }
    Kernel kernel;
    reducer::Visit<float>(*op, [&](auto combine) {
      kernel = ChunkedColumnReduce<float>(loop, rows, columns, init, out, root_out, combine);
    });
    return kernel;
  }
  // As the reduce kernel's: f32 sums carry a double and round once; the
  // other reducers combine in f32 (kernels_reduce.cc's ReduceOf).
  if (*op == hlo::Opcode::kAdd) {
    return ColumnReduce<double>(loop, rows, columns, init, out, root_out, [](double a, double b) { return a + b; });
  }
  Kernel kernel;
  reducer::Visit<float>(*op, [&](auto combine) {
    kernel = ColumnReduce<float>(loop, rows, columns, init, out, root_out, combine);
  });
  return kernel;
}

RowRunner FusedRowReduceRows(const hlo::Instruction& reduce, const std::vector<const hlo::Instruction*>& members,
                             const std::vector<const hlo::Instruction*>& inputs, const std::vector<Slot>& input_slots,
                             const Slot& init, const Slot& out, std::optional<Slot> root_out, const RowChain& chain) {
  if (!RowReduceInBlocks(reduce) || members.empty() || members.back() != reduce.operands[0]) return nullptr;
  if (reduce.shape.ElementCount() != chain.rows) return nullptr;
  const std::optional<hlo::Opcode> op = hlo::SingleOpReducer(*reduce.called_computations[0]);
  std::shared_ptr<const FusedLoop> loop = MakeFusedLoop(members, inputs, input_slots);
  if (!op || !loop) return nullptr;
  const int64_t row = reduce.operands[0]->shape.ElementCount() / chain.rows;
  const BlockKernels kernels(*op, row, chain.rows, chain.block_rows);
  if (!kernels.ok()) return nullptr;
  const int64_t block_rows = chain.block_rows;
  return [loop, kernels, row, block_rows, init, out, root_out](const Frame& frame, int64_t r0, int64_t r1,
                                                               float* scratch) {
    // A stored root is computed straight into its memory.
    float* values = root_out ? static_cast<float*>(frame.At(*root_out)) + r0 * row : scratch;
    loop->Run(frame, r0 * row, r1 * row, values);
    ReduceBlock(kernels.For(r1 - r0, block_rows), values, frame.At(init), static_cast<float*>(frame.At(out)) + r0);
  };
}

RowRunner RowReduceRows(const hlo::Instruction& reduce, const Slot& in, const Slot& init, const Slot& out,
                        const RowChain& chain) {
  if (!RowReduceInBlocks(reduce) || reduce.shape.ElementCount() != chain.rows) return nullptr;
  const std::optional<hlo::Opcode> op = hlo::SingleOpReducer(*reduce.called_computations[0]);
  if (!op) return nullptr;
  const int64_t row = reduce.operands[0]->shape.ElementCount() / chain.rows;
  const BlockKernels kernels(*op, row, chain.rows, chain.block_rows);
  if (!kernels.ok()) return nullptr;
  const int64_t block_rows = chain.block_rows;
  return [kernels, row, block_rows, in, init, out](const Frame& frame, int64_t r0, int64_t r1, float*) {
    ReduceBlock(kernels.For(r1 - r0, block_rows), static_cast<const float*>(frame.At(in)) + r0 * row, frame.At(init),
                static_cast<float*>(frame.At(out)) + r0);
  };
}

}  // namespace anvil::cpu
