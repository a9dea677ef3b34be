#include "plugins/cpu/kernels_fused.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 gather intrinsics start from a self-initialised undefined
// vector, which -Wmaybe-uninitialized reports; no undefined lane is read
// (as in row_sums.cc).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "hlo/attributes.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/float_functions.h"
#include "plugins/cpu/fusion_planner.h"
#include "plugins/cpu/int_functions.h"
#include "plugins/cpu/isa.h"
#include "plugins/cpu/prefetch.h"
#include "plugins/cpu/streamed_stores.h"

namespace anvil::cpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr int64_t kGrain = 1 << 15;

using TileFn = void (*)(const void*, const void*, const void*, void*, int64_t);

// What an op chain's tile function (fused_tiles.inc's HornerTile) reads
// for one tile besides x and the starting p: per step, its op, where its
// term comes from (the chain's x, one value for every element in `values`,
// or a tile in `terms`) and on which side of the op the term stands, all
// in one code (Code), which the tile's loop switches on.
constexpr int kMaxHornerSteps = 64;
// HornerTile's switches name the ops by these indices.
static_assert(static_cast<int>(ChainBinary::kAdd) == 0 && static_cast<int>(ChainBinary::kSubtract) == 1 &&
              static_cast<int>(ChainBinary::kMultiply) == 2 && static_cast<int>(ChainBinary::kDivide) == 3 &&
              static_cast<int>(ChainBinary::kSquare) == 4);
struct HornerArgs {
  enum Operand : uint8_t { kX, kValue, kTile };
  static constexpr uint8_t Code(ChainBinary op, Operand operand, bool term_first) {
    return static_cast<uint8_t>(static_cast<int>(op) * 6 + static_cast<int>(operand) * 2 + (term_first ? 1 : 0));
  }
  int count = 0;
  float start = 0;  // the starting p when it is one value (no p tile)
  uint8_t code[kMaxHornerSteps];
  const float* terms[kMaxHornerSteps];
  float values[kMaxHornerSteps];
};

// The tile functions, compiled three times: for the baseline x86-64 the
// plugin is built for, for AVX2 and for AVX-512 (chosen at run time by what
// the CPU has; the elementwise chain: 27 ms with AVX2, 12 ms with AVX-512).
// No multiply-add is ever contracted (-ffp-contract=off, CMakeLists.txt): it
// would round once where the one-op kernels round twice, and fusion must
// not change a bit. The explicit fused multiply-adds of float_functions.h
// (MulAdd) are the same bits everywhere; the AVX2 copy is built with FMA
// so that they are one instruction there, as with AVX-512 (isa.h checks
// the CPU has it). Everything the .inc defines lands in its own namespace,
// so no wider copy of a function can stand in for a narrower one.
// kHornerBlocks: HornerTile's blocks of sixteen floats in flight: eight
// AVX-512 registers for p beside eight for x (half the register file), or
// two blocks where a block takes two AVX2 or four SSE registers (four
// spilled to the stack there).
namespace baseline {
constexpr int kHornerBlocks = 2;
#include "plugins/cpu/fused_tiles.inc"
}  // namespace baseline
#if defined(__x86_64__) && defined(__GNUC__)
#define ANVIL_HAVE_WIDE_TILES 1
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
constexpr int kHornerBlocks = 2;
#include "plugins/cpu/fused_tiles.inc"
}  // namespace avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw", "prefer-vector-width=512")
namespace avx512 {
constexpr int kHornerBlocks = 8;
#include "plugins/cpu/fused_tiles.inc"
}  // namespace avx512
#pragma GCC pop_options
#endif

// The tile function of loop op `m` for the CPU this runs on, or nullptr
// (`scalars`: fused_tiles.inc's TileFunction).
TileFn TileFunction(const Instruction& m, int scalars) {
#ifdef ANVIL_HAVE_WIDE_TILES
  if (HostTileIsa() == Isa::kAvx512) return avx512::TileFunction(m, scalars);
  if (HostTileIsa() == Isa::kAvx2) return avx2::TileFunction(m, scalars);
#endif
  return baseline::TileFunction(m, scalars);
}

// The op that loads a bf16 array the group reads (`splat` false) or fills
// a tile with a bf16 scalar (`splat`: a broadcast of one the group fuses)
// widened to f32, and the one that narrows a bf16 root's register into the
// result. Which one is the caller's to say: an input computed by another
// step may itself be a broadcast (of a bf16 row, stored), and is an array
// in memory like any other.
TileFn TileFunctionWidening(bool splat) {
#ifdef ANVIL_HAVE_WIDE_TILES
  if (HostTileIsa() == Isa::kAvx512) return splat ? &avx512::SplatBf16Tile : &avx512::WidenBf16Tile;
  if (HostTileIsa() == Isa::kAvx2) return splat ? &avx2::SplatBf16Tile : &avx2::WidenBf16Tile;
#endif
  return splat ? &baseline::SplatBf16Tile : &baseline::WidenBf16Tile;
}
TileFn TileFunctionNarrowing(const Instruction&) {
#ifdef ANVIL_HAVE_WIDE_TILES
  if (HostTileIsa() == Isa::kAvx512) return &avx512::NarrowBf16Tile;
  if (HostTileIsa() == Isa::kAvx2) return &avx2::NarrowBf16Tile;
#endif
  return &baseline::NarrowBf16Tile;
}

// HornerTile built for `isa` (the host's for the loops; each in turn for tests).
TileFn HornerTileFor(Isa isa) {
#ifdef ANVIL_HAVE_WIDE_TILES
  if (isa == Isa::kAvx512) return &avx512::HornerTile;
  if (isa == Isa::kAvx2) return &avx2::HornerTile;
#endif
  return &baseline::HornerTile;
}

TileFn ByConstantTileFunction(const Instruction& m) {
#ifdef ANVIL_HAVE_WIDE_TILES
  if (HostTileIsa() == Isa::kAvx512) return avx512::ByConstantFunction(m);
  if (HostTileIsa() == Isa::kAvx2) return avx2::ByConstantFunction(m);
#endif
  return baseline::ByConstantFunction(m);
}

TileFn PairTileFunction(Opcode first, Opcode second, bool first_is_lhs, int scalars) {
#ifdef ANVIL_HAVE_WIDE_TILES
  if (HostTileIsa() == Isa::kAvx512) return avx512::PairFunction(first, second, first_is_lhs, scalars);
  if (HostTileIsa() == Isa::kAvx2) return avx2::PairFunction(first, second, first_is_lhs, scalars);
#endif
  return baseline::PairFunction(first, second, first_is_lhs, scalars);
}

// A map from a group's instructions to ints, as one sorted vector: groups
// hold a handful to a few hundred members, and a training step plans
// thousands of groups, so this costs one allocation where a hash map
// costs one per entry. Entries are added first, then sorted once.
class InstructionMap {
 public:
  void Reserve(size_t n) { entries_.reserve(n); }
  void Add(const Instruction* i, int value) { entries_.emplace_back(i, value); }
  void Sort() { std::sort(entries_.begin(), entries_.end()); }
  // The value of `i` (the first added, if several were), or nullptr.
  int* Find(const Instruction* i) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), std::make_pair(i, INT_MIN));
    return it != entries_.end() && it->first == i ? &it->second : nullptr;
  }
  const int* Find(const Instruction* i) const { return const_cast<InstructionMap*>(this)->Find(i); }
  // Folds entries of one instruction into the first, summing their values.
  void SumDuplicates() {
    size_t w = 0;
    for (size_t r = 0; r < entries_.size(); ++r) {
      if (w > 0 && entries_[w - 1].first == entries_[r].first) {
        entries_[w - 1].second += entries_[r].second;
      } else {
        entries_[w++] = entries_[r];
      }
    }
    entries_.resize(w);
  }

 private:
  std::vector<std::pair<const Instruction*, int>> entries_;
};

// How many times the group's members read each value.
InstructionMap CountReads(const std::vector<const Instruction*>& members) {
  InstructionMap reads;
  size_t operands = 0;
  for (const Instruction* m : members) operands += m->operands.size();
  reads.Reserve(operands);
  for (const Instruction* m : members) {
    // A strided read reads memory, never a register, even when what it
    // reads through is a member too (a slice the loop also reads in place).
    if (IsStridedReadOp(*m)) continue;
    for (const Instruction* o : m->operands) reads.Add(o, 1);
  }
  reads.Sort();
  reads.SumDuplicates();
  return reads;
}

bool IsF32(const Instruction* i) { return i->shape.element_type() == hlo::ElementType::kF32; }
bool IsBf16(const Instruction* i) { return i->shape.element_type() == hlo::ElementType::kBF16; }
bool IsPred(const Instruction* i) { return i->shape.element_type() == hlo::ElementType::kPred; }

