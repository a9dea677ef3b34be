#include "plugins/cpu/fusion_planner.h"

#include <algorithm>
#include <optional>
#include <span>

#include "hlo/attributes.h"
#include "hlo/patterns.h"
#include "plugins/cpu/float_functions.h"
#include "plugins/cpu/instruction_index.h"
#include "plugins/cpu/int_functions.h"
#include "plugins/cpu/kernels_fused.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

bool IsArrayOf(const hlo::Shape& s, ElementType t) { return s.IsArray() && s.element_type() == t; }

// Operand k of `i` is an array of type `t` with `i`'s dimensions.
bool SameDims(const Instruction& i, size_t k, ElementType t) {
  return k < i.operands.size() && IsArrayOf(i.operands[k]->shape, t) && i.operands[k]->shape.dims() == i.shape.dims();
}

}  // namespace

bool IsScalarSplat(const Instruction& i) {
  if (i.opcode != Opcode::kBroadcast || !i.shape.IsArray() || i.operands.size() != 1) return false;
  const ElementType t = i.shape.element_type();
  return (t == ElementType::kF32 || t == ElementType::kS32 || t == ElementType::kU32) &&
         IsArrayOf(i.operands[0]->shape, t) && i.operands[0]->shape.rank() == 0;
}

std::optional<BroadcastRun> FusedBroadcastRun(const Instruction& i) {
  if (IsScalarSplat(i)) return BroadcastRun{1, 1};
  // A bf16 scalar (filled widened to f32, as the loop holds bf16 values), a
  // pred scalar (a byte filled into every element: JAX compares a value's
  // sign with its divisor's, a constant, in `%`), an s64 or u64 scalar
  // (JAX's threefry counts elements in u64).
  for (ElementType t : {ElementType::kBF16, ElementType::kPred, ElementType::kS64, ElementType::kU64}) {
    if (i.opcode == Opcode::kBroadcast && IsArrayOf(i.shape, t) && i.operands.size() == 1 &&
        IsArrayOf(i.operands[0]->shape, t) && i.operands[0]->shape.rank() == 0) {
      return BroadcastRun{1, 1};
    }
  }
  // f32 values, and s32 and u32 ones for the loop ops that read them (a
  // one-hot's compare of labels with an iota, random bits): four bytes an
  // element either way.
  if (i.opcode != Opcode::kBroadcast || !i.shape.IsArray() || i.operands.size() != 1 ||
      (i.shape.element_type() != ElementType::kF32 && i.shape.element_type() != ElementType::kS32 &&
       i.shape.element_type() != ElementType::kU32)) {
    return std::nullopt;
  }
  const hlo::Shape& from = i.operands[0]->shape;
  if (!IsArrayOf(from, i.shape.element_type()) || !from.HasDefaultLayout() || !i.shape.HasDefaultLayout()) {
    return std::nullopt;
  }
  if (from.rank() == 0) return BroadcastRun{1, 1};  // an s32 scalar's (an f32 one is a splat, above)
  auto dims = hlo::IntListAttribute(i, "dimensions");
  if (!dims.ok() || dims->size() != static_cast<size_t>(from.rank()) || dims->empty()) return std::nullopt;
  // An operand dimension of size 1 reads index 0 whatever the result's size
  // there (JAX's softmax broadcasts its row maxima and sums from [..., 1]),
  // so it drops out; what is left must be a run of consecutive result
  // dimensions of the same sizes. None left: one element for all.
  std::vector<int64_t> kept;  // result dimensions the operand's other dimensions map to
  for (size_t k = 0; k < dims->size(); ++k) {
    const int64_t d = (*dims)[k];
    if (d < 0 || d >= i.shape.rank()) return std::nullopt;
    if (from.dims()[k] == 1) continue;
    if (i.shape.dims()[d] != from.dims()[k]) return std::nullopt;
    kept.push_back(d);
  }
  BroadcastRun run{1, 1};
  if (kept.empty()) return run;
  for (size_t k = 0; k < kept.size(); ++k) {
    if (kept[k] != kept[0] + static_cast<int64_t>(k)) return std::nullopt;
    run.size *= i.shape.dims()[kept[k]];
  }
  for (int64_t d = kept.back() + 1; d < i.shape.rank(); ++d) run.inner *= i.shape.dims()[d];
  return run;
}

bool IsFusedBroadcast(const Instruction& i) { return FusedBroadcastRun(i).has_value(); }

