// reduce of one or more f32, s32 or pred operands by a body a LaneProgram
// runs (lane_program.h): argmax and argmin, a value with its index, any
// body of compares, selects and simple arithmetic. kLanes outputs advance
// together, each combining its elements in the evaluator's order (init
// first, then the reduced positions in row-major order), so the results
// are the evaluator's bit for bit; each body step is one loop over the
// lanes. (Fewer lane groups than threads over long runs cut the runs into
// chunks instead, for associative bodies only: SplitRunsKernel.) An argmax over rows of 1000: 700 ms through hlo::ScalarProgram,
// one element at a time.
#include <algorithm>
#include <limits>
#include <bit>
#include <cstring>
#include <utility>
#include <vector>
#include <optional>

#include "hlo/attributes.h"
#include "plugins/cpu/lane_program.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/prefetch.h"
#include "plugins/cpu/reduced_dims.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;

int64_t BytesOf(ElementType t) { return t == ElementType::kPred ? 1 : 4; }

// The reduce's body as a LaneProgram, when the kernel covers the reduce:
// n operands of one shape, f32, s32 or pred, each with its init and its
// body parameters and result of the same type.
std::optional<LaneProgram> LaneBody(const hlo::Instruction& i) {
  const size_t n = i.operands.size() / 2;
  if (n == 0 || i.operands.size() != 2 * n || i.called_computations.size() != 1) return std::nullopt;
  if (i.shape.IsTuple() ? i.shape.tuple_elements().size() != n : n != 1) return std::nullopt;
  std::optional<LaneProgram> body = LaneProgram::Compile(*i.called_computations[0]);
  if (!body || body->parameter_count() != static_cast<int>(2 * n) || body->result_count() != static_cast<int>(n)) {
    return std::nullopt;
  }
  const std::vector<int64_t>& dims = i.operands[0]->shape.dims();
  for (size_t v = 0; v < n; ++v) {
    const ElementType t = i.operands[v]->shape.element_type();
    if (!i.operands[v]->shape.IsArray() || i.operands[v]->shape.dims() != dims ||
        i.operands[n + v]->shape.element_type() != t || body->parameter_type(static_cast<int>(v)) != t ||
        body->parameter_type(static_cast<int>(n + v)) != t || body->result_type(static_cast<int>(v)) != t) {
      return std::nullopt;
    }
  }
  if (!hlo::IntListAttribute(i, "dimensions").ok()) return std::nullopt;
  return body;
}

// An operand the kernel computes instead of reading: an s32 iota. Its
// value is one coordinate of the element: of the output's position (a kept
// dimension: one value per lane for the whole reduction) or of the reduced
// position (a reduced dimension: one value for all lanes at each step).
struct IotaOperand {
  bool kept = false;
  int64_t divisor = 1, size = 1;  // coordinate = (position / divisor) % size
};

std::optional<IotaOperand> IotaOf(const hlo::Instruction& iota, const std::vector<int64_t>& reduced) {
  auto dimension = hlo::IntAttribute(iota, "iota_dimension", std::nullopt);
  if (!dimension.ok()) return std::nullopt;
  const std::vector<int64_t>& dims = iota.shape.dims();
  const bool kept = std::find(reduced.begin(), reduced.end(), *dimension) == reduced.end();
  IotaOperand o;
  o.kept = kept;
  o.size = dims[static_cast<size_t>(*dimension)];
  // The divisor: the sizes of the later dimensions of the same kind (kept
  // positions and reduced positions each count in row-major order).
  for (size_t d = static_cast<size_t>(*dimension) + 1; d < dims.size(); ++d) {
    const bool d_kept = std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(d)) == reduced.end();
    if (d_kept == kept) o.divisor *= dims[d];
  }
  return o;
}