// A pred scalar (`x`: its byte) in every element of a tile; an s64 or u64
// one.
void SplatByteTile(const void* x, const void*, const void*, void* y, int64_t n) {
  std::memset(y, *static_cast<const uint8_t*>(x), static_cast<size_t>(n));
}
void Splat8Tile(const void* x, const void*, const void*, void* y, int64_t n) {
  uint64_t value;
  std::memcpy(&value, x, sizeof value);
  std::fill_n(static_cast<uint64_t*>(y), n, value);
}
bool IsEightBytes(const Instruction* i) { return hlo::Info(i->shape.element_type()).byte_size == 8; }

// Elements [t, t + n) of an iota whose element e is (e / inner) % size
// (FusedIotaRun), as T.
using IotaFn = void (*)(const BroadcastRun&, int64_t, void*, int64_t);
template <typename T>
void IotaTile(const BroadcastRun& run, int64_t t, void* y, int64_t n) {
  T* out = static_cast<T*>(y);
  int64_t at = (t / run.inner) % run.size;
  if (run.inner == 1) {  // counting up, from 0 again after size
    for (int64_t k = 0; k < n;) {
      const int64_t m = std::min(n - k, run.size - at);
      for (int64_t j = 0; j < m; ++j) out[k + j] = static_cast<T>(at + j);
      k += m;
      at = 0;
    }
    return;
  }
  int64_t left = run.inner - t % run.inner;  // elements before the value moves on
  for (int64_t k = 0; k < n;) {
    const int64_t m = std::min(n - k, left);
    std::fill_n(out + k, m, static_cast<T>(at));
    k += m;
    left = run.inner;
    if (++at == run.size) at = 0;
  }
}
IotaFn IotaFunction(hlo::ElementType t) {
  switch (t) {
    case hlo::ElementType::kS32: return &IotaTile<int32_t>;
    case hlo::ElementType::kU32: return &IotaTile<uint32_t>;
    case hlo::ElementType::kS64: return &IotaTile<int64_t>;
    case hlo::ElementType::kU64: return &IotaTile<uint64_t>;
    case hlo::ElementType::kF32: return &IotaTile<float>;
    default: return nullptr;
  }
}

// The group's members, each mapped to its position.
InstructionMap MemberMap(const std::vector<const Instruction*>& members) {
  InstructionMap map;
  map.Reserve(members.size());
  for (size_t k = 0; k < members.size(); ++k) map.Add(members[k], static_cast<int>(k));
  map.Sort();
  return map;
}

// A splat a tile function can read as one scalar (In, InBf16): of an f32,
// s32 or u32 scalar (IsScalarSplat), or of a bf16 scalar the group reads
// from memory, whose two bytes are widened when read (one the group
// computes is held widened in a register already, and is filled instead).
bool SplatReadAsScalar(const Instruction& i, const InstructionMap& members) {
  if (IsScalarSplat(i)) return true;
  return i.opcode == Opcode::kBroadcast && IsBf16(&i) && i.operands.size() == 1 && IsBf16(i.operands[0]) &&
         i.operands[0]->shape.rank() == 0 && !members.Find(i.operands[0]);
}

// Which operands of member `m` are splatted constants of the group that its
// tile function reads as one scalar each, as a mask (bit k: operand k).
// f32, s32 and u32 binary ops take one, and one operand at most (the
// second, when both could be): a constant in an add, a multiply or a shift
// then costs no pass to fill a tile. A select of those types takes both
// of its values (JAX's where(mask, x, 0), and erf_inv's choices between
// two coefficients, filled twice per tile before).
int ScalarOperands(const Instruction& m, const InstructionMap& members) {
  const hlo::ElementType t = m.shape.element_type();
  const bool four_bytes = t == hlo::ElementType::kF32 || t == hlo::ElementType::kS32 || t == hlo::ElementType::kU32;
  auto splat = [&](size_t k) { return SplatReadAsScalar(*m.operands[k], members) && members.Find(m.operands[k]); };
  if (m.opcode == Opcode::kSelect && four_bytes && m.operands.size() == 3) {
    return (splat(1) ? 2 : 0) | (splat(2) ? 4 : 0);
  }
  const bool takes_scalar = (IsF32(&m) && VisitFloatBinary(m.opcode, [](auto) {})) ||
                            (IsBf16(&m) && VisitPairableBinary(m.opcode, [](auto) {})) ||
                            ((t == hlo::ElementType::kS32 || t == hlo::ElementType::kU32) &&
                             int_fn::VisitIntBinary(m.opcode, [](auto) {}));
  if (m.operands.size() != 2 || !takes_scalar || m.operands[0] == m.operands[1]) return 0;
  for (int k : {1, 0}) {
    if (splat(static_cast<size_t>(k))) return 1 << k;
  }
  return 0;
}

// The members that get a register and a pass: all but the splats that
// every reader in the group reads as a scalar (ScalarOperands). Each
// broadcast left (its operand is outside the group) comes just before its
// first reader rather than where the program defines it: programs define
// their constants first (JAX's erf_inv: 22 splats, read by selects along a
// polynomial), and filled at the top each would hold a register until its
// reader, past the loop's registers. Each bf16 array the group reads is
// an entry too (not a member): loaded widened to f32 into a register just
// before its first reader, since the loop computes bf16 values in f32.
std::vector<const Instruction*> TiledMembers(const std::vector<const Instruction*>& members) {
  const InstructionMap member_map = MemberMap(members);
  InstructionMap tiled_reads;  // reads of each splat that need its tile
  for (const Instruction* m : members) {
    const int scalars = ScalarOperands(*m, member_map);
    for (size_t k = 0; k < m->operands.size(); ++k) {
      if (!((scalars >> k) & 1) && SplatReadAsScalar(*m->operands[k], member_map)) tiled_reads.Add(m->operands[k], 1);
    }
  }
  tiled_reads.Sort();
  std::vector<const Instruction*> tiled, waiting, loaded;  // waiting: broadcasts not yet read
  tiled.reserve(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    const Instruction* m = members[k];
    const bool root = k + 1 == members.size();
    // A group's broadcasts are all fused ones (the planner collects no
    // other); an iota, which reads nothing either, and a fused transpose,
    // slice or reverse, which reads an input, are placed as they are.
    const bool broadcast = m->opcode == Opcode::kBroadcast || m->opcode == Opcode::kIota || IsStridedReadOp(*m);
    if (!root && broadcast) {
      if (!SplatReadAsScalar(*m, member_map) || tiled_reads.Find(m)) waiting.push_back(m);
      continue;
    }
    for (const Instruction* o : m->operands) {
      if (auto w = std::find(waiting.begin(), waiting.end(), o); w != waiting.end()) {
        tiled.push_back(o);
        waiting.erase(w);
      } else if (!broadcast && IsBf16(o) && !member_map.Find(o) &&
                 std::find(loaded.begin(), loaded.end(), o) == loaded.end()) {
        tiled.push_back(o);
        loaded.push_back(o);
      }
    }
    tiled.push_back(m);
  }
  return tiled;
}

// Whether the group's root is bf16: computed into a register like every
// other value, then narrowed into the result by an op of its own.
bool NarrowsRoot(const std::vector<const Instruction*>& tiled) { return !tiled.empty() && IsBf16(tiled.back()); }

// Registers by linear scan: a member's register is free once its last
// reader in the group has read it, then the next member takes the lowest
// free one. The result may overwrite an operand of its own element size
// (each tile function reads element k before writing element k), but not
// one of another size: a select's f32 results would overwrite the pred
// bytes of elements it has not read yet.
struct Allocation {
  InstructionMap register_of;  // every member but the root
  int peak = 0;
  // The register of `i`, or -1 when it is no member with one.
  int RegisterOf(const Instruction* i) const {
    const int* r = register_of.Find(i);
    return r ? *r : -1;
  }
};
// The term of a step that reads none (kSquare): no register or input.
constexpr int kNoTerm = std::numeric_limits<int>::min();

// The chain op of an f32 add, subtract, multiply or divide.
std::optional<ChainBinary> ChainOpOf(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: return ChainBinary::kAdd;
    case Opcode::kSubtract: return ChainBinary::kSubtract;
    case Opcode::kMultiply: return ChainBinary::kMultiply;
    case Opcode::kDivide: return ChainBinary::kDivide;
    default: return std::nullopt;
  }
}

// Whether member m is an f32 op of two f32 operands, neither a rank-0
// value read beside an array (what pairs and chains take).
bool F32OfTwoF32Arrays(const Instruction& m) {
  if (m.operands.size() != 2 || !IsF32(&m)) return false;
  for (const Instruction* o : m.operands) {
    if (!IsF32(o) || (o->shape.rank() == 0 && m.shape.rank() > 0)) return false;
  }
  return true;
}