namespace {

// A transpose, slice or reverse of four-byte values between row-major
// arrays of a rank the strided tiles index (what every fused strided read
// needs, whatever its op).
bool StridedReadable(const Instruction& i) {
  if (i.operands.size() != 1 || !i.shape.IsArray()) return false;
  const ElementType t = i.shape.element_type();
  const hlo::Shape& from = i.operands[0]->shape;
  return (t == ElementType::kF32 || t == ElementType::kS32 || t == ElementType::kU32) && IsArrayOf(from, t) &&
         from.HasDefaultLayout() && i.shape.HasDefaultLayout() && i.shape.rank() >= 1 &&
         i.shape.rank() <= kMaxStridedRank && from.rank() == i.shape.rank() && i.shape.ElementCount() > 0;
}

// Where a strided read takes each element from, dimension by dimension:
// result index i reads operand index j, j[source[d]] = start[source[d]] +
// step[d] * i[d] (`source` permutes the dimensions; a transpose has unit
// steps, a slice its strides, a reverse -1 from the far end).
struct IndexMap {
  std::vector<int64_t> source, step, start;
};

std::optional<IndexMap> TransposeMap(const Instruction& i) {
  const int rank = i.shape.rank();
  auto perm = hlo::IntListAttribute(i, "dimensions");
  if (rank < 2 || !perm.ok() || perm->size() != static_cast<size_t>(rank)) return std::nullopt;
  const int64_t last = rank - 1;
  const bool runs = (*perm)[last] == last;
  const bool short_runs = (*perm)[last - 1] == last && i.shape.dims()[last] <= kMaxTransposedRun;
  if (!runs && !short_runs) return std::nullopt;
  IndexMap map{*perm, std::vector<int64_t>(rank, 1), std::vector<int64_t>(rank, 0)};
  std::vector<bool> seen(rank, false);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t p = (*perm)[d];
    if (p < 0 || p > last || seen[p] || i.operands[0]->shape.dims()[p] != i.shape.dims()[d]) return std::nullopt;
    seen[p] = true;
  }
  return map;
}

std::optional<IndexMap> SliceMap(const Instruction& i) {
  const hlo::Attribute* a = i.FindAttribute("slice");
  auto slice = hlo::ParseSlice(a ? a->value : "");
  const int rank = i.shape.rank();
  if (!slice.ok() || slice->size() != static_cast<size_t>(rank)) return std::nullopt;
  IndexMap map;
  for (int64_t d = 0; d < rank; ++d) {
    const hlo::SliceDim& sd = (*slice)[d];
    // The verifier checked the bounds; what the reads rely on is checked
    // again: every read element lies inside the operand.
    if (sd.stride < 1 || sd.start < 0 || sd.start + (i.shape.dims()[d] - 1) * sd.stride >= i.operands[0]->shape.dims()[d]) {
      return std::nullopt;
    }
    map.source.push_back(d);
    map.step.push_back(sd.stride);
    map.start.push_back(sd.start);
  }
  return map;
}

std::optional<IndexMap> ReverseMap(const Instruction& i) {
  auto dims = hlo::IntListAttribute(i, "dimensions");
  const int rank = i.shape.rank();
  if (!dims.ok() || i.operands[0]->shape.dims() != i.shape.dims()) return std::nullopt;
  IndexMap map{{}, std::vector<int64_t>(rank, 1), std::vector<int64_t>(rank, 0)};
  for (int64_t d = 0; d < rank; ++d) map.source.push_back(d);
  for (int64_t d : *dims) {
    if (d < 0 || d >= rank || map.step[d] < 0) return std::nullopt;
    map.step[d] = -1;
    map.start[d] = i.shape.dims()[d] - 1;
  }
  return map;
}

std::optional<IndexMap> MapOf(const Instruction& i) {
  if (!IsStridedReadOp(i) || !StridedReadable(i)) return std::nullopt;
  switch (i.opcode) {
    case Opcode::kTranspose: return TransposeMap(i);
    case Opcode::kSlice: return SliceMap(i);
    default: return ReverseMap(i);
  }
}

// `outer` reading the result of `inner`, as one map from outer's result to
// inner's operand.
IndexMap Compose(const IndexMap& outer, const IndexMap& inner) {
  IndexMap map{outer.source, outer.step, inner.start};
  for (size_t d = 0; d < outer.source.size(); ++d) {
    const int64_t e = outer.source[d];  // inner's result dimension
    map.source[d] = inner.source[e];
    map.step[d] = inner.step[e] * outer.step[d];
    map.start[inner.source[e]] = inner.start[inner.source[e]] + inner.step[e] * outer.start[e];
  }
  return map;
}

// The map as the strided tiles take it: element offsets into the row-major
// `operand`.
StridedRead Flatten(const IndexMap& map, const hlo::Shape& result, const hlo::Shape& operand) {
  std::vector<int64_t> operand_strides(static_cast<size_t>(operand.rank()), 1);
  for (int64_t d = operand.rank() - 2; d >= 0; --d) operand_strides[d] = operand_strides[d + 1] * operand.dims()[d + 1];
  StridedRead read;
  read.dims = result.dims();
  for (size_t d = 0; d < map.source.size(); ++d) read.strides.push_back(map.step[d] * operand_strides[map.source[d]]);
  for (size_t e = 0; e < map.start.size(); ++e) read.base += map.start[e] * operand_strides[e];
  return read;
}

}  // namespace

