#include "plugins/cpu/kernels_fused.h"

#include <algorithm>
#include <unordered_map>

#include "plugins/cpu/float_functions.h"

namespace anvil::cpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr int64_t kGrain = 1 << 15;

template <typename F>
void UnaryTile(const float* x, float* y, int64_t n) {
  const F f;
  for (int64_t k = 0; k < n; ++k) y[k] = f(x[k]);
}

template <typename F>
void BinaryTile(const float* x, const float* y, float* z, int64_t n) {
  const F f;
  for (int64_t k = 0; k < n; ++k) z[k] = f(x[k], y[k]);
}

// One step of the tile program. Operands name a register (>= 0) or an
// input (-1 - k); the result goes to register `out`, or to the kernel's
// output when `out` is -1 (the root).
struct FusedOp {
  enum class Kind : uint8_t { kUnary, kBinary, kSplat } kind = Kind::kUnary;
  void (*unary)(const float*, float*, int64_t) = nullptr;
  void (*binary)(const float*, const float*, float*, int64_t) = nullptr;
  int a = 0, b = 0;
  int out = -1;
};

// Registers by linear scan: a member's operand registers are free once it
// has read them (it is their only reader, and the tile functions allow the
// result to overwrite an operand), then the member takes the lowest free one.
struct Allocation {
  std::unordered_map<const Instruction*, int> register_of;
  int peak = 0;
};
Allocation AllocateRegisters(const std::vector<const Instruction*>& members) {
  Allocation a;
  std::vector<bool> busy(members.size(), false);
  for (size_t k = 0; k < members.size(); ++k) {
    for (const Instruction* o : members[k]->operands) {
      auto it = a.register_of.find(o);
      if (it != a.register_of.end()) busy[it->second] = false;
    }
    if (k + 1 == members.size()) break;  // the root writes the output
    int r = 0;
    while (busy[r]) ++r;
    busy[r] = true;
    a.register_of[members[k]] = r;
    a.peak = std::max(a.peak, r + 1);
  }
  return a;
}

}  // namespace

int FusedRegistersNeeded(const std::vector<const Instruction*>& members) { return AllocateRegisters(members).peak; }

Kernel FusedElementwiseKernel(const std::vector<const Instruction*>& members,
                              const std::vector<const Instruction*>& inputs, const std::vector<Slot>& input_slots,
                              const Slot& out) {
  const Allocation allocation = AllocateRegisters(members);
  if (allocation.peak > kMaxFusedRegisters || members.empty()) return nullptr;
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
    if (m.opcode == Opcode::kBroadcast) {
      op.kind = FusedOp::Kind::kSplat;
      op.a = operand(m.operands[0]);
    } else if (m.operands.size() == 2) {
      op.kind = FusedOp::Kind::kBinary;
      if (!VisitFloatBinary(m.opcode, [&](auto f) { op.binary = &BinaryTile<decltype(f)>; })) return nullptr;
      op.a = operand(m.operands[0]);
      op.b = operand(m.operands[1]);
    } else {
      op.kind = FusedOp::Kind::kUnary;
      if (!VisitFloatUnary(m.opcode, [&](auto f) { op.unary = &UnaryTile<decltype(f)>; })) return nullptr;
      op.a = operand(m.operands[0]);
    }
    ops.push_back(op);
  }
  const int64_t n = members.back()->shape.ElementCount();
  return [ops, input_slots, out, n](const Frame& frame) {
    std::vector<const float*> in(input_slots.size());
    for (size_t k = 0; k < in.size(); ++k) in[k] = static_cast<const float*>(frame.At(input_slots[k]));
    float* result = static_cast<float*>(frame.At(out));
    frame.parallel->For(n, kGrain, [&](int64_t lo, int64_t hi) {
      alignas(64) float registers[kMaxFusedRegisters][kFusedTile];
      for (int64_t t = lo; t < hi; t += kFusedTile) {
        const int64_t len = std::min(kFusedTile, hi - t);
        auto source = [&](int r) -> const float* { return r >= 0 ? registers[r] : in[-1 - r] + t; };
        for (const FusedOp& op : ops) {
          float* dst = op.out >= 0 ? registers[op.out] : result + t;
          switch (op.kind) {
            case FusedOp::Kind::kUnary: op.unary(source(op.a), dst, len); break;
            case FusedOp::Kind::kBinary: op.binary(source(op.a), source(op.b), dst, len); break;
            case FusedOp::Kind::kSplat: std::fill_n(dst, len, in[-1 - op.a][0]); break;
          }
        }
      }
    });
  };
}

}  // namespace anvil::cpu