// Whether member m may be a step of an op chain (HornerOps): an f32 add,
// subtract, multiply or divide of two f32 arrays, or a square.
bool MayChain(const Instruction* m) {
  return F32OfTwoF32Arrays(*m) && ChainOpOf(m->opcode) &&
         (m->operands[0] != m->operands[1] || m->opcode == Opcode::kMultiply);
}

// An op chain reads every step's operands when its last step runs, so
// those operands' registers are held until then (`held[k]`: what member k,
// a chain's last step, reads besides its own operands). Otherwise a
// register freed after one step (layer norm's row mean, after x - mean)
// would take the next step's term (the row scale) and end the chain there.
std::vector<std::vector<const Instruction*>> ChainHolds(const std::vector<const Instruction*>& members,
                                                         const InstructionMap& reads) {
  std::vector<std::vector<const Instruction*>> held(members.size());
  std::vector<bool> chained(members.size(), false);
  std::vector<size_t> steps;
  for (size_t k = 0; k < members.size(); ++k) {
    if (chained[k] || !MayChain(members[k])) continue;
    steps.assign({k});
    for (size_t at = k;;) {
      const int* n = reads.Find(members[at]);
      if (!n || *n > 2) break;
      size_t next = at + 1;
      while (next < members.size() && std::find(members[next]->operands.begin(), members[next]->operands.end(),
                                                members[at]) == members[next]->operands.end()) {
        ++next;
      }
      if (next == members.size() || !MayChain(members[next])) break;
      const auto& uses = members[next]->operands;
      if (*n != (uses[0] == members[at]) + (uses[1] == members[at])) break;  // read by another member too
      steps.push_back(next);
      at = next;
    }
    const bool squares = std::any_of(steps.begin(), steps.end(), [&](size_t j) {
      return members[j]->operands[0] == members[j]->operands[1];
    });
    if (steps.size() < (squares ? 2u : 3u)) continue;  // as HornerOps takes them
    for (size_t j = 0; j < steps.size(); ++j) {
      chained[steps[j]] = true;
      for (const Instruction* o : members[steps[j]]->operands) {
        if (j == 0 || o != members[steps[j - 1]]) held[steps.back()].push_back(o);
      }
    }
  }
  return held;
}

Allocation AllocateRegisters(const std::vector<const Instruction*>& members) {
  Allocation a;
  InstructionMap reads_left = CountReads(members);
  const std::vector<std::vector<const Instruction*>> held = ChainHolds(members, reads_left);
  for (const std::vector<const Instruction*>& h : held) {
    for (const Instruction* o : h) {
      if (int* n = reads_left.Find(o)) ++*n;
    }
  }
  // Every member but the root (a bf16 root too) gets a register, set as
  // the scan reaches it.
  const size_t with_registers = members.size() - (NarrowsRoot(members) ? 0 : 1);
  a.register_of.Reserve(with_registers);
  for (size_t k = 0; k < with_registers; ++k) a.register_of.Add(members[k], -1);
  a.register_of.Sort();
  std::vector<bool> busy(members.size(), false);
  std::vector<int> free_after;
  // What a register holds of an element: its type's bytes (a byte of pred
  // and s8, two of s16), bf16 held as f32. An op writes into a register
  // an operand frees only when both are the same size: a narrower result
  // would overwrite operand elements not yet read.
  auto size = [](const Instruction* i) { return IsBf16(i) ? 4 : hlo::Info(i->shape.element_type()).byte_size; };
  for (size_t k = 0; k < members.size(); ++k) {
    const Instruction* m = members[k];
    free_after.clear();
    auto release = [&](const Instruction* o) {
      const int r = a.RegisterOf(o);
      if (r < 0 || --*reads_left.Find(o) != 0) return;
      if (size(o) == size(m)) {
        busy[r] = false;
      } else {
        free_after.push_back(r);
      }
    };
    // A strided read (transpose, slice, reverse) reads its operand from
    // memory, never from a register, and CountReads counts no read of it:
    // releasing it here freed a bf16 input's register while a later op
    // still read it (x - reverse(x) read the reverse twice).
    if (!IsStridedReadOp(*m)) {
      for (const Instruction* o : m->operands) release(o);
    }
    for (const Instruction* o : held[k]) release(o);
    if (k < with_registers) {  // the root writes the output
      int r = 0;
      while (busy[r]) ++r;
      busy[r] = true;
      *a.register_of.Find(m) = r;
      a.peak = std::max(a.peak, r + 1);
    }
    for (int r : free_after) busy[r] = false;
  }
  return a;
}

// One step of the tile program. Operands name a register (>= 0) or an
// input (-1 - k); the result goes to register `out`, or to the kernel's
// output when `out` is -1 (the root). A splat fills its register with a
// scalar input (f32 or s32: four bytes either way). A broadcast of a row (a bias) whose tile lies inside one
// run of the row fills nothing: its register is a view of the row.
struct FusedOp {
  TileFn fn = nullptr;  // nullptr: a broadcast of input `a` (a splat when size is 1)
  int a = 0, b = 0, c = 0;
  bool has_b = false, has_c = false;
  int scalars = 0;  // bit 0: `a` is read as one scalar, bit 1: `b`, bit 2: `c`
  int out = -1;
  BroadcastRun broadcast;
  const Instruction* member = nullptr;  // what it computes (the second of a pair)
  int divisor = -1;  // an integer division's constant divisor (TiledLoop::divisors), passed as `c`
  IotaFn iota = nullptr;  // an iota along `broadcast`'s run (fn is then nullptr)
  int strided = -1;       // a strided read of input `a` (TiledLoop::strided_reads; fn is then nullptr)
  int horner = -1;        // a Horner chain (TiledLoop::horners): x is `a`, the starting p `b`
  // A pair (PairOps): its first op, which reads `a` and `b`, and whether
  // its result is the second's left operand.
  const Instruction* pair_first = nullptr;
  bool pair_first_is_lhs = false;
  // Register operands (bit k: 0 a, 1 b, 2 c) that a broadcast may leave
  // unfilled, holding one value throughout a tile (PlanUniformBroadcasts),
  // and fn with each subset of them read as one scalar each (indexed by
  // the subset's bits; entry 0 is fn).
  int uniform_operands = 0;
  TileFn fn_uniform[8] = {};
  // A broadcast op all of whose readers have such a variant: on a tile
  // inside one run of equal values it fills nothing.
  bool skips_uniform_fill = false;
};

// An op chain that HornerOps made one op: per step, its op, whether its
// term is the chain's x (the op's `a`), else the term's operand (a register
// or an input, as FusedOp's operands) and whether that is read as one
// scalar, and whether the term stands before p.
struct HornerChain {
  std::vector<ChainBinary> ops;
  std::vector<bool> reads_x;
  std::vector<int> terms;
  std::vector<bool> scalar_terms;
  std::vector<bool> term_first;
  size_t steps() const { return ops.size(); }
  void Clear() {
    ops.clear();
    reads_x.clear();
    terms.clear();
    scalar_terms.clear();
    term_first.clear();
  }
  void Add(ChainBinary op, int term, bool scalar, bool first) {
    ops.push_back(op);
    reads_x.push_back(false);
    terms.push_back(term);
    scalar_terms.push_back(scalar);
    term_first.push_back(first);
  }
};

// The divisor of an s32 or u32 divide or remainder that is a broadcast of a
// nonzero constant scalar, or nullopt (a zero divisor keeps the generic
// functor's rule, as does one read from memory).
std::optional<int_fn::ConstantDivisor> ConstantDivisorOf(const Instruction& m) {
  const hlo::ElementType t = m.shape.element_type();
  if ((m.opcode != Opcode::kDivide && m.opcode != Opcode::kRemainder) || m.operands.size() != 2 ||
      (t != hlo::ElementType::kS32 && t != hlo::ElementType::kU32)) {
    return std::nullopt;
  }
  const Instruction* splat = m.operands[1];
  if (splat->opcode != Opcode::kBroadcast || splat->operands.size() != 1) return std::nullopt;
  const Instruction* scalar = splat->operands[0];
  if (scalar->opcode != Opcode::kConstant || !scalar->literal || scalar->literal->elided() ||
      scalar->shape.rank() != 0 || scalar->shape.element_type() != t) {
    return std::nullopt;
  }
  const bool is_signed = t == hlo::ElementType::kS32;
  const int64_t d = is_signed ? scalar->literal->GetInt(0) : static_cast<int64_t>(scalar->literal->GetUint(0));
  if (d == 0) return std::nullopt;
  return int_fn::ConstantDivisor::Of(d, is_signed);
}

// Whether `op` computes a pairable f32 binary op on two arrays.
bool Pairable(const FusedOp& op) {
  const Instruction* m = op.member;
  if (!op.fn || !m || op.horner >= 0 || !F32OfTwoF32Arrays(*m)) return false;
  return VisitPairableBinary(m->opcode, [](auto) {});
}