std::optional<StridedRead> FusedStridedRead(const Instruction& i) {
  auto map = MapOf(i);
  if (!map) return std::nullopt;
  return Flatten(*map, i.shape, i.operands[0]->shape);
}

bool ReadsThrough(const Instruction& outer, const Instruction& inner) {
  auto keeps_order = [](const Instruction& i) { return i.opcode == Opcode::kSlice || i.opcode == Opcode::kReverse; };
  return keeps_order(outer) && keeps_order(inner) && outer.operands.size() == 1 && outer.operands[0] == &inner &&
         MapOf(outer) && MapOf(inner);
}

StridedRead ComposedStridedRead(const std::vector<const Instruction*>& chain) {
  IndexMap map = *MapOf(*chain.front());
  for (size_t k = 1; k < chain.size(); ++k) map = Compose(map, *MapOf(*chain[k]));
  return Flatten(map, chain.front()->shape, chain.back()->operands[0]->shape);
}

bool IsStridedReadOp(const Instruction& i) {
  return i.opcode == Opcode::kTranspose || i.opcode == Opcode::kSlice || i.opcode == Opcode::kReverse;
}

std::optional<BroadcastRun> FusedIotaRun(const Instruction& i) {
  const ElementType t = i.shape.IsArray() ? i.shape.element_type() : ElementType::kPred;
  if (i.opcode != Opcode::kIota || !i.operands.empty() || !i.shape.IsArray() || i.shape.rank() == 0 ||
      !i.shape.HasDefaultLayout() ||
      (t != ElementType::kS32 && t != ElementType::kU32 && t != ElementType::kS64 && t != ElementType::kU64 &&
       t != ElementType::kF32)) {
    return std::nullopt;
  }
  auto dim = hlo::IntAttribute(i, "iota_dimension", std::nullopt);
  if (!dim.ok() || *dim < 0 || *dim >= i.shape.rank() || i.shape.dims()[*dim] == 0) return std::nullopt;
  BroadcastRun run{1, i.shape.dims()[*dim]};
  for (int64_t d = *dim + 1; d < i.shape.rank(); ++d) run.inner *= i.shape.dims()[d];
  return run;
}

bool SharesOperandMemory(const Instruction& i) {
  if (IsDegenerateBroadcast(i)) return true;
  return (i.opcode == Opcode::kReshape || i.opcode == Opcode::kBitcast) && i.operands.size() == 1 &&
         i.shape.IsArray() && i.operands[0]->shape.IsArray() && i.shape.ByteSize() == i.operands[0]->shape.ByteSize();
}

bool IsDegenerateBroadcast(const Instruction& i) {
  if (i.opcode != Opcode::kBroadcast || i.operands.size() != 1) return false;
  const hlo::Shape& from = i.operands[0]->shape;
  if (!i.shape.IsArray() || !from.IsArray() || i.shape.element_type() != from.element_type() ||
      i.shape.ElementCount() != from.ElementCount() || !i.shape.HasDefaultLayout() || !from.HasDefaultLayout()) {
    return false;
  }
  auto dims = hlo::IntListAttribute(i, "dimensions");
  if (!dims.ok() || dims->size() != static_cast<size_t>(from.rank())) return false;
  // Operand dimensions in order, each onto one of its own size; with the
  // element counts equal, every other result dimension has size 1.
  for (size_t k = 0; k < dims->size(); ++k) {
    const int64_t d = (*dims)[k];
    if (d < 0 || d >= i.shape.rank() || (k > 0 && d <= (*dims)[k - 1]) || i.shape.dims()[d] != from.dims()[k]) {
      return false;
    }
  }
  return true;
}