// A reduce of few outputs over long runs (a whole array's argmax, the
// argmax of one vocabulary's logits) would keep one lane busy of kLanes,
// on one thread. With an associative body that rounds nothing (below),
// each output's run is cut into up to kSplitChunks chunks instead: chunk c
// of output o is a piece, pieces go kLanes at a time to the threads, one
// to a lane, each lane's accumulator starting at its chunk's first
// element. Each output then combines, in order, its initial value, its
// chunks' accumulators and the positions after the last whole chunk, one
// at a time. For such a body that is the evaluator's result however the
// run is cut, so whether a reduce is split (it is only where there are
// more threads than lane groups) changes no result.
constexpr int64_t kSplitChunks = 1024;
constexpr int64_t kMinSplitRun = 2048;  // positions; shorter runs are not split
constexpr int64_t kMinSplitChunk = 256;  // positions
// Bodies of more operands are not split: checking them on samples
// (AssociativeOnSamples) would cost 12 ms of compile for four.
constexpr size_t kMaxSplitOperands = 3;
// Lanes per task (half a register, so that one vocabulary's argmax makes
// two tasks for two threads rather than one: 0.11 -> 0.06 ms), and, as the
// kernel's own loop, positions gathered at a time and how far ahead each
// lane's row is fetched.
constexpr int64_t kSplitLanes = LaneProgram::kLanes / 2, kSplitBlock = 16, kSplitAhead = 32;

struct SplitRuns {
  LaneProgram program;
  size_t n = 0;
  std::vector<Slot> in, out;
  std::vector<std::optional<IotaOperand>> iotas;
  std::vector<int64_t> kept_dims, kept_strides;
  int64_t outputs = 0, inner = 0;
  bool staged = false;
};

// Whether `program`, a reduce body of n 4-byte (f32, s32) accumulators and
// elements, combines sample values associatively, bit for bit: f(f(a, b), c)
// == f(a, f(b, c)) for every triple of sample tuples, each operand's value
// drawn from NaN, infinities, signed zeros, equal and unequal values, and
// the ends of s32. XLA asks every reduce body to be associative, but does
// not check: a hand-written argmax whose NaN loses to a later element, a
// body counting its steps, or one swapping its accumulators are not, and
// cutting their runs would change their results. The body rounds nothing
// (LaneProgram::RoundsNothing), so a failure to associate shows in how it
// picks, counts or orders values, which these samples reach.
bool AssociativeOnSamples(const LaneProgram& program, size_t n) {
  constexpr int64_t kLanes = LaneProgram::kLanes;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> floats = {nan, -inf, -1.5f, -0.0f, 0.0f, 1.0f, 2.5f, inf};
  const std::vector<int32_t> ints = {std::numeric_limits<int32_t>::min(), -1, 0, 1, 2, 3,
                                     std::numeric_limits<int32_t>::max()};
  // Sample tuples: the first operand's every sample against two values of
  // each other operand (an argmax's value against indices 0 and 1), every
  // combination of those, so that no operand is held fixed: 16 tuples for
  // two operands, 4096 triples, each four runs of the body over 128 lanes at
  // a time, about 0.2 ms of compile; three operands, 32768 triples, about
  // 1.5 ms (more are never split: kMaxSplitOperands).
  constexpr size_t kOther = 2;
  const std::vector<float> other_floats = {1.0f, nan};
  const std::vector<int32_t> other_ints = {0, 1};
  std::vector<uint32_t> first;
  if (program.parameter_type(0) == hlo::ElementType::kF32) {
    for (float f : floats) first.push_back(std::bit_cast<uint32_t>(f));
  } else {
    for (int32_t i : ints) first.push_back(std::bit_cast<uint32_t>(i));
  }
  size_t combinations = first.size();
  for (size_t v = 1; v < n; ++v) combinations *= kOther;
  std::vector<std::vector<uint32_t>> tuples;
  for (size_t t = 0; t < combinations; ++t) {
    std::vector<uint32_t> tuple(n);
    tuple[0] = first[t % first.size()];
    size_t rest = t / first.size();
    for (size_t v = 1; v < n; ++v) {
      const bool is_float = program.parameter_type(static_cast<int>(v)) == hlo::ElementType::kF32;
      tuple[v] = is_float ? std::bit_cast<uint32_t>(other_floats[rest % kOther])
                          : std::bit_cast<uint32_t>(other_ints[rest % kOther]);
      rest /= kOther;
    }
    tuples.push_back(std::move(tuple));
  }
  // f applied lane by lane to accumulators `a` and elements `b` (triple k's
  // in lane k), results into `out`.
  std::vector<LaneProgram::Register> r = program.NewRegisters();
  std::vector<LaneProgram::Register*> where(r.size());
  for (size_t k = 0; k < r.size(); ++k) where[k] = &r[k];
  using Lanes = std::vector<std::vector<uint32_t>>;  // [operand][lane]
  auto apply = [&](const Lanes& a, const Lanes& b, int lanes) {
    for (size_t v = 0; v < n; ++v) {
      std::memcpy(r[v].bytes, a[v].data(), 4 * static_cast<size_t>(lanes));
      std::memcpy(r[n + v].bytes, b[v].data(), 4 * static_cast<size_t>(lanes));
    }
    program.Run(where.data(), lanes);
    Lanes out(n, std::vector<uint32_t>(static_cast<size_t>(lanes)));
    for (size_t v = 0; v < n; ++v) {
      std::memcpy(out[v].data(), where[program.result_register(static_cast<int>(v))]->bytes,
                  4 * static_cast<size_t>(lanes));
    }
    return out;
  };
  const size_t count = tuples.size(), triples = count * count * count;
  for (size_t first = 0; first < triples; first += kLanes) {
    const int lanes = static_cast<int>(std::min<size_t>(kLanes, triples - first));
    Lanes a(n, std::vector<uint32_t>(lanes)), b = a, c = a;
    for (int j = 0; j < lanes; ++j) {
      const size_t t = first + static_cast<size_t>(j);
      for (size_t v = 0; v < n; ++v) {
        a[v][j] = tuples[t / (count * count)][v];
        b[v][j] = tuples[t / count % count][v];
        c[v][j] = tuples[t % count][v];
      }
    }
    if (apply(apply(a, b, lanes), c, lanes) != apply(a, apply(b, c, lanes), lanes)) return false;
  }
  return true;
}