bool ReadOnce(const InstructionMap& reads, const Instruction* i) {
  const int* n = reads.Find(i);
  return n && *n == 1;
}

// Each op whose result only the next computing op reads, when both are
// pairable, becomes one pass with it (PairTile): a tile pass saved per
// pair, a large part of the time of cheap ops such as add and multiply.
// Broadcasts in between (a constant splatted for the second op, say) go
// first, unless one would overwrite the first op's operands.
std::vector<FusedOp> PairOps(const std::vector<FusedOp>& ops, const std::vector<const Instruction*>& members) {
  const InstructionMap reads = CountReads(members);
  std::vector<FusedOp> paired;
  paired.reserve(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    const FusedOp& first = ops[k];
    size_t next = k + 1;
    bool clear = true;
    for (; next < ops.size() && !ops[next].fn; ++next) {
      clear = clear && ops[next].out >= 0 && ops[next].out != first.a && ops[next].out != first.b;
    }
    if (clear && next < ops.size() && first.out >= 0 && Pairable(first) && Pairable(ops[next]) &&
        ReadOnce(reads, first.member)) {
      const FusedOp& second = ops[next];
      const auto& uses = second.member->operands;
      if ((uses[0] == first.member) != (uses[1] == first.member)) {
        const bool first_is_lhs = uses[0] == first.member;
        paired.insert(paired.end(), ops.begin() + k + 1, ops.begin() + next);  // the broadcasts
        FusedOp pair = second;
        // The second op's other operand becomes the pair's third.
        const bool c_scalar = (second.scalars & (first_is_lhs ? 2 : 1)) != 0;
        pair.scalars = first.scalars | (c_scalar ? 4 : 0);
        pair.fn = PairTileFunction(first.member->opcode, second.member->opcode, first_is_lhs, pair.scalars);
        if (!pair.fn) {
          paired.push_back(first);
          continue;
        }
        pair.a = first.a;
        pair.b = first.b;
        pair.pair_first = first.member;
        pair.pair_first_is_lhs = first_is_lhs;
        pair.c = first_is_lhs ? second.b : second.a;
        pair.has_b = pair.has_c = true;
        paired.push_back(pair);
        k = next;
        continue;
      }
    }
    paired.push_back(first);
  }
  return paired;
}

// Whether `op` may be a step of an op chain: an f32 add, subtract,
// multiply or divide of two arrays (either may be a splat read as a
// scalar), as pairs take.
bool ChainStepOp(const FusedOp& op) { return Pairable(op) && ChainOpOf(op.member->opcode).has_value(); }

// Each run of three or more ops in which every op after the first reads
// the op before it, and only it reads that result, becomes one op
// (HornerTile) that keeps the running value in registers. The first op's
// lhs is the starting p (a register, an input or a scalar) and its rhs the
// first step's term; each later step's term is its other operand, on
// either side. The array most steps read is the chain's x, loaded once per
// block of the tile rather than at each step: a polynomial by Horner's
// rule multiplies by x at every other step (JAX's erfc arrives as three
// such runs of 12 to 16 ops); layer norm's (x - mean) * scale * gamma +
// beta reads a different term at each step.
//
// The chain runs where its last step ran, and only that step's result is
// stored. Ops between its steps run before it, in their order, where each
// writes no register the steps before it read (x, the starting p, a term),
// which the chain reads when it runs; nothing else changes, since only the
// chain read its intermediate results and an op between its steps reads
// none of them. Where one would (JAX's erf_inv computes each term, a
// select between two coefficients, just before the step that adds it, into
// the register of the term the step before consumed), the chain ends there
// and its steps are left to PairOps: the registers are allocated before
// chains are found.
struct HornerRun {
  HornerChain chain;
  size_t end = 0;               // the index of the last step's op
  std::vector<size_t> between;  // ops between the steps, which run first
  int steps() const { return static_cast<int>(chain.steps()); }
  // Empty, keeping what it has allocated (a loop looks for a run at every
  // chain op, and a warm compile builds every loop again).
  void Clear() {
    chain.Clear();
    between.clear();
    end = 0;
  }
};

// The longest run from op k into `run` (`read` and `pending` are its
// scratch, kept by the caller for the next).
void LongestHornerRun(const std::vector<FusedOp>& ops, size_t k, const InstructionMap& reads, HornerRun& run,
                      std::vector<int>& read, std::vector<size_t>& pending) {
  const FusedOp& start = ops[k];
  run.Clear();
  run.end = k;
  run.chain.Add(*ChainOpOf(start.member->opcode), start.b, (start.scalars & 2) != 0, false);
  read.assign({start.a, start.b});  // registers the steps so far read (inputs are never written)
  pending.clear();                  // ops since the last step
  for (size_t next_at = k + 1; next_at < ops.size() && run.steps() < kMaxHornerSteps; ++next_at) {
    const FusedOp& prev = ops[run.end];
    const FusedOp& next = ops[next_at];
    // Read once, or twice by a square.
    const int* prev_reads = reads.Find(prev.member);
    if (prev.out < 0 || !prev_reads || *prev_reads > 2) break;
    const bool reads_prev = next.member && std::find(next.member->operands.begin(), next.member->operands.end(),
                                                     prev.member) != next.member->operands.end();
    if (!reads_prev) {
      // An op between two steps: it may write no register a step read, and
      // may be no op a chain of its own could take (the polynomial between
      // exact GELU's exp(-x^2) / |x| and the multiply that reads it).
      if (next.out < 0 || next.horner >= 0 || ChainStepOp(next) ||
          std::find(read.begin(), read.end(), next.out) != read.end()) {
        break;
      }
      pending.push_back(next_at);
      continue;
    }
    if (!ChainStepOp(next)) break;
    const auto& uses = next.member->operands;
    if (*prev_reads != (uses[0] == prev.member) + (uses[1] == prev.member)) break;  // another op reads it too
    if (uses[0] == prev.member && uses[1] == prev.member) {
      if (next.member->opcode != Opcode::kMultiply) break;
      run.chain.Add(ChainBinary::kSquare, kNoTerm, false, false);  // p * p: layer norm's squared deviation
      run.between.insert(run.between.end(), pending.begin(), pending.end());
      pending.clear();
      run.end = next_at;
      continue;
    }
    if ((uses[0] == prev.member) == (uses[1] == prev.member)) break;
    const int other = uses[0] == prev.member ? 1 : 0;
    const int other_id = other == 0 ? next.a : next.b;
    run.chain.Add(*ChainOpOf(next.member->opcode), other_id, (next.scalars & (1 << other)) != 0, other == 0);
    read.push_back(other_id);
    run.between.insert(run.between.end(), pending.begin(), pending.end());
    pending.clear();
    run.end = next_at;
  }
}

// The array a chain's steps read more than once and most often (its x),
// else the starting p, else the first array term; false where the chain
// reads no array. (A term read once stays a term, which a tile inside one
// run of a row broadcast reads as one value: layer norm's mean and scale.)
bool ChooseChainX(HornerChain& chain, const FusedOp& start, int* x) {
  int best = 1;
  for (size_t s = 0; s < chain.steps(); ++s) {
    if (chain.scalar_terms[s]) continue;
    if (chain.terms[s] == kNoTerm) continue;
    int n = 0;
    for (size_t u = 0; u < chain.steps(); ++u) n += !chain.scalar_terms[u] && chain.terms[u] == chain.terms[s];
    if (n > best) {
      best = n;
      *x = chain.terms[s];
    }
  }
  if (best == 1) {
    if (!(start.scalars & 1)) {
      *x = start.a;
      return true;
    }
    for (size_t s = 0; s < chain.steps(); ++s) {
      if (!chain.scalar_terms[s] && chain.terms[s] != kNoTerm) {
        *x = chain.terms[s];
        chain.reads_x[s] = true;
        return true;
      }
    }
    return false;
  }
  for (size_t s = 0; s < chain.steps(); ++s) {
    if (!chain.scalar_terms[s] && chain.terms[s] == *x) chain.reads_x[s] = true;
  }
  return true;
}