bool IsLoopOp(const Instruction& i) {
  constexpr ElementType kF32 = ElementType::kF32, kPred = ElementType::kPred, kS32 = ElementType::kS32,
                        kU32 = ElementType::kU32, kBF16 = ElementType::kBF16, kS64 = ElementType::kS64,
                        kU64 = ElementType::kU64;
  // An iota: its values are computed from the element's index in the loop
  // instead of being stored and read back (JAX's random bits number every
  // element; its one-hot compares labels with an iota).
  if (i.opcode == Opcode::kIota) return FusedIotaRun(i).has_value();
  auto any = [](auto) {};
  const size_t n = i.operands.size();
  // 8- and 16-bit integers: quantised values, converted from and to the
  // loop's types.
  auto narrow_int = [](ElementType t) {
    return t == ElementType::kS8 || t == ElementType::kU8 || t == ElementType::kS16 || t == ElementType::kU16;
  };
  // A convert from pred, s32, u32 or a narrow integer (a one-hot's
  // compare, an index's value, random bits, a quantised value), and a
  // bitcast-convert between four-byte types (random bits made floats).
  auto converts = [&](ElementType to) {
    if (i.opcode == Opcode::kConvert) {
      return n == 1 && (SameDims(i, 0, kPred) || SameDims(i, 0, kS32) || SameDims(i, 0, kU32) ||
                        SameDims(i, 0, kS64) || SameDims(i, 0, kU64) || (to == kF32 && SameDims(i, 0, kBF16)) ||
                        (narrow_int(i.operands[0]->shape.element_type()) &&
                         SameDims(i, 0, i.operands[0]->shape.element_type())));
    }
    return i.opcode == Opcode::kBitcastConvert && n == 1 &&
           (SameDims(i, 0, kF32) || SameDims(i, 0, kS32) || SameDims(i, 0, kU32)) &&
           i.operands[0]->shape.element_type() != to;
  };
  if (IsArrayOf(i.shape, kBF16)) {
    // bf16 values are computed in f32 registers, each op rounding its
    // result to bf16 as the one-op kernels do (kernels_elementwise.cc):
    // the four exact arithmetic ops, max, min, negate and abs, the math
    // both compute in f32 (Bf16MathInFloat), converts from f32 and
    // selects. Other math goes through double in the one-op kernel, which
    // the loop would not reproduce bit for bit.
    if (i.opcode == Opcode::kConvert) return n == 1 && SameDims(i, 0, kF32);
    if (i.opcode == Opcode::kSelect) {
      return n == 3 && SameDims(i, 0, kPred) && SameDims(i, 1, kBF16) && SameDims(i, 2, kBF16);
    }
    if (n == 2) return SameDims(i, 0, kBF16) && SameDims(i, 1, kBF16) && VisitPairableBinary(i.opcode, any);
    return n == 1 && SameDims(i, 0, kBF16) &&
           (i.opcode == Opcode::kNegate || i.opcode == Opcode::kAbs || Bf16MathInFloat(i.opcode));
  }
  if (IsArrayOf(i.shape, kS32) || IsArrayOf(i.shape, kU32) || IsArrayOf(i.shape, kS64) || IsArrayOf(i.shape, kU64)) {
    // The integer ops of int_functions.h (division and remainder too: no
    // vector instruction divides integers, but in the loop they save a
    // pass over memory each): what random bit generators (JAX's threefry)
    // and index arithmetic compute; and converts from f32, saturating. s64
    // and u64 (eight bytes an element in the loop's registers) for the
    // element counts JAX's threefry splits into u32 halves.
    const ElementType t = i.shape.element_type();
    if (converts(t) || (i.opcode == Opcode::kConvert && n == 1 && SameDims(i, 0, kF32))) return true;
    if (i.opcode == Opcode::kSelect) return n == 3 && SameDims(i, 0, kPred) && SameDims(i, 1, t) && SameDims(i, 2, t);
    if (n == 2) return SameDims(i, 0, t) && SameDims(i, 1, t) && int_fn::VisitIntBinary(i.opcode, any);
    if (n == 1) return SameDims(i, 0, t) && int_fn::VisitIntUnary(i.opcode, any);
    return false;
  }
  if (IsArrayOf(i.shape, kF32)) {
    if (i.opcode == Opcode::kSelect) return n == 3 && SameDims(i, 0, kPred) && SameDims(i, 1, kF32) && SameDims(i, 2, kF32);
    if (converts(kF32)) return true;
    if (i.opcode == Opcode::kClamp) {
      auto bound = [&](size_t k) {
        return SameDims(i, k, kF32) || (IsArrayOf(i.operands[k]->shape, kF32) && i.operands[k]->shape.rank() == 0);
      };
      return n == 3 && SameDims(i, 1, kF32) && bound(0) && bound(2);
    }
    if (n == 2) return SameDims(i, 0, kF32) && SameDims(i, 1, kF32) && VisitFloatBinary(i.opcode, any);
    if (n == 1) return SameDims(i, 0, kF32) && VisitFloatUnaryOf(i, any);
    return false;
  }
  if (i.shape.IsArray() && narrow_int(i.shape.element_type())) {
    // Converts only: from f32 (saturating, as XLA does: quantisation's
    // round, clip and convert to s8 is one loop) and from pred, s32 and u32
    // (wrapping). Arithmetic on them is left to the one-op kernels.
    return i.opcode == Opcode::kConvert && n == 1 &&
           (SameDims(i, 0, kF32) || SameDims(i, 0, kPred) || SameDims(i, 0, kS32) || SameDims(i, 0, kU32));
  }
  if (IsArrayOf(i.shape, kPred)) {
    if (i.opcode == Opcode::kCompare) {
      const std::string type = hlo::StringAttribute(i, "type");
      const bool floats = ((SameDims(i, 0, kF32) && SameDims(i, 1, kF32)) ||
                           (SameDims(i, 0, kBF16) && SameDims(i, 1, kBF16))) &&
                          (type.empty() || type == "FLOAT");
      const bool integers = ((SameDims(i, 0, kS32) && SameDims(i, 1, kS32)) ||
                             (SameDims(i, 0, kS64) && SameDims(i, 1, kS64))) &&
                            (type.empty() || type == "SIGNED");
      const bool naturals = ((SameDims(i, 0, kU32) && SameDims(i, 1, kU32)) ||
                             (SameDims(i, 0, kU64) && SameDims(i, 1, kU64)) ||
                             (SameDims(i, 0, kPred) && SameDims(i, 1, kPred))) &&
                            (type.empty() || type == "UNSIGNED");
      return n == 2 && (floats || integers || naturals) && CompareDirectionKnown(hlo::StringAttribute(i, "direction"));
    }
    if (i.opcode == Opcode::kAnd || i.opcode == Opcode::kOr || i.opcode == Opcode::kXor) {
      return n == 2 && SameDims(i, 0, kPred) && SameDims(i, 1, kPred);
    }
    if (i.opcode == Opcode::kNot) return n == 1 && SameDims(i, 0, kPred);
  }
  return false;
}

