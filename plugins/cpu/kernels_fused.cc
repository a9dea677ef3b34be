#include "plugins/cpu/kernels_fused.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "hlo/attributes.h"
#include "plugins/cpu/float_functions.h"
#include "plugins/cpu/fusion_planner.h"

namespace anvil::cpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr int64_t kGrain = 1 << 15;

template <typename F>
void UnaryTile(const void* x, const void*, const void*, void* y, int64_t n) {
  const F f;
  const float* a = static_cast<const float*>(x);
  float* out = static_cast<float*>(y);
  for (int64_t k = 0; k < n; ++k) out[k] = f(a[k]);
}

template <typename F>
void BinaryTile(const void* x, const void* y, const void*, void* z, int64_t n) {
  const F f;
  const float* a = static_cast<const float*>(x);
  const float* b = static_cast<const float*>(y);
  float* out = static_cast<float*>(z);
  for (int64_t k = 0; k < n; ++k) out[k] = f(a[k], b[k]);
}

// Compare of floats to pred (one byte per element), as the one-op kernel.
template <typename F>
void CompareTile(const void* x, const void* y, const void*, void* z, int64_t n) {
  const F f;
  const float* a = static_cast<const float*>(x);
  const float* b = static_cast<const float*>(y);
  uint8_t* out = static_cast<uint8_t*>(z);
  for (int64_t k = 0; k < n; ++k) out[k] = uint8_t(f(a[k], b[k]));
}
struct Eq { bool operator()(float x, float y) const { return x == y; } };
struct Ne { bool operator()(float x, float y) const { return x != y; } };
struct Lt { bool operator()(float x, float y) const { return x < y; } };
struct Le { bool operator()(float x, float y) const { return x <= y; } };
struct Gt { bool operator()(float x, float y) const { return x > y; } };
struct Ge { bool operator()(float x, float y) const { return x >= y; } };

using TileFn = void (*)(const void*, const void*, const void*, void*, int64_t);

TileFn CompareFn(const std::string& direction) {
  if (direction == "EQ") return &CompareTile<Eq>;
  if (direction == "NE") return &CompareTile<Ne>;
  if (direction == "LT") return &CompareTile<Lt>;
  if (direction == "LE") return &CompareTile<Le>;
  if (direction == "GT") return &CompareTile<Gt>;
  if (direction == "GE") return &CompareTile<Ge>;
  return nullptr;
}

void SelectTile(const void* p, const void* x, const void* y, void* z, int64_t n) {
  const uint8_t* c = static_cast<const uint8_t*>(p);
  const float* a = static_cast<const float*>(x);
  const float* b = static_cast<const float*>(y);
  float* out = static_cast<float*>(z);
  for (int64_t k = 0; k < n; ++k) out[k] = c[k] ? a[k] : b[k];
}

// clamp(lo, x, hi) with NaN anywhere giving NaN, as the one-op kernel.
void ClampTile(const void* lo, const void* x, const void* hi, void* y, int64_t n) {
  const float* l = static_cast<const float*>(lo);
  const float* v = static_cast<const float*>(x);
  const float* h = static_cast<const float*>(hi);
  float* out = static_cast<float*>(y);
  for (int64_t k = 0; k < n; ++k) {
    const float a = l[k], c = h[k], z = v[k];
    out[k] = std::isnan(z) || std::isnan(a) || std::isnan(c) ? NAN : std::min(std::max(z, a), c);
  }
}

template <typename F>
void PredTile(const void* x, const void* y, const void*, void* z, int64_t n) {
  const F f;
  const uint8_t* a = static_cast<const uint8_t*>(x);
  const uint8_t* b = static_cast<const uint8_t*>(y);
  uint8_t* out = static_cast<uint8_t*>(z);
  for (int64_t k = 0; k < n; ++k) out[k] = f(a[k], b ? b[k] : 0);
}
struct And { uint8_t operator()(uint8_t x, uint8_t y) const { return x & y; } };
struct Or { uint8_t operator()(uint8_t x, uint8_t y) const { return x | y; } };
struct Xor { uint8_t operator()(uint8_t x, uint8_t y) const { return x ^ y; } };
struct Not { uint8_t operator()(uint8_t x, uint8_t) const { return uint8_t(!x); } };

// The tile function of loop op `m`, or nullptr.
TileFn TileFunction(const Instruction& m) {
  TileFn fn = nullptr;
  switch (m.opcode) {
    case Opcode::kCompare: return CompareFn(hlo::StringAttribute(m, "direction"));
    case Opcode::kSelect: return &SelectTile;
    case Opcode::kClamp: return &ClampTile;
    case Opcode::kAnd: return &PredTile<And>;
    case Opcode::kOr: return &PredTile<Or>;
    case Opcode::kXor: return &PredTile<Xor>;
    case Opcode::kNot: return &PredTile<Not>;
    default: break;
  }
  if (m.operands.size() == 2) VisitFloatBinary(m.opcode, [&](auto f) { fn = &BinaryTile<decltype(f)>; });
  if (m.operands.size() == 1) VisitFloatUnary(m.opcode, [&](auto f) { fn = &UnaryTile<decltype(f)>; });
  return fn;
}