std::vector<FusedOp> HornerOps(const std::vector<FusedOp>& ops, const std::vector<const Instruction*>& members,
                               std::vector<HornerChain>& chains) {
  const InstructionMap reads = CountReads(members);
  std::vector<FusedOp> out;
  out.reserve(ops.size());
  std::vector<bool> taken(ops.size(), false);  // ops a chain ran, or ran before it
  HornerRun run;
  std::vector<int> read;
  std::vector<size_t> pending;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (taken[k]) continue;
    const FusedOp& start = ops[k];
    // An op whose result is read more than twice (or never) starts no run
    // (LongestHornerRun stops at once: it takes a result read once, or
    // twice by a square), so it is not looked for.
    const int* start_reads = reads.Find(start.member);
    if (!ChainStepOp(start) || start.out < 0 || !start_reads || *start_reads > 2) {
      out.push_back(start);
      continue;
    }
    LongestHornerRun(ops, k, reads, run, read, pending);
    int x = 0;
    // Two steps are a pair, PairOps' to make, unless one squares (which no
    // pair takes).
    const bool squares = std::find(run.chain.ops.begin(), run.chain.ops.end(), ChainBinary::kSquare) !=
                         run.chain.ops.end();
    if (run.steps() < (squares ? 2 : 3) || !ChooseChainX(run.chain, start, &x)) {
      out.push_back(start);
      continue;
    }
    for (size_t m : run.between) {
      out.push_back(ops[m]);
      taken[m] = true;
    }
    FusedOp op = ops[run.end];  // the last step's result register and member
    op.fn = HornerTileFor(HostTileIsa());
    op.a = x;
    op.b = start.a;
    op.scalars = (start.scalars & 1) != 0 ? 2 : 0;
    op.has_b = true;
    op.has_c = false;
    op.horner = static_cast<int>(chains.size());
    chains.push_back(run.chain);
    out.push_back(op);
    for (size_t m = k; m <= run.end; ++m) taken[m] = true;
  }
  return out;
}

// n copies of a 4-byte value, with the widest stores the CPU has: a
// broadcast's run fills a tile register once per tile per broadcast
// (layer norm's mean and scale, along each row), which with the baseline's
// 16-byte stores was a fifth of its time.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) void FillAvx512(uint32_t value, uint32_t* to, int64_t n) {
  const __m512i v = _mm512_set1_epi32(static_cast<int>(value));
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) _mm512_storeu_si512(to + k, v);
  for (; k < n; ++k) to[k] = value;
}
__attribute__((target("avx2"))) void FillAvx2(uint32_t value, uint32_t* to, int64_t n) {
  const __m256i v = _mm256_set1_epi32(static_cast<int>(value));
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + k), v);
  for (; k < n; ++k) to[k] = value;
}
#endif
void Fill(uint32_t value, uint32_t* to, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (HostIsa() == Isa::kAvx512) return FillAvx512(value, to, n);
  if (HostIsa() == Isa::kAvx2) return FillAvx2(value, to, n);
#endif
  std::fill_n(to, n, value);
}

// The first whole sixteens of a strided run, p[j * stride] for j < n,
// gathered sixteen at a time; returns how many. The stride may be negative
// (a reverse). Whole rows of a transpose are copied as blocks instead
// (CopyRows); what is left to gather is strided slices' and reverses' runs
// (JAX's x[::2, ::-3] * 2 no slower than with scalar loads on Zen 5) and
// the part rows a transpose's tile begins or ends with.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) int64_t GatherRunAvx512(const uint32_t* p, int64_t stride, uint32_t* to,
                                                             int64_t n) {
  if (stride > INT_MAX / 16 || stride < INT_MIN / 16) return 0;
  const __m512i lanes = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                           _mm512_set1_epi32(static_cast<int>(stride)));
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) _mm512_storeu_si512(to + j, _mm512_i32gather_epi32(lanes, p + j * stride, 4));
  return j;
}
#endif

// to[r * columns + c] = from[c * stride + r] for `rows` rows of `columns`:
// rows of the result read down the operand's columns, each column of the
// block read along one of its rows.
void CopyRows(const uint32_t* from, int64_t stride, int64_t rows, int64_t columns, uint32_t* to) {
  for (int64_t c = 0; c < columns; ++c) {
    const uint32_t* src = from + c * stride;
    for (int64_t r = 0; r < rows; ++r) to[r * columns + c] = src[r];
  }
}

// Elements [t, t + n) of a transpose, slice or reverse of `from`
// (four-byte values) as `read` maps them (fusion_planner.h): the index of
// t, then runs along the result's last dimension, each a copy or a strided
// gather, or blocks of two or more whole rows (CopyRows), carrying into
// the dimensions before it.
void StridedTile(const uint32_t* from, const StridedRead& read, int64_t t, uint32_t* to, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  const bool gathers = HostIsa() == Isa::kAvx512;
#else
  const bool gathers = false;
#endif
  const int rank = static_cast<int>(read.dims.size());
  int64_t index[kMaxStridedRank];
  int64_t offset = read.base;
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = t % read.dims[d];
    t /= read.dims[d];
    offset += index[d] * read.strides[d];
  }
  const int last = rank - 1;
  const int64_t extent = read.dims[last], stride = read.strides[last];
  // Where consecutive rows of the result read consecutive elements (a
  // transpose's short runs, where the result's last two dimensions are the
  // operand's last two swapped), whole rows are copied as a block, along
  // the operand's rows: a gather per sixteen elements, each from another
  // line, took three times as long on AMD's Zen 5 (JAX's transpose(0, 2,
  // 1) of [64,32,1024] plus one: 1.4 -> 0.45 ms).
  const bool blocks = rank >= 2 && read.strides[last - 1] == 1 && stride != 1;
  for (int64_t k = 0; k < n;) {
    if (blocks && index[last] == 0 && n - k >= 2 * extent && index[last - 1] + 1 < read.dims[last - 1]) {
      const int64_t rows = std::min((n - k) / extent, read.dims[last - 1] - index[last - 1]);
      CopyRows(from + offset, stride, rows, extent, to + k);
      k += rows * extent;
      index[last - 1] += rows;
      offset += rows;
      for (int d = last - 1; d > 0 && index[d] == read.dims[d]; --d) {
        index[d] = 0;
        offset -= read.dims[d] * read.strides[d];
        ++index[d - 1];
        offset += read.strides[d - 1];
      }
      continue;
    }
    const int64_t run = std::min(n - k, extent - index[last]);
    const uint32_t* p = from + offset;
    if (stride == 1) {
      std::memcpy(to + k, p, static_cast<size_t>(run) * sizeof(uint32_t));
    } else {
      int64_t j = 0;
#if defined(__x86_64__) && defined(__GNUC__)
      if (gathers && run >= 16) j = GatherRunAvx512(p, stride, to + k, run);
#endif
      for (; j < run; ++j) to[k + j] = p[j * stride];
    }
    k += run;
    index[last] += run;
    offset += run * stride;
    for (int d = last; d > 0 && index[d] == read.dims[d]; --d) {
      index[d] = 0;
      offset -= read.dims[d] * read.strides[d];
      ++index[d - 1];
      offset += read.strides[d - 1];
    }
  }
}

// Elements [t, t + n) of a broadcast whose element e is from[(e / inner) % size],
// moved as the 4 bytes they are (f32 or s32).
void BroadcastTile(const uint32_t* from, const BroadcastRun& run, int64_t t, uint32_t* to, int64_t n) {
  if (run.size == 1) {
    Fill(from[0], to, n);
    return;
  }
  int64_t at = (t / run.inner) % run.size;
  if (run.inner == 1) {  // runs of the operand, copied whole
    for (int64_t k = 0; k < n;) {
      const int64_t m = std::min(n - k, run.size - at);
      std::copy_n(from + at, m, to + k);
      k += m;
      at = 0;
    }
    return;
  }
  int64_t left = run.inner - t % run.inner;  // elements before `at` moves on
  for (int64_t k = 0; k < n;) {
    const int64_t m = std::min(n - k, left);
    Fill(from[at], to + k, m);
    k += m;
    left = run.inner;
    if (++at == run.size) at = 0;
  }
}

// The lines of elements [first + from, first + to) of each input in
// `streamed` (those read element for element), requested into L1 ahead of
// their use.
void PrefetchShare(const char* const* in, const std::vector<int>& streamed,
                   const std::vector<int64_t>& input_size, int64_t first, int64_t from, int64_t to) {
  for (int k : streamed) {
    const char* base = in[k] + first * input_size[k];
    for (int64_t b = (from * input_size[k]) & ~int64_t{63}; b < to * input_size[k]; b += 64) PrefetchLine(base + b);
  }
}


}  // namespace

void RunHornerChainWith(Isa isa, const float* x, const float* p0, float start, const std::vector<HornerStep>& steps,
                        float* out, int64_t n) {
  if (steps.size() > static_cast<size_t>(kMaxHornerSteps)) throw std::invalid_argument("a Horner chain of over 64 steps");
  HornerArgs args;
  args.count = static_cast<int>(steps.size());
  args.start = start;
  for (int s = 0; s < args.count; ++s) {
    const HornerStep& step = steps[static_cast<size_t>(s)];
    args.code[s] = step.multiply                     ? HornerArgs::Code(ChainBinary::kMultiply, HornerArgs::kX, false)
                   : step.op == ChainBinary::kSquare ? HornerArgs::Code(ChainBinary::kSquare, HornerArgs::kX, false)
                                                     : HornerArgs::Code(step.op, step.tile ? HornerArgs::kTile
                                                                                          : HornerArgs::kValue,
                                                                        step.term_first);
    args.terms[s] = step.tile;
    args.values[s] = step.value;
  }
  HornerTileFor(isa)(x, p0, &args, out, n);
}