namespace {

// The dimensions an f32 reduce by add, multiply, maximum or minimum of one
// row-major operand reduces, or nothing for any other reduce.
std::optional<std::vector<int64_t>> BlockReducedDims(const Instruction& i) {
  if (i.opcode != Opcode::kReduce || i.operands.size() != 2 || i.called_computations.size() != 1) return std::nullopt;
  const hlo::Shape& in = i.operands[0]->shape;
  if (!IsArrayOf(i.shape, ElementType::kF32) || !IsArrayOf(in, ElementType::kF32) || !in.HasDefaultLayout() ||
      !i.shape.HasDefaultLayout() || !IsArrayOf(i.operands[1]->shape, ElementType::kF32) ||
      i.operands[1]->shape.rank() != 0 || in.ElementCount() == 0) {
    return std::nullopt;
  }
  const std::optional<Opcode> op = hlo::SingleOpReducer(*i.called_computations[0]);
  if (!op || (*op != Opcode::kAdd && *op != Opcode::kMultiply && *op != Opcode::kMaximum && *op != Opcode::kMinimum)) {
    return std::nullopt;
  }
  auto dims = hlo::IntListAttribute(i, "dimensions");
  if (!dims.ok() || dims->empty()) return std::nullopt;
  return std::move(dims).value();
}

}  // namespace

namespace {

// The elements of each row `i` reduces, when its reduced dimensions are the
// last ones, in order (BlockReducedDims), else 0.
int64_t ReducedRow(const Instruction& i) {
  const auto dims = BlockReducedDims(i);
  if (!dims) return 0;
  const hlo::Shape& in = i.operands[0]->shape;
  const int64_t first = in.rank() - static_cast<int64_t>(dims->size());
  int64_t row = 1;
  for (size_t k = 0; k < dims->size(); ++k) {
    if ((*dims)[k] != first + static_cast<int64_t>(k)) return 0;
    row *= in.dims()[(*dims)[k]];
  }
  return row;
}

}  // namespace

bool RowReduceInBlocks(const Instruction& i) {
  const int64_t row = ReducedRow(i);
  return row >= 1 && row <= kMaxBlockedRow;
}

bool RowReduceInChunks(const Instruction& i) {
  if (ReducedRow(i) <= kMaxBlockedRow) return false;
  const std::optional<Opcode> op = hlo::SingleOpReducer(*i.called_computations[0]);
  return op == Opcode::kAdd || op == Opcode::kMaximum || op == Opcode::kMinimum;
}

namespace {

// Whether `i` reduces the outermost dimensions of an f32 array, in order,
// keeping some (BlockReducedDims).
bool ReducesOutermost(const Instruction& i) {
  const auto dims = BlockReducedDims(i);
  if (!dims) return false;
  const hlo::Shape& in = i.operands[0]->shape;
  if (static_cast<int64_t>(dims->size()) >= in.rank()) return false;
  for (size_t k = 0; k < dims->size(); ++k) {
    if ((*dims)[k] != static_cast<int64_t>(k)) return false;
  }
  return true;
}

}  // namespace

bool ColumnReduceInBlocks(const Instruction& i) {
  const int64_t columns = i.shape.ElementCount();
  return ReducesOutermost(i) && columns >= kNarrowColumns && columns >= kMinColumnsPerThread * Parallel::Threads();
}