// Registers by linear scan: a member's register is free once its last
// reader in the group has read it, then the next member takes the lowest
// free one. The result may overwrite an operand of its own element size
// (each tile function reads element k before writing element k), but not
// one of another size: a select's f32 results would overwrite the pred
// bytes of elements it has not read yet.
struct Allocation {
  std::unordered_map<const Instruction*, int> register_of;
  int peak = 0;
};
Allocation AllocateRegisters(const std::vector<const Instruction*>& members) {
  Allocation a;
  std::unordered_map<const Instruction*, int> reads_left;
  for (const Instruction* m : members) {
    for (const Instruction* o : m->operands) ++reads_left[o];
  }
  std::vector<bool> busy(members.size(), false);
  auto size = [](const Instruction* i) { return hlo::Info(i->shape.element_type()).byte_size; };
  for (size_t k = 0; k < members.size(); ++k) {
    const Instruction* m = members[k];
    std::vector<int> free_after;
    for (const Instruction* o : m->operands) {
      auto it = a.register_of.find(o);
      if (it == a.register_of.end() || --reads_left[o] != 0) continue;
      if (size(o) == size(m)) {
        busy[it->second] = false;
      } else {
        free_after.push_back(it->second);
      }
    }
    if (k + 1 < members.size()) {  // the root writes the output
      int r = 0;
      while (busy[r]) ++r;
      busy[r] = true;
      a.register_of[m] = r;
      a.peak = std::max(a.peak, r + 1);
    }
    for (int r : free_after) busy[r] = false;
  }
  return a;
}

// One step of the tile program. Operands name a register (>= 0) or an
// input (-1 - k); the result goes to register `out`, or to the kernel's
// output when `out` is -1 (the root). A splat fills its register with an
// f32 scalar input.
struct FusedOp {
  TileFn fn = nullptr;  // nullptr: a splat
  int a = 0, b = 0, c = 0;
  bool has_b = false, has_c = false;
  int out = -1;
};

}  // namespace

bool CompareDirectionKnown(const std::string& direction) { return CompareFn(direction) != nullptr; }

int FusedRegistersNeeded(const std::vector<const Instruction*>& members) { return AllocateRegisters(members).peak; }

Kernel FusedElementwiseKernel(const std::vector<const Instruction*>& members,
                              const std::vector<const Instruction*>& inputs, const std::vector<Slot>& input_slots,
                              const Slot& out) {
  if (members.empty()) return nullptr;
  const Allocation allocation = AllocateRegisters(members);
  if (allocation.peak > kMaxFusedRegisters) return nullptr;
  auto operand = [&](const Instruction* o) {
    auto r = allocation.register_of.find(o);
    if (r != allocation.register_of.end()) return r->second;
    return -1 - static_cast<int>(std::find(inputs.begin(), inputs.end(), o) - inputs.begin());
  };
  std::vector<FusedOp> ops;
  for (size_t k = 0; k < members.size(); ++k) {
    const Instruction& m = *members[k];
    FusedOp op;
    op.out = k + 1 == members.size() ? -1 : allocation.register_of.at(&m);
    if (IsScalarSplat(m)) {
      op.a = operand(m.operands[0]);
      ops.push_back(op);
      continue;
    }
    op.fn = TileFunction(m);
    if (!op.fn) return nullptr;
    op.a = operand(m.operands[0]);
    if ((op.has_b = m.operands.size() > 1)) op.b = operand(m.operands[1]);
    if ((op.has_c = m.operands.size() > 2)) op.c = operand(m.operands[2]);
    ops.push_back(op);
  }
  // Element sizes: an input's (rank-0 clamp bounds are read as scalars and
  // splatted below), and the root's.
  std::vector<int64_t> input_size;
  std::vector<bool> input_scalar;
  for (const Instruction* i : inputs) {
    input_size.push_back(hlo::Info(i->shape.element_type()).byte_size);
    input_scalar.push_back(i->shape.rank() == 0);
  }
  const int64_t result_size = hlo::Info(members.back()->shape.element_type()).byte_size;
  const int64_t n = members.back()->shape.ElementCount();
  return [ops, input_slots, input_size, input_scalar, result_size, out, n](const Frame& frame) {
    std::vector<const char*> in(input_slots.size());
    for (size_t k = 0; k < in.size(); ++k) in[k] = static_cast<const char*>(frame.At(input_slots[k]));
    char* result = static_cast<char*>(frame.At(out));
    frame.parallel->For(n, kGrain, [&](int64_t lo, int64_t hi) {
      alignas(64) float registers[kMaxFusedRegisters][kFusedTile];
      // A rank-0 operand read in place of an array (clamp's bounds): its
      // value splatted once per chunk into a tile of its own.
      alignas(64) float scalars[2][kFusedTile];
      for (int64_t t = lo; t < hi; t += kFusedTile) {
        const int64_t len = std::min(kFusedTile, hi - t);
        int scalar_tiles = 0;
        auto source = [&](int r) -> const void* {
          if (r >= 0) return registers[r];
          const int k = -1 - r;
          if (!input_scalar[k]) return in[k] + t * input_size[k];
          float* tile = scalars[scalar_tiles++ % 2];
          std::fill_n(tile, len, *reinterpret_cast<const float*>(in[k]));
          return tile;
        };
        for (const FusedOp& op : ops) {
          void* dst = op.out >= 0 ? static_cast<void*>(registers[op.out]) : static_cast<void*>(result + t * result_size);
          if (!op.fn) {
            std::fill_n(static_cast<float*>(dst), len, *reinterpret_cast<const float*>(in[-1 - op.a]));
            continue;
          }
          scalar_tiles = 0;
          const void* a = source(op.a);
          const void* b = op.has_b ? source(op.b) : nullptr;
          const void* c = op.has_c ? source(op.c) : nullptr;
          op.fn(a, b, c, dst, len);
        }
      }
    });
  };
}

}  // namespace anvil::cpu