namespace {

template <typename F>
TileFn UnaryTileFor(Isa isa) {
#ifdef ANVIL_HAVE_WIDE_TILES
  if (isa == Isa::kAvx512) return &avx512::UnaryTile<F>;
  if (isa == Isa::kAvx2) return &avx2::UnaryTile<F>;
#endif
  return &baseline::UnaryTile<F>;
}

}  // namespace

bool RunFloatUnaryTileWith(Isa isa, Opcode op, const float* x, float* out, int64_t n) {
  TileFn fn = nullptr;
  VisitFloatUnary(op, [&](auto f) { fn = UnaryTileFor<decltype(f)>(isa); });
  if (!fn) return false;
  fn(x, nullptr, nullptr, out, n);
  return true;
}

void RunErfcTileWith(Isa isa, const float* x, float* out, int64_t n) {
  UnaryTileFor<float_fn::Erfc>(isa)(x, nullptr, nullptr, out, n);
}

bool CompareDirectionKnown(const std::string& direction) { return baseline::CompareFn(direction) != nullptr; }

int FusedRegistersNeeded(const std::vector<const Instruction*>& members) {
  return AllocateRegisters(TiledMembers(members)).peak;
}

namespace {

// A group's tile program with the slots of everything it reads bound.
class TiledLoop final : public FusedLoop {
 public:
  // Elements [lo, hi) of the root, element t stored at result + (t - first)
  // elements; `staging`: the register the root computes into before it
  // streams past the caches, or -1 to store it as it is computed. Then, for
  // each further row r < rows, the same range `stride` elements on, stored
  // `out_stride` elements on.
  void RunInto(const Frame& frame, int64_t lo, int64_t hi, char* result, int64_t first, int staging,
               int64_t rows = 1, int64_t stride = 0, int64_t out_stride = 0) const;
  void Run(const Frame& frame, int64_t begin, int64_t end, void* out) const override {
    RunInto(frame, begin, end, static_cast<char*>(out), begin, -1);
  }
  void RunRows(const Frame& frame, int64_t first, int64_t count, int64_t rows, int64_t stride, void* out,
               int64_t out_stride) const override {
    RunInto(frame, first, first + count, static_cast<char*>(out), first, -1, rows, stride, out_stride);
  }

  std::vector<FusedOp> ops;
  std::vector<int_fn::ConstantDivisor> divisors;  // FusedOp::divisor
  std::vector<StridedRead> strided_reads;         // FusedOp::strided
  std::vector<HornerChain> horners;               // FusedOp::horner
  std::vector<Slot> input_slots;
  std::vector<int64_t> input_size;
  std::vector<bool> input_scalar;
  std::vector<int> streamed_inputs;  // read element for element: prefetched
  std::vector<int64_t> share_edges;  // where each op's share of a tile's prefetches begins
  int64_t result_size = 4;
  int64_t register_bytes = 4;  // the widest value's, 4 or 8 (s64, u64)
  int64_t elements = 0;  // the root's
  int registers = 0;     // the tile registers the ops use