bool ColumnReduceInChunks(const Instruction& i) {
  if (!ReducesOutermost(i)) return false;
  const int64_t columns = i.shape.ElementCount();
  const int64_t rows = i.operands[0]->shape.ElementCount() / std::max<int64_t>(1, columns);
  const std::optional<Opcode> op = hlo::SingleOpReducer(*i.called_computations[0]);
  // One column is one contiguous row to the unfused reduce (its kept
  // dimensions of size 1 drop), summed by the row rule: fused, it must be too.
  return columns > 1 && columns < kNarrowColumns && rows >= 2 * kColumnChunkRows &&
         (op == Opcode::kAdd || op == Opcode::kMaximum || op == Opcode::kMinimum);
}

FusionPlan PlanElementwiseFusion(const hlo::Computation& computation,
                                 const std::vector<const Instruction*>& outputs) {
  const auto& instructions = computation.instructions;
  const size_t n = instructions.size();
  FusionPlan plan;
  plan.group_of.assign(n, -1);
  plan.inlined_everywhere.assign(n, false);
  // What the walks below ask of each instruction, worked out once, by its
  // index (a training step's computation has thousands).
  InstructionIndex index(n);
  for (size_t k = 0; k < n; ++k) index[instructions[k].get()] = static_cast<int>(k);
  // Every operand is an instruction of this computation.
  auto index_of = [&](const Instruction* i) { return index.Find(i); };
  // Operands by index, and users in one flat array (users of k are
  // user_list[user_begin[k]] up to user_begin[k + 1]): two allocations
  // for the whole computation rather than one or more per instruction.
  std::vector<int> operand_begin(n + 1, 0), operand_list, user_begin(n + 1, 0), user_list;
  for (size_t k = 0; k < n; ++k) {
    for (const Instruction* o : instructions[k]->operands) {
      const int ok = index_of(o);
      operand_list.push_back(ok);
      ++user_begin[ok + 1];
    }
    operand_begin[k + 1] = static_cast<int>(operand_list.size());
  }
  for (size_t k = 0; k < n; ++k) user_begin[k + 1] += user_begin[k];
  user_list.resize(operand_list.size());
  {
    std::vector<int> next(user_begin.begin(), user_begin.end() - 1);
    for (size_t k = 0; k < n; ++k) {
      for (int p = operand_begin[k]; p < operand_begin[k + 1]; ++p) user_list[next[operand_list[p]]++] = static_cast<int>(k);
    }
  }
  auto users = [&](int k) {
    return std::span<const int>(user_list.data() + user_begin[k], user_list.data() + user_begin[k + 1]);
  };
  std::vector<char> loop_op(n), fused_broadcast(n), stored(n, 0);
  std::vector<int64_t> elements(n);
  for (size_t k = 0; k < n; ++k) {
    const Instruction& i = *instructions[k];
    loop_op[k] = IsLoopOp(i);
    // A transpose, slice or reverse the loops read in place is inlined
    // into its readers as a fused broadcast is: its operand stays in
    // memory, read out of order.
    fused_broadcast[k] = IsFusedBroadcast(i) || FusedStridedRead(i).has_value();
    elements[k] = i.shape.IsArray() ? i.shape.ElementCount() : -1;
  }
  for (const Instruction* o : outputs) stored[index_of(o)] = 1;
  if (computation.root) stored[index_of(computation.root)] = 1;  // the root is stored, as outputs are
  auto operand_indices = [&](int k, std::vector<int>& out) {
    out.assign(operand_list.begin() + operand_begin[k], operand_list.begin() + operand_begin[k + 1]);
  };
  // Whether strided read `k` reads through `inner` (ReadsThrough), which
  // the loops read in place too: one read of inner's operand.
  auto reads_through = [&](int k, int inner) {
    return fused_broadcast[k] && fused_broadcast[inner] && !stored[inner] &&
           ReadsThrough(*instructions[k], *instructions[inner]);
  };
  // Whether loop op `k` is computed inside its one user's loop.
  auto fused_into_user = [&](int k) {
    if (stored[k] || !loop_op[k]) return false;
    const auto u = users(static_cast<int>(k));
    return u.size() == 1 && loop_op[u[0]] && elements[u[0]] == elements[k];
  };
  // A cheap loop op (add, subtract, multiply, negate, abs, maximum,
  // minimum) of values it would read from memory anyway, read by a few
  // loop ops of its size: recomputed inside each reader's loop rather than
  // stored once and read back by each (layer norm's x - mean, read by the
  // squares it sums and by the normalised result). Costs an op per reader,
  // saves a store and a load per element.
  constexpr size_t kMaxRecomputingReaders = 4;
  std::vector<char> recomputed(n, 0);
  for (size_t k = 0; k < n; ++k) {
    const Instruction& i = *instructions[k];
    if (!loop_op[k] || stored[k] || !IsArrayOf(i.shape, ElementType::kF32)) continue;
    switch (i.opcode) {
      case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kNegate: case Opcode::kAbs:
      case Opcode::kMaximum: case Opcode::kMinimum: break;
      default: continue;
    }
    const auto u = users(static_cast<int>(k));
    if (u.size() < 2 || u.size() > kMaxRecomputingReaders) continue;
    if (!std::all_of(u.begin(), u.end(), [&](int user) { return loop_op[user] && elements[user] == elements[k]; })) {
      continue;
    }
    bool leaf = true;  // its operands are stored values or fused broadcasts: nothing else is recomputed with it
    for (int p = operand_begin[k]; p < operand_begin[k + 1]; ++p) {
      const int o = operand_list[p];
      leaf &= fused_broadcast[o] || !loop_op[o] || stored[o] || users(o).size() != 1;
    }
    recomputed[k] = leaf;
  }
  std::vector<char> in_group(n, 0);
  std::vector<int> operands;
  std::vector<int> members;  // a group's indices, in the order they join
  std::vector<int> stack;
  for (size_t r = n; r-- > 0;) {
    const int root = static_cast<int>(r);
    if (!loop_op[root] || fused_into_user(root) || plan.group_of[root] >= 0 || recomputed[root]) continue;
    members.clear();
    // Adds `start` and, through operands fused into their one user and
    // fused broadcasts, the tree of producers computed in its loop.
    auto collect = [&](int start) {
      stack.assign(1, start);
      while (!stack.empty()) {
        const int k = stack.back();
        stack.pop_back();
        if (in_group[k]) continue;
        in_group[k] = 1;
        members.push_back(k);
        if (fused_broadcast[k]) {
          // A strided read of a strided read reads through it: the inner
          // one joins the group (a link of the chain, no value of its own
          // there) and its operand is the group's input.
          if (const int inner = operand_list[operand_begin[k]]; reads_through(k, inner)) stack.push_back(inner);
          continue;
        }
        for (int p = operand_begin[k + 1]; p-- > operand_begin[k];) {
          const int ok = operand_list[p];
          if (fused_into_user(ok) || fused_broadcast[ok] || recomputed[ok]) stack.push_back(ok);
        }
      }
    };
    collect(root);
    // Then the group grows into a DAG: a loop op every user of which is in
    // the group (GELU's x, read by four of its ops) is computed once, into
    // a register, rather than stored and read back. Kept only if the
    // registers still suffice.
    const size_t tree_size = members.size();
    auto joins = [&](int o) {
      if (in_group[o] || stored[o] || !loop_op[o] || plan.group_of[o] >= 0 || elements[o] != elements[root]) {
        return false;
      }
      // A recomputed user counts only when every reader of it is in the
      // group too: otherwise the other groups that recompute it read `o`
      // as well, so `o` must be stored (GELU's erf, where |x| is
      // recomputed by several readers of x). Where all its readers are
      // here, it is computed here alone (exact GELU's erfc: |x / sqrt 2|
      // and -(x / sqrt 2)^2, each read by a few ops of the one loop).
      // Nor does a fused broadcast or strided read count: it reads its operand
      // from memory, out of the tile's order, so that operand must be stored.
      // Those readers must not be recomputed themselves: a recomputed op
      // has no group of its own, so one read by another is stored after
      // all (its step reads `o`) when the planner sees its readers in no
      // group (-|o| read by two recomputed ops).
      auto all_readers_here = [&](int k) {
        const auto r = users(k);
        return std::all_of(r.begin(), r.end(),
                           [&](int reader) { return in_group[reader] != 0 && !recomputed[reader]; });
      };
      const auto u = users(o);
      return !u.empty() && std::all_of(u.begin(), u.end(), [&](int user) {
               return in_group[user] != 0 && !fused_broadcast[user] && (!recomputed[user] || all_readers_here(user));
             });
    };
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t m = 0; m < members.size(); ++m) {
        if (fused_broadcast[members[m]]) continue;
        operand_indices(members[m], operands);
        for (int o : operands) {
          if (joins(o)) {
            collect(o);
            grew = true;
          }
        }
      }
    }
    auto as_instructions = [&](std::vector<int> ks) {
      std::sort(ks.begin(), ks.end());
      std::vector<const Instruction*> out;
      out.reserve(ks.size());
      for (int k : ks) out.push_back(instructions[k].get());
      return out;
    };
    // The registers the grown group needs, once it has been counted. Every
    // member but the root holds at most one, so a group of at most
    // kMaxFusedRegisters + 1 members fits without counting (most do).
    int registers = -1;
    constexpr size_t kSurelyFits = kMaxFusedRegisters + 1;
    if (members.size() > tree_size && members.size() > kSurelyFits) {
      registers = FusedRegistersNeeded(as_instructions(members));
      if (registers > kMaxFusedRegisters) {
        for (size_t m = tree_size; m < members.size(); ++m) in_group[members[m]] = 0;
        members.resize(tree_size);
        registers = -1;
      }
    }
    bool fused = members.size() >= 2;  // else nothing to fuse: the one-op kernel does
    FusionGroup group;
    if (fused) {
      group.members = as_instructions(members);
      for (const Instruction* m : group.members) {
        if (IsStridedReadOp(*m)) {
          // What a strided read reads through it reads from memory, even a
          // member the loop also holds in a register (a broadcast that the
          // loop reads both as it is and reversed): that one is stored too,
          // its strided reader being in no group.
          const Instruction* source =
              StridedReadChain(*m, [&](const Instruction* i) { return in_group[index_of(i)] != 0; })
                  .back()
                  ->operands[0];
          if (std::find(group.inputs.begin(), group.inputs.end(), source) == group.inputs.end()) {
            group.inputs.push_back(source);
          }
          continue;
        }
        for (const Instruction* o : m->operands) {
          if (!in_group[index_of(o)] && std::find(group.inputs.begin(), group.inputs.end(), o) == group.inputs.end()) {
            group.inputs.push_back(o);
          }
        }
      }
      // A tree so bushy that its tiles would not fit the loop's registers
      // stays unfused (no program seen needs more than a few).
      if (registers < 0 && group.members.size() > kSurelyFits) registers = FusedRegistersNeeded(group.members);
      fused = registers <= kMaxFusedRegisters;
    }
    for (int k : members) in_group[k] = 0;
    if (!fused) continue;
    const int g = static_cast<int>(plan.groups.size());
    for (int k : members) {
      if (!fused_broadcast[k] && !recomputed[k]) plan.group_of[k] = g;
    }
    plan.groups.push_back(std::move(group));
  }
  // A reduce of rows or of columns computes a loop op operand (and that
  // op's group) block by block, instead of reading it stored: one that it
  // alone reads, or one that is also read, but only after the reduce, which
  // the reduce then stores as it computes it (root_stored).
  plan.reduce_group.assign(n, -1);
  for (size_t k = 0; k < n; ++k) {
    if (!RowReduceInBlocks(*instructions[k]) && !RowReduceInChunks(*instructions[k]) &&
        !ColumnReduceInBlocks(*instructions[k]) && !ColumnReduceInChunks(*instructions[k])) {
      continue;
    }
    const int o = operand_list[operand_begin[k]];
    if (stored[o] || !loop_op[o] || recomputed[o] || operand_list[operand_begin[k] + 1] == o) continue;
    // Read by the reduce alone, or by others too, all after it: the
    // reduce's step then stores the value as it computes it.
    const auto u = users(o);
    const bool alone = u.size() == 1;
    if (!std::all_of(u.begin(), u.end(), [&](int user) { return user >= static_cast<int>(k); })) continue;
    if (plan.group_of[o] >= 0 && plan.groups[plan.group_of[o]].reduce) continue;  // another reduce computes it
    int g = plan.group_of[o];
    if (g < 0) {
      // A loop op fused with nothing: a group of its own, for the reduce.
      FusionGroup group;
      group.members = {instructions[o].get()};
      for (const Instruction* input : instructions[o]->operands) {
        if (std::find(group.inputs.begin(), group.inputs.end(), input) == group.inputs.end()) {
          group.inputs.push_back(input);
        }
      }
      g = static_cast<int>(plan.groups.size());
      plan.group_of[o] = g;
      plan.groups.push_back(std::move(group));
    }
    plan.groups[g].reduce = instructions[k].get();
    plan.groups[g].root_stored = !alone;
    plan.reduce_group[k] = g;
  }
  // A recomputed op is stored only when one of its readers ended in no
  // group (the groups that hold it still recompute it).
  for (size_t k = 0; k < n; ++k) {
    if (!recomputed[k]) continue;
    const auto u = users(static_cast<int>(k));
    plan.inlined_everywhere[k] = std::all_of(u.begin(), u.end(), [&](int user) { return plan.group_of[user] >= 0; });
  }
  // A fused broadcast is stored only when something outside a group reads
  // it; a link of a chain of strided reads, when a reader is stored.
  // Readers come after what they read: the last are decided first.
  for (size_t k = n; k-- > 0;) {
    if (!fused_broadcast[k] || stored[k]) continue;
    const auto u = users(static_cast<int>(k));
    plan.inlined_everywhere[k] = !u.empty() && std::all_of(u.begin(), u.end(), [&](int user) {
      return plan.group_of[user] >= 0 || (recomputed[user] && plan.inlined_everywhere[user]) ||
             (reads_through(user, static_cast<int>(k)) && plan.inlined_everywhere[user]);
    });
  }
  return plan;
}

}  // namespace anvil::cpu