Kernel SplitRunsKernel(SplitRuns s) {
  // Pieces in whole rounds of tasks, a task of kSplitLanes per thread, or
  // else in whole tasks, where there are more than one task's: a task of a
  // few lanes costs its thread nearly a full one's time (the steps loop
  // over the lanes, but a chunk's positions are as many), and a round with
  // fewer tasks than threads leaves a thread idle. One vocabulary's argmax
  // (50257 positions) on two threads: 49 chunks of 1025 (one task, one
  // thread) took 0.24 ms at best, 0.46 at the median; 192 chunks of 261
  // (three tasks, two rounds) 0.11 and 0.14-0.20; 128 of 392 (two tasks,
  // one round) 0.11 and 0.15.
  int64_t chunks = std::min(kSplitChunks, s.inner / kMinSplitChunk);
  const int64_t round = kSplitLanes * Parallel::Threads();
  for (const int64_t whole : {round, kSplitLanes}) {
    if (s.outputs * chunks > whole) {
      chunks = std::max<int64_t>(1, s.outputs * chunks / whole * whole / s.outputs);
      break;
    }
  }
  const int64_t chunk = s.inner / chunks;  // positions; the last chunk's tail is combined one at a time
  const int64_t pieces = s.outputs * chunks;
  return [s = std::move(s), chunks, chunk, pieces](const Frame& frame) {
    const size_t n = s.n;
    const LaneProgram& program = s.program;
    std::vector<const unsigned char*> x(n), init(n);
    std::vector<unsigned char*> y(n);
    for (size_t v = 0; v < n; ++v) {
      x[v] = static_cast<const unsigned char*>(frame.At(s.in[v]));
      init[v] = static_cast<const unsigned char*>(frame.At(s.in[n + v]));
      y[v] = static_cast<unsigned char*>(frame.At(s.out[v]));
    }
    auto base_of = [&](int64_t o) {
      int64_t base = 0;
      for (size_t d = s.kept_dims.size(); d-- > 0;) {
        base += (o % s.kept_dims[d]) * s.kept_strides[d];
        o /= s.kept_dims[d];
      }
      return base;
    };
    // Operand v's value at reduced position k of output o (an iota's
    // coordinate, or the element read).
    auto element = [&](size_t v, int64_t o, int64_t k) {
      uint32_t bits;
      if (const auto& iota = s.iotas[v]) {
        const int32_t value = static_cast<int32_t>((iota->kept ? o : k) / iota->divisor % iota->size);
        std::memcpy(&bits, &value, 4);
      } else {
        std::memcpy(&bits, x[v] + 4 * (base_of(o) + k), 4);
      }
      return bits;
    };
    // After a step, each result where the next step reads its accumulator
    // (as the kernel's own loop does; `where` finds each register).
    auto keep_results = [&](std::vector<LaneProgram::Register>& r, std::vector<LaneProgram::Register*>& where,
                            std::vector<LaneProgram::Register>& stage, int lanes) {
      if (s.staged) {
        for (size_t v = 0; v < n; ++v) stage[v] = *where[program.result_register(static_cast<int>(v))];
        for (size_t v = 0; v < n; ++v) r[v] = stage[v];
        return;
      }
      for (size_t v = 0; v < n; ++v) {
        const int result = program.result_register(static_cast<int>(v));
        if (result != static_cast<int>(v)) std::memcpy(r[v].bytes, where[result]->bytes, 4 * lanes);
      }
    };
    std::vector<uint32_t> partial(static_cast<size_t>(pieces) * n);
    const int64_t tasks = (pieces + kSplitLanes - 1) / kSplitLanes;
    frame.parallel->For(tasks, 1, [&](int64_t lo, int64_t hi) {
      std::vector<LaneProgram::Register> r = program.NewRegisters(), stage(n), block(n * kSplitBlock);
      std::vector<LaneProgram::Register*> where(r.size());
      std::vector<const uint32_t*> row_at(kSplitLanes);
      std::vector<int64_t> start(kSplitLanes), output(kSplitLanes);
      std::vector<std::pair<int32_t, int64_t>> counter(n * kSplitLanes);  // reduced iotas: (coordinate, position under divisor)
      for (int64_t task = lo; task < hi; ++task) {
        const int64_t p0 = task * kSplitLanes;
        const int lanes = static_cast<int>(std::min(kSplitLanes, pieces - p0));
        for (size_t k = 0; k < r.size(); ++k) where[k] = &r[k];
        for (int j = 0; j < lanes; ++j) {
          output[j] = (p0 + j) / chunks;
          start[j] = (p0 + j) % chunks * chunk;  // the chunk's first position
        }
        // Accumulators start at the chunk's first element; iotas along a
        // kept dimension hold one value per lane all along.
        for (size_t v = 0; v < n; ++v) {
          for (int j = 0; j < lanes; ++j) {
            const uint32_t first = element(v, output[j], start[j]);
            std::memcpy(r[v].bytes + 4 * j, &first, 4);
            if (s.iotas[v] && s.iotas[v]->kept) std::memcpy(r[n + v].bytes + 4 * j, &first, 4);
            if (s.iotas[v] && !s.iotas[v]->kept) {
              const int64_t next = start[j] + 1;
              counter[v * kSplitLanes + j] = {static_cast<int32_t>(next / s.iotas[v]->divisor % s.iotas[v]->size),
                                         next % s.iotas[v]->divisor};
            }
          }
        }
        for (int64_t t0 = 1; t0 < chunk; t0 += kSplitBlock) {
          const int64_t count = std::min(kSplitBlock, chunk - t0);
          for (size_t v = 0; v < n; ++v) {
            if (s.iotas[v]) continue;
            for (int j = 0; j < lanes; ++j) {
              row_at[j] = reinterpret_cast<const uint32_t*>(x[v]) + base_of(output[j]) + start[j] + t0;
              if (t0 + kSplitAhead < chunk) PrefetchLine(row_at[j] + kSplitAhead);
            }
            GatherRowBlock(row_at.data(), lanes, static_cast<int>(count), &block[v * kSplitBlock]);
          }
          for (int64_t b = 0; b < count; ++b) {
            for (size_t v = 0; v < n; ++v) {
              const auto& iota = s.iotas[v];
              if (!iota) {
                where[n + v] = &block[v * kSplitBlock + b];
              } else if (!iota->kept) {
                for (int j = 0; j < lanes; ++j) {
                  auto& [value, below] = counter[v * kSplitLanes + j];
                  std::memcpy(r[n + v].bytes + 4 * j, &value, 4);
                  if (++below == iota->divisor) {
                    below = 0;
                    if (++value == iota->size) value = 0;
                  }
                }
              }
            }
            program.Run(where.data(), lanes);
            keep_results(r, where, stage, lanes);
          }
        }
        for (int j = 0; j < lanes; ++j) {
          for (size_t v = 0; v < n; ++v) std::memcpy(&partial[(p0 + j) * n + v], r[v].bytes + 4 * j, 4);
        }
      }
    });
    // Each output: its initial value, its chunks in order, then its tail.
    std::vector<LaneProgram::Register> r = program.NewRegisters(), stage(n);
    std::vector<LaneProgram::Register*> where(r.size());
    for (size_t k = 0; k < r.size(); ++k) where[k] = &r[k];
    for (int64_t o = 0; o < s.outputs; ++o) {
      for (size_t v = 0; v < n; ++v) std::memcpy(r[v].bytes, init[v], 4);
      for (int64_t c = 0; c < chunks; ++c) {
        for (size_t v = 0; v < n; ++v) std::memcpy(r[n + v].bytes, &partial[(o * chunks + c) * n + v], 4);
        program.Run(where.data(), 1);
        keep_results(r, where, stage, 1);
      }
      for (int64_t k = chunks * chunk; k < s.inner; ++k) {
        for (size_t v = 0; v < n; ++v) {
          const uint32_t e = element(v, o, k);
          std::memcpy(r[n + v].bytes, &e, 4);
        }
        program.Run(where.data(), 1);
        keep_results(r, where, stage, 1);
      }
      for (size_t v = 0; v < n; ++v) std::memcpy(y[v] + 4 * o, r[v].bytes, 4);
    }
  };
}

}  // namespace