  // The register the root computes into before it streams past the caches
  // (see kStreamedResultBytes), or -1 to store it as it is computed.
  int Staging() const {
    const int64_t result_bytes = elements * result_size;
    int64_t touched = result_bytes;
    for (int k : streamed_inputs) touched += elements * input_size[static_cast<size_t>(k)];
    const bool streams = result_size == 4 && ResultStreams(result_bytes, touched);
    return streams && registers < kMaxFusedRegisters ? registers : -1;  // needs a spare register
  }
};

void TiledLoop::RunInto(const Frame& frame, int64_t row_lo, int64_t row_hi, char* row_result, int64_t row_first,
                        int staging, int64_t rows, int64_t stride, int64_t out_stride) const {
  // The inputs' addresses, on the stack for the usual few: a tiny loop's
  // call (a while loop's counter) costs little more than its allocation.
  constexpr size_t kInlineInputs = 16;
  const char* inline_inputs[kInlineInputs];
  std::vector<const char*> more_inputs(input_slots.size() > kInlineInputs ? input_slots.size() : 0);
  const char** const inputs = more_inputs.empty() ? inline_inputs : more_inputs.data();
  for (size_t k = 0; k < input_slots.size(); ++k) inputs[k] = static_cast<const char*>(frame.At(input_slots[k]));
  // Room for eight bytes an element (s64 and u64 values); a loop without
  // them spaces its registers four bytes an element apart, as compactly
  // in the cache as before it had any.
  alignas(64) uint64_t storage[kMaxFusedRegisters * kFusedTile];
  const int64_t row_bytes = kFusedTile * register_bytes;
  auto reg = [&](int r) { return reinterpret_cast<char*>(storage) + r * row_bytes; };
  // A rank-0 operand read in place of an array (clamp's bounds): its
  // value splatted once per chunk into a tile of its own.
  alignas(64) float scalars[2][kFusedTile];
  // What each register holds for the ops reading it: the register
  // itself, or the part of a row a broadcast op viewed for this tile.
  const void* view[kMaxFusedRegisters];
  for (int r = 0; r < kMaxFusedRegisters; ++r) view[r] = reg(r);
  // For this tile, the one value a broadcast left its register unfilled
  // for (FusedOp::skips_uniform_fill), or nullptr. Not cleared here: every
  // op that writes a register sets its entry, and an op reads only
  // registers ops before it wrote in the same tile. (Clearing it was a
  // rep stos, slow to start: a third of a tiny loop's call.)
  const void* uniform[kMaxFusedRegisters];
  for (int64_t range = 0; range < rows; ++range) {
    const int64_t lo = row_lo + range * stride, hi = row_hi + range * stride, first = row_first + range * stride;
    char* const result = row_result + range * out_stride * result_size;
    for (int64_t t = lo; t < hi; t += kFusedTile) {
      const int64_t len = std::min(kFusedTile, hi - t);
      int scalar_tiles = 0;
      // An operand read as one scalar: a register's first element, or the
      // input's (a splat's rank-0 operand).
      auto scalar = [&](int r) -> const void* { return r >= 0 ? view[r] : inputs[-1 - r]; };
      auto source = [&](int r) -> const void* {
        if (r >= 0) return view[r];
        const int k = -1 - r;
        if (!input_scalar[k]) return inputs[k] + t * input_size[k];
        float* tile = scalars[scalar_tiles++ % 2];
        std::fill_n(tile, len, *reinterpret_cast<const float*>(inputs[k]));
        return tile;
      };
      // The next tile's input lines, requested a share before each op so
      // that memory works while the ops compute: otherwise the pass that
      // reads the inputs waits on memory alone, and the passes of tanh or
      // exp leave it idle (the elementwise chain: 24.5 -> 19 ms). Into L1
      // (prefetcht0, 20% faster than into L2 here): a tile's inputs are
      // 4 KB each, and its first op reads them all.
      const int64_t next = t + kFusedTile, next_len = std::min(kFusedTile, hi - next);
      int op_index = 0;
      for (const FusedOp& op : ops) {
        if (next_len == kFusedTile) {
          PrefetchShare(inputs, streamed_inputs, input_size, next, share_edges[op_index], share_edges[op_index + 1]);
        } else if (next_len > 0) {
          const int64_t shares = static_cast<int64_t>(ops.size());
          PrefetchShare(inputs, streamed_inputs, input_size, next, next_len * op_index / shares,
                        next_len * (op_index + 1) / shares);
        }
        ++op_index;
        void* dst = op.out >= 0    ? static_cast<void*>(reg(op.out))
                    : staging >= 0 ? static_cast<void*>(reg(staging))
                                   : static_cast<void*>(result + (t - first) * result_size);
        if (op.iota) {
          op.iota(op.broadcast, t, dst, len);
          if (op.out >= 0) {
            view[op.out] = reg(op.out);
            uniform[op.out] = nullptr;
          }
          continue;
        }
        if (op.strided >= 0) {
          StridedTile(reinterpret_cast<const uint32_t*>(inputs[-1 - op.a]),
                      strided_reads[static_cast<size_t>(op.strided)], t, static_cast<uint32_t*>(dst), len);
          if (op.out >= 0) {
            view[op.out] = reg(op.out);
            uniform[op.out] = nullptr;
          }
          continue;
        }
        if (!op.fn) {
          const uint32_t* row = reinterpret_cast<const uint32_t*>(inputs[-1 - op.a]);
          if (op.skips_uniform_fill && t % op.broadcast.inner + len <= op.broadcast.inner) {
            uniform[op.out] = row + (t / op.broadcast.inner) % op.broadcast.size;
            continue;
          }
          if (op.out >= 0) uniform[op.out] = nullptr;
          const int64_t at = t % op.broadcast.size;
          if (op.broadcast.inner == 1 && op.broadcast.size > 1 && at + len <= op.broadcast.size) {
            view[op.out] = row + at;  // the tile lies in one run of the row
            continue;
          }
          BroadcastTile(row, op.broadcast, t, static_cast<uint32_t*>(dst), len);
          if (op.out >= 0) {
            view[op.out] = reg(op.out);
            uniform[op.out] = nullptr;
          }
          continue;
        }
        scalar_tiles = 0;
        if (op.horner >= 0) {
          const HornerChain& chain = horners[static_cast<size_t>(op.horner)];
          HornerArgs args;
          args.count = static_cast<int>(chain.steps());
          for (int s = 0; s < args.count; ++s) {
            const auto step = static_cast<size_t>(s);
            const int term = chain.terms[step];
            HornerArgs::Operand operand = HornerArgs::kTile;
            if (chain.reads_x[step] || term == kNoTerm) {
              operand = HornerArgs::kX;  // kSquare reads no term
            } else if (chain.scalar_terms[step]) {
              operand = HornerArgs::kValue;
              args.values[s] = *static_cast<const float*>(scalar(term));
            } else if (term >= 0 && uniform[term]) {  // a broadcast that left this tile unfilled
              operand = HornerArgs::kValue;
              args.values[s] = *static_cast<const float*>(uniform[term]);
            } else {
              args.terms[s] = static_cast<const float*>(source(term));
            }
            args.code[s] = HornerArgs::Code(chain.ops[step], operand, chain.term_first[step]);
          }
          const void* p = nullptr;
          if (op.scalars & 2) {
            args.start = *static_cast<const float*>(scalar(op.b));
          } else {
            p = source(op.b);
          }
          op.fn(source(op.a), p, &args, dst, len);
          if (op.out >= 0) {
            view[op.out] = reg(op.out);
            uniform[op.out] = nullptr;
          }
          continue;
        }
        const void* a = op.scalars & 1 ? scalar(op.a) : source(op.a);
        const void* b = !op.has_b ? nullptr : op.scalars & 2 ? scalar(op.b) : source(op.b);
        const void* c = op.divisor >= 0 ? &divisors[static_cast<size_t>(op.divisor)]
                        : !op.has_c     ? nullptr
                        : op.scalars & 4 ? scalar(op.c)
                                         : source(op.c);
        TileFn fn = op.fn;
        if (op.uniform_operands) {
          int mask = 0;
          if ((op.uniform_operands & 1) && uniform[op.a]) {
            mask |= 1;
            a = uniform[op.a];
          }
          if ((op.uniform_operands & 2) && uniform[op.b]) {
            mask |= 2;
            b = uniform[op.b];
          }
          if ((op.uniform_operands & 4) && uniform[op.c]) {
            mask |= 4;
            c = uniform[op.c];
          }
          fn = op.fn_uniform[mask];
        }
        fn(a, b, c, dst, len);
        if (op.out >= 0) {
          view[op.out] = reg(op.out);
          uniform[op.out] = nullptr;
        }
      }
      if (staging >= 0) {
        StreamTile(reinterpret_cast<const float*>(reg(staging)),
                   reinterpret_cast<float*>(result + (t - first) * result_size), len);
      }
    }
  }
  if (staging >= 0) FenceStreamedStores();
}

// A broadcast op whose tile may hold one value throughout: element e is
// from[(e / inner) % size] with inner above one (a per-row mean or scale
// along a row, a per-channel statistic along an image), four bytes wide.
bool MayBeUniform(const FusedOp& op) {
  return !op.fn && !op.iota && op.strided < 0 && op.out >= 0 && op.broadcast.inner > 1 && op.broadcast.size > 1;
}

// The registers `op` reads, by operand position (0: a, 1: b, 2: c; 3: a
// Horner chain's term), -1 where it reads none there.
std::array<int, 4> RegistersRead(const FusedOp& op, const std::vector<HornerChain>& horners, int term_register) {
  std::array<int, 4> read = {-1, -1, -1, -1};
  if (!op.fn) return read;  // broadcasts, iotas and strided reads read inputs
  read[0] = op.a >= 0 && !(op.scalars & 1) ? op.a : -1;
  read[1] = op.has_b && op.b >= 0 && !(op.scalars & 2) ? op.b : -1;
  read[2] = op.has_c && op.divisor < 0 && op.c >= 0 && !(op.scalars & 4) ? op.c : -1;
  if (op.horner >= 0) {
    const HornerChain& chain = horners[static_cast<size_t>(op.horner)];
    for (size_t s = 0; s < chain.steps(); ++s) {
      if (!chain.reads_x[s] && chain.terms[s] == term_register) read[3] = term_register;
    }
  }
  return read;
}

// Whether a chain reads register r only as tile terms, which it reads
// as one value on a tile where r's broadcast left r unfilled (RunInto).
bool ChainTakesUniform(const FusedOp& op, const std::vector<HornerChain>& horners, int r) {
  const HornerChain& chain = horners[static_cast<size_t>(op.horner)];
  for (size_t s = 0; s < chain.steps(); ++s) {
    if (chain.terms[s] == r && (chain.scalar_terms[s] || chain.reads_x[s])) return false;
  }
  return true;
}

// Where a broadcast fills a tile register with one value repeated (a row's
// mean in layer norm, a channel's scale in batch norm), the ops reading it
// can read that value as a scalar instead, as they read a splatted
// constant: the fill, as costly as an op, is skipped. That is decided per
// tile (a run may end inside one), so each reader gets a variant reading
// that operand as a scalar, and the broadcast skips its fill only if every
// reader of its register has one, for one operand position each.
void PlanUniformBroadcasts(std::vector<FusedOp>& ops, const std::vector<HornerChain>& horners) {
  int writer[kMaxFusedRegisters];
  std::fill_n(writer, kMaxFusedRegisters, -1);
  for (FusedOp& op : ops) {
    if (op.fn && op.horner < 0 && op.divisor < 0 && op.member) {
      const Instruction& m = *op.member;
      // op's function with the operands in `mask` read as scalars too, or
      // nullptr where there is none.
      auto variant = [&](int mask) -> TileFn {
        if (mask == 0) return op.fn;
        if (op.pair_first) {
          return mask & 1 ? nullptr
                          : PairTileFunction(op.pair_first->opcode, m.opcode, op.pair_first_is_lhs, op.scalars | mask);
        }
        if (m.opcode == Opcode::kSelect && hlo::Info(m.shape.element_type()).byte_size != 4) return nullptr;
        return TileFunction(m, op.scalars | mask);
      };
      const std::array<int, 4> read = RegistersRead(op, horners, -1);
      // Operands taken one by one, each kept only if every subset with
      // those already kept has a function.
      for (int k = 0; k < 3; ++k) {
        const int r = read[static_cast<size_t>(k)];
        if (r < 0 || writer[r] < 0 || !MayBeUniform(ops[static_cast<size_t>(writer[r])])) continue;
        if ((read[0] == r && k != 0) || (read[1] == r && k != 1) || (read[2] == r && k != 2)) continue;
        const int widened = op.uniform_operands | (1 << k);
        TileFn table[8] = {};
        bool complete = true;
        for (int mask = 0; mask < 8 && complete; ++mask) {
          if ((mask & widened) != mask) continue;
          table[mask] = variant(mask);
          complete = table[mask] != nullptr;
        }
        if (!complete) continue;
        op.uniform_operands = widened;
        std::copy_n(table, 8, op.fn_uniform);
      }
    }
    if (op.out >= 0) writer[op.out] = static_cast<int>(&op - ops.data());
  }
  for (size_t w = 0; w < ops.size(); ++w) {
    FusedOp& broadcast = ops[w];
    if (!MayBeUniform(broadcast)) continue;
    const int r = broadcast.out;
    bool all = true, read = false;
    for (size_t k = w + 1; k < ops.size() && all; ++k) {
      const FusedOp& op = ops[k];
      const std::array<int, 4> regs = RegistersRead(op, horners, r);
      int positions = 0;
      for (int p = 0; p < 4; ++p) {
        if (regs[static_cast<size_t>(p)] != r) continue;
        ++positions;
        all = all && (p < 3 ? (op.uniform_operands >> p & 1) != 0 : ChainTakesUniform(op, horners, r));
      }
      all = all && positions <= 1;
      read = read || positions > 0;
      if (op.out == r) break;  // overwritten: later readers read another value
    }
    broadcast.skips_uniform_fill = all && read;
  }
}

std::shared_ptr<TiledLoop> MakeTiledLoop(const std::vector<const Instruction*>& members,
                                         const std::vector<const Instruction*>& inputs,
                                         const std::vector<Slot>& input_slots) {
  if (members.empty()) return nullptr;
  const InstructionMap member_map = MemberMap(members);
  const std::vector<const Instruction*> tiled = TiledMembers(members);
  const Allocation allocation = AllocateRegisters(tiled);
  if (allocation.peak > kMaxFusedRegisters) return nullptr;
  auto operand = [&](const Instruction* o) {
    if (const int r = allocation.RegisterOf(o); r >= 0) return r;
    return -1 - static_cast<int>(std::find(inputs.begin(), inputs.end(), o) - inputs.begin());
  };
  auto loop = std::make_shared<TiledLoop>();
  std::vector<FusedOp> ops;
  ops.reserve(tiled.size() + 1);
  const bool narrows_root = NarrowsRoot(tiled);
  auto input_index = [&](const Instruction* o) {
    return -1 - static_cast<int>(std::find(inputs.begin(), inputs.end(), o) - inputs.begin());
  };
  for (size_t k = 0; k < tiled.size(); ++k) {
    const Instruction& m = *tiled[k];
    FusedOp op;
    op.out = k + 1 == tiled.size() && !narrows_root ? -1 : allocation.RegisterOf(&m);
    if (!member_map.Find(&m)) {  // a bf16 input, loaded
      op.fn = TileFunctionWidening(/*splat=*/false);
      op.a = input_index(&m);
      ops.push_back(op);
      continue;
    }
    if (FusedStridedRead(m)) {
      // Through the strided reads the group holds (links of a chain the
      // planner fused) to the input they read.
      const std::vector<const Instruction*> chain =
          StridedReadChain(m, [&](const Instruction* i) { return member_map.Find(i) != nullptr; });
      const Instruction* source = chain.back()->operands[0];
      // The planner stores a strided read's source and makes it an input,
      // a member or not: it is read out of order.
      if (std::find(inputs.begin(), inputs.end(), source) == inputs.end()) return nullptr;
      op.a = input_index(source);
      op.strided = static_cast<int>(loop->strided_reads.size());
      loop->strided_reads.push_back(ComposedStridedRead(chain));
      ops.push_back(op);
      continue;
    }
    if (auto run = FusedBroadcastRun(m)) {
      op.a = operand(m.operands[0]);
      if (IsBf16(&m) || IsPred(&m) || IsEightBytes(&m)) {  // a bf16 scalar, widened; a pred's byte; 8 bytes
        op.fn = IsPred(&m) ? &SplatByteTile : IsEightBytes(&m) ? &Splat8Tile : TileFunctionWidening(/*splat=*/true);
        op.scalars = 1;
        ops.push_back(op);
        continue;
      }
      op.broadcast = *run;
      ops.push_back(op);
      continue;
    }
    if (auto run = FusedIotaRun(m)) {
      op.iota = IotaFunction(m.shape.element_type());
      op.broadcast = *run;
      ops.push_back(op);
      continue;
    }
    op.scalars = ScalarOperands(m, member_map);
    if (const std::optional<int_fn::ConstantDivisor> divisor = ConstantDivisorOf(m)) {
      op.fn = ByConstantTileFunction(m);
      op.divisor = static_cast<int>(loop->divisors.size());
      loop->divisors.push_back(*divisor);
    } else {
      op.fn = TileFunction(m, op.scalars);
    }
    if (!op.fn) return nullptr;
    op.member = &m;
    // A scalar operand is read from the splat's own operand.
    auto operand_of = [&](size_t k) {
      const Instruction* o = m.operands[k];
      return (op.scalars >> k) & 1 ? operand(o->operands[0]) : operand(o);
    };
    op.a = operand_of(0);
    if ((op.has_b = m.operands.size() > 1)) op.b = operand_of(1);
    if ((op.has_c = m.operands.size() > 2)) op.c = operand_of(2);
    ops.push_back(op);
  }
  loop->ops = PairOps(HornerOps(ops, tiled, loop->horners), tiled);
  if (narrows_root) {
    FusedOp narrow;
    narrow.fn = TileFunctionNarrowing(*tiled.back());
    narrow.a = allocation.RegisterOf(tiled.back());
    loop->ops.push_back(narrow);
  }
  PlanUniformBroadcasts(loop->ops, loop->horners);
  loop->input_slots = input_slots;
  loop->registers = allocation.peak;
  // Element sizes: an input's (rank-0 clamp bounds are read as scalars and
  // splatted, see RunInto), and the root's.
  loop->result_size = hlo::Info(members.back()->shape.element_type()).byte_size;
  const bool eight_bytes = std::any_of(members.begin(), members.end(), IsEightBytes) ||
                           std::any_of(inputs.begin(), inputs.end(), IsEightBytes);
  loop->register_bytes = eight_bytes ? 8 : 4;
  loop->elements = members.back()->shape.ElementCount();
  // An input only strided reads read is read out of order: not prefetched.
  auto read_in_order = [&](const Instruction* input) {
    return std::any_of(members.begin(), members.end(), [&](const Instruction* m) {
      return !IsStridedReadOp(*m) &&
             std::find(m->operands.begin(), m->operands.end(), input) != m->operands.end();
    });
  };
  loop->input_size.reserve(inputs.size());
  loop->input_scalar.reserve(inputs.size());
  loop->streamed_inputs.reserve(inputs.size());
  for (const Instruction* i : inputs) {
    loop->input_size.push_back(hlo::Info(i->shape.element_type()).byte_size);
    // Splatted only where a rank-0 value stands for an array (clamp's
    // bounds). When the whole group is rank 0, every input is read in
    // place: a select's three scalars (one of them pred) are no bounds.
    loop->input_scalar.push_back(i->shape.rank() == 0 && members.back()->shape.rank() > 0);
    if (i->shape.ElementCount() == loop->elements && read_in_order(i)) {
      loop->streamed_inputs.push_back(static_cast<int>(loop->input_size.size()) - 1);
    }
  }
  // Where each op's share of a whole tile's prefetches begins (see
  // RunInto), worked out here rather than divided out per tile.
  const int64_t op_count = static_cast<int64_t>(loop->ops.size());
  loop->share_edges.resize(loop->ops.size() + 1);
  for (int64_t k = 0; k <= op_count; ++k) loop->share_edges[k] = kFusedTile * k / op_count;
  return loop;
}

}  // namespace

std::optional<FusedLoopSummary> SummarizeFusedLoop(const std::vector<const Instruction*>& members,
                                                   const std::vector<const Instruction*>& inputs) {
  const std::shared_ptr<TiledLoop> loop = MakeTiledLoop(members, inputs, std::vector<Slot>(inputs.size()));
  if (!loop) return std::nullopt;
  FusedLoopSummary summary;
  summary.passes = static_cast<int>(loop->ops.size());
  for (const FusedOp& op : loop->ops) {
    if (op.horner >= 0) {
      ++summary.horner_chains;
      summary.horner_steps += static_cast<int>(loop->horners[static_cast<size_t>(op.horner)].steps());
    }
    if (op.member && op.scalars != 0 && op.divisor < 0) ++summary.scalar_reads;
    if (!op.member && !op.iota && op.strided < 0 && op.out >= 0) ++summary.fills;
    if (op.skips_uniform_fill) ++summary.uniform_fills;
  }
  return summary;
}

namespace {

}  // namespace

std::shared_ptr<const FusedLoop> MakeFusedLoop(const std::vector<const Instruction*>& members,
                                              const std::vector<const Instruction*>& inputs,
                                              const std::vector<Slot>& input_slots) {
  return MakeTiledLoop(members, inputs, input_slots);
}

Kernel FusedElementwiseKernel(const std::vector<const Instruction*>& members,
                              const std::vector<const Instruction*>& inputs, const std::vector<Slot>& input_slots,
                              const Slot& out) {
  std::shared_ptr<const TiledLoop> loop = MakeTiledLoop(members, inputs, input_slots);
  if (!loop) return nullptr;
  const int staging = loop->Staging();
  return [loop, out, staging](const Frame& frame) {
    char* result = static_cast<char*>(frame.At(out));
    frame.parallel->For(loop->elements, kGrain,
                        [&](int64_t lo, int64_t hi) { loop->RunInto(frame, lo, hi, result, 0, staging); });
  };
}

RowRunner FusedLoopRows(const std::vector<const Instruction*>& members, const std::vector<const Instruction*>& inputs,
                        const std::vector<Slot>& input_slots, const Slot& out, int64_t row, bool stream) {
  std::shared_ptr<const TiledLoop> loop = MakeTiledLoop(members, inputs, input_slots);
  if (!loop) return nullptr;
  const int staging = stream ? loop->Staging() : -1;
  return [loop, out, row, staging](const Frame& frame, int64_t r0, int64_t r1, float*) {
    loop->RunInto(frame, r0 * row, r1 * row, static_cast<char*>(frame.At(out)), 0, staging);
  };
}

}  // namespace anvil::cpu