bool LaneReduceComputesIota(const hlo::Instruction& i, size_t operand) {
  const hlo::Instruction& o = *i.operands.at(operand);
  return operand < i.operands.size() / 2 && o.opcode == hlo::Opcode::kIota &&
         o.shape.element_type() == ElementType::kS32 && LaneBody(i).has_value();
}

Kernel LaneReduceKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out,
                        const std::vector<bool>& computed_iotas) {
  const size_t n = out.size();
  if (in.size() != 2 * n || i.operands.size() != 2 * n) return nullptr;
  std::optional<LaneProgram> body = LaneBody(i);
  if (!body) return nullptr;
  const std::vector<int64_t>& dims = i.operands[0]->shape.dims();
  std::vector<int64_t> bytes;
  for (size_t v = 0; v < n; ++v) bytes.push_back(BytesOf(i.operands[v]->shape.element_type()));
  auto reduced_list = hlo::IntListAttribute(i, "dimensions");
  if (!reduced_list.ok()) return nullptr;
  std::vector<std::optional<IotaOperand>> iotas(n);
  for (size_t v = 0; v < n && v < computed_iotas.size(); ++v) {
    if (!computed_iotas[v]) continue;
    if (!LaneReduceComputesIota(i, v) || !(iotas[v] = IotaOf(*i.operands[v], *reduced_list))) return nullptr;
  }
  ReducedDims split = SplitReduced(dims, *reduced_list);
  std::vector<int64_t> kept_dims = std::move(split.kept_dims), kept_strides = std::move(split.kept_strides),
                       reduced_dims = std::move(split.reduced_dims), reduced_strides = std::move(split.reduced_strides);
  int64_t outputs = 1, inner = 1;
  for (int64_t d : kept_dims) outputs *= d;
  for (int64_t d : reduced_dims) inner *= d;
  // Whether the reduced dimensions are the operands' last ones, so that each
  // output's elements are one run of memory, read in order.
  std::vector<int64_t> sorted_reduced = *reduced_list;
  std::sort(sorted_reduced.begin(), sorted_reduced.end());
  bool rows_in_place = true;
  for (size_t d = 0; d < sorted_reduced.size(); ++d) {
    rows_in_place &= sorted_reduced[d] == static_cast<int64_t>(dims.size() - sorted_reduced.size() + d);
  }
  constexpr int64_t kAhead = 32;  // elements: two lines of f32 on
  constexpr int64_t kLanes = LaneProgram::kLanes;
  // Rows read in place whose read operands are all 4 bytes wide are read a
  // block at a time: kBlock positions of each lane's row (one line of f32)
  // transposed into kBlock lane registers (GatherRowBlock), 16 rows at
  // once in vector registers, where one element per lane and position was
  // moved on its own (an argmax of 4096 rows of 1000 on two cores: 3.6 ->
  // 2.5 ms).
  constexpr int64_t kBlock = 16;
  bool in_blocks = rows_in_place;
  for (size_t v = 0; v < n; ++v) in_blocks = in_blocks && (iotas[v] || bytes[v] == 4);
  const int64_t units = (outputs + kLanes - 1) / kLanes;
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, inner * kLanes));
  // A result that is another accumulator's register (a body returning its
  // accumulators swapped) is read before any accumulator is written.
  bool staged = false;
  for (size_t v = 0; v < n; ++v) {
    const int result = body->result_register(static_cast<int>(v));
    staged = staged || (result < static_cast<int>(n) && result != static_cast<int>(v));
  }
  if (in_blocks && units < Parallel::Threads() && reduced_dims.size() == 1 && reduced_strides[0] == 1 &&
      inner >= kMinSplitRun && n <= kMaxSplitOperands && body->RoundsNothing() &&
      AssociativeOnSamples(*body, n)) {
    return SplitRunsKernel(SplitRuns{*std::move(body), n, in, out, iotas, kept_dims, kept_strides, outputs, inner,
                                     staged});
  }
  return [=, program = *std::move(body)](const Frame& frame) {
    std::vector<const unsigned char*> x(n), init(n);
    std::vector<unsigned char*> y(n);
    for (size_t v = 0; v < n; ++v) {
      x[v] = static_cast<const unsigned char*>(frame.At(in[v]));
      init[v] = static_cast<const unsigned char*>(frame.At(in[n + v]));
      y[v] = static_cast<unsigned char*>(frame.At(out[v]));
    }
    frame.parallel->For(units, grain, [&](int64_t lo, int64_t hi) {
      std::vector<LaneProgram::Register> r = program.NewRegisters(), stage(staged ? n : 0);
      // Where the program finds each register: its own, but for an element
      // read in blocks, which is pointed at its row of the block.
      std::vector<LaneProgram::Register*> where(r.size());
      for (size_t k = 0; k < r.size(); ++k) where[k] = &r[k];
      std::vector<LaneProgram::Register> block(in_blocks ? n * kBlock : 0);  // operand v's position b: v * kBlock + b
      std::vector<int64_t> bases(kLanes);
      std::vector<std::pair<int32_t, int64_t>> iota_at(n);
      std::vector<const uint32_t*> row_at(in_blocks ? kLanes : 0);
      for (int64_t u = lo; u < hi; ++u) {
        const int64_t first = u * kLanes;
        const int lanes = static_cast<int>(std::min(kLanes, outputs - first));
        for (int j = 0; j < lanes; ++j) {
          int64_t o = first + j, base = 0;
          for (size_t d = kept_dims.size(); d-- > 0;) {
            base += (o % kept_dims[d]) * kept_strides[d];
            o /= kept_dims[d];
          }
          bases[j] = base;
        }
        // Accumulators (parameters 0..n-1) start at the inits.
        for (size_t v = 0; v < n; ++v) {
          if (bytes[v] == 4) {
            for (int j = 0; j < lanes; ++j) std::memcpy(r[v].bytes + 4 * j, init[v], 4);
          } else {
            for (int j = 0; j < lanes; ++j) r[v].bytes[j] = *init[v] != 0;
          }
        }
        // Iotas along a kept dimension: one value per lane, all along.
        for (size_t v = 0; v < n; ++v) {
          if (!iotas[v] || !iotas[v]->kept) continue;
          for (int j = 0; j < lanes; ++j) {
            const int32_t value = static_cast<int32_t>((first + j) / iotas[v]->divisor % iotas[v]->size);
            std::memcpy(r[n + v].bytes + 4 * j, &value, 4);
          }
        }
        // Iotas along reduced dimensions: coordinate (k / divisor) % size,
        // counted up as k moves rather than divided out at every position.
        for (size_t v = 0; v < n; ++v) iota_at[v] = {0, 0};
        ReducedWalk walk(reduced_dims, reduced_strides);
        for (int64_t k = 0; k < inner; ++k, walk.Next()) {
          const int64_t at = walk.offset();  // k itself when rows are read in place
          const int64_t in_block = k % kBlock;
          if (in_blocks && in_block == 0) {
            // The next block of each read operand's rows, transposed.
            const int64_t count = std::min(kBlock, inner - k);
            for (size_t v = 0; v < n; ++v) {
              if (iotas[v]) continue;
              const uint32_t* rows = reinterpret_cast<const uint32_t*>(x[v]) + at;
              for (int j = 0; j < lanes; ++j) {
                row_at[j] = rows + bases[j];
                if (k + kAhead < inner) PrefetchLine(row_at[j] + kAhead);
              }
              GatherRowBlock(row_at.data(), lanes, static_cast<int>(count), &block[v * kBlock]);
            }
          }
          // The elements (parameters n..2n-1), one per lane.
          for (size_t v = 0; v < n; ++v) {
            unsigned char* lane = r[n + v].bytes;
            if (iotas[v]) {
              if (iotas[v]->kept) continue;
              auto& [value, below] = iota_at[v];  // the coordinate, and k's position under its divisor
              // One value for every lane: a vector fill, where a copy per
              // lane took a sixth of an argmax's time.
              FillLanes(&r[n + v], static_cast<uint32_t>(value));
              if (++below == iotas[v]->divisor) {
                below = 0;
                if (++value == iotas[v]->size) value = 0;
              }
              continue;
            }
            if (in_blocks) {
              where[n + v] = &block[v * kBlock + in_block];
              continue;
            }
            const unsigned char* from = x[v] + at * bytes[v];
            // Rows read in place: each lane's own stream, too many for the
            // hardware's prefetchers to follow, so the lines kAhead
            // elements on are requested a line at a time.
            if (rows_in_place && (at * bytes[v]) % 64 == 0 && k + kAhead < inner) {
              for (int j = 0; j < lanes; ++j) PrefetchLine(from + bytes[v] * (bases[j] + kAhead));
            }
            if (bytes[v] == 4) {
              for (int j = 0; j < lanes; ++j) std::memcpy(lane + 4 * j, from + 4 * bases[j], 4);
            } else {
              for (int j = 0; j < lanes; ++j) lane[j] = from[bases[j]] != 0;
            }
          }
          program.Run(where.data(), lanes);
          if (staged) {
            for (size_t v = 0; v < n; ++v) stage[v] = *where[program.result_register(static_cast<int>(v))];
            for (size_t v = 0; v < n; ++v) r[v] = stage[v];
          } else {
            for (size_t v = 0; v < n; ++v) {
              const int result = program.result_register(static_cast<int>(v));
              // Through `where`: a result may be an element read in blocks.
              if (result != static_cast<int>(v)) std::memcpy(r[v].bytes, where[result]->bytes, lanes * bytes[v]);
            }
          }
        }
        for (size_t v = 0; v < n; ++v) std::memcpy(y[v] + bytes[v] * first, r[v].bytes, bytes[v] * lanes);
      }
    });
  };
}

}  // namespace anvil::cpu
