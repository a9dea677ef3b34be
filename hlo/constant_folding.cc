#include "hlo/constant_folding.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "hlo/attributes.h"

namespace anvil::hlo {
namespace {

// Constants larger than this stay as they are: folding them would grow the
// program text more than it saves.
constexpr int64_t kMaxFoldedElements = 1 << 16;

bool IsFoldableConstant(const Instruction* i) {
  return i->opcode == Opcode::kConstant && i->literal && !i->literal->elided() && i->shape.IsArray();
}

bool Foldable(ElementType t) {
  switch (Info(t).type_class) {
    case TypeClass::kPred:
    case TypeClass::kSigned:
    case TypeClass::kUnsigned:
      return Info(t).bit_width >= 8 || t == ElementType::kPred;
    case TypeClass::kFloat:
      return true;
    default:
      return false;
  }
}

std::optional<bool> Compare(const std::string& direction, double a, double b) {
  if (direction == "EQ") return a == b;
  if (direction == "NE") return a != b;
  if (direction == "LT") return a < b;
  if (direction == "LE") return a <= b;
  if (direction == "GT") return a > b;
  if (direction == "GE") return a >= b;
  return std::nullopt;
}

std::optional<bool> CompareInt(const std::string& direction, bool is_unsigned, uint64_t a, uint64_t b) {
  if (!is_unsigned) {
    auto sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
    if (direction == "LT") return sa < sb;
    if (direction == "LE") return sa <= sb;
    if (direction == "GT") return sa > sb;
    if (direction == "GE") return sa >= sb;
  } else {
    if (direction == "LT") return a < b;
    if (direction == "LE") return a <= b;
    if (direction == "GT") return a > b;
    if (direction == "GE") return a >= b;
  }
  if (direction == "EQ") return a == b;
  if (direction == "NE") return a != b;
  return std::nullopt;
}

// Whether a compare's `type` attribute is what its operands' element type
// implies (JAX writes it out: SIGNED for s32, FLOAT for f32): the folds
// below compute that comparison. TOTALORDER and mismatches are left to the
// evaluator.
bool DefaultComparisonType(const std::string& type, ElementType operands) {
  if (type.empty()) return true;
  switch (Info(operands).type_class) {
    case TypeClass::kFloat: return type == "FLOAT";
    case TypeClass::kSigned: return type == "SIGNED";
    case TypeClass::kPred:
    case TypeClass::kUnsigned: return type == "UNSIGNED";
    default: return false;
  }
}

// Integer value of element k, sign- or zero-extended to 64 bits.
uint64_t IntBits(const Literal& l, int64_t k) {
  return IsUnsignedInt(l.shape().element_type()) || IsPred(l.shape().element_type())
             ? l.GetUint(k)
             : static_cast<uint64_t>(l.GetInt(k));
}

// The folded literal of `i`, or nullopt when it cannot be folded.
std::optional<Literal> Fold(const Instruction& i) {
  if (!i.shape.IsArray() || !Foldable(i.shape.element_type())) return std::nullopt;
  if (i.shape.ElementCount() > kMaxFoldedElements || i.operands.empty()) return std::nullopt;
  for (const Instruction* o : i.operands) {
    if (!IsFoldableConstant(o) || !Foldable(o->shape.element_type())) return std::nullopt;
  }
  const Literal& a = *i.operands[0]->literal;
  const ElementType in = a.shape().element_type();
  const ElementType out = i.shape.element_type();
  Literal result(Shape(out, i.shape.dims()));
  const int64_t n = i.shape.ElementCount();
  switch (i.opcode) {
    case Opcode::kBroadcast: {
      auto dims = IntListAttribute(i, "dimensions");
      if (!dims.ok() || a.element_count() != 1 || in != out) return std::nullopt;  // scalar broadcasts only
      if (n > kMaxSplatConstantElements) return std::nullopt;
      for (int64_t k = 0; k < n; ++k) {
        std::copy_n(a.data().begin(), Info(out).byte_size, result.mutable_data().begin() + k * Info(out).byte_size);
      }
      return result;
    }
    case Opcode::kReshape:
    case Opcode::kCopy:
      if (in != out) return std::nullopt;
      result.mutable_data() = a.data();
      return result;
    case Opcode::kConvert:
      for (int64_t k = 0; k < n; ++k) {
        if (IsFloat(in) && !IsFloat(out)) return std::nullopt;  // float->int saturation rules: left to the evaluator
        if (IsFloat(in)) {
          result.SetDouble(k, a.GetDouble(k));
        } else if (IsFloat(out)) {
          result.SetDouble(k, IsUnsignedInt(in) || IsPred(in) ? static_cast<double>(a.GetUint(k))
                                                               : static_cast<double>(a.GetInt(k)));
        } else if (IsPred(out)) {
          result.SetUint(k, IntBits(a, k) != 0);
        } else {
          result.SetUint(k, IntBits(a, k));
        }
      }
      return result;
    case Opcode::kSelect: {
      // select(p, x, y) of constants: the predicate a scalar or one per
      // element (what is left of JAX's `where` on constants once its call is
      // inlined).
      if (i.operands.size() != 3 || !IsPred(in)) return std::nullopt;
      const Literal& x = *i.operands[1]->literal;
      const Literal& y = *i.operands[2]->literal;
      if (x.shape().element_type() != out || y.shape().element_type() != out || x.element_count() != n ||
          y.element_count() != n || (a.element_count() != 1 && a.element_count() != n)) {
        return std::nullopt;
      }
      const size_t size = Info(out).byte_size;
      for (int64_t k = 0; k < n; ++k) {
        const Literal& chosen = a.GetUint(a.element_count() == 1 ? 0 : k) ? x : y;
        std::copy_n(chosen.data().begin() + k * size, size, result.mutable_data().begin() + k * size);
      }
      return result;
    }
    default: break;
  }
  if (in != out && i.opcode != Opcode::kCompare) return std::nullopt;
  const bool is_float = IsFloat(in);
  const bool is_unsigned = IsUnsignedInt(in) || IsPred(in);
  if (IsElementwiseUnary(i.opcode) && i.operands.size() == 1) {
    for (int64_t k = 0; k < n; ++k) {
      if (is_float) {
        double x = a.GetDouble(k);
        switch (i.opcode) {
          case Opcode::kNegate: result.SetDouble(k, -x); break;
          case Opcode::kAbs: result.SetDouble(k, std::fabs(x)); break;
          default: return std::nullopt;
        }
      } else {
        uint64_t x = IntBits(a, k);
        switch (i.opcode) {
          case Opcode::kNegate: result.SetUint(k, 0 - x); break;
          case Opcode::kNot: result.SetUint(k, IsPred(in) ? !x : ~x); break;
          case Opcode::kAbs:
            if (is_unsigned) return std::nullopt;
            result.SetUint(k, static_cast<int64_t>(x) < 0 ? 0 - x : x);
            break;
          default: return std::nullopt;
        }
      }
    }
    return result;
  }
  if (!IsElementwiseBinary(i.opcode) || i.operands.size() != 2) return std::nullopt;
  const Literal& b = *i.operands[1]->literal;
  if (b.shape().element_type() != in || b.element_count() != n || a.element_count() != n) return std::nullopt;
  const std::string direction = StringAttribute(i, "direction");
  for (int64_t k = 0; k < n; ++k) {
    if (i.opcode == Opcode::kCompare) {
      std::optional<bool> r = is_float ? Compare(direction, a.GetDouble(k), b.GetDouble(k))
                                       : CompareInt(direction, is_unsigned, IntBits(a, k), IntBits(b, k));
      if (!r || !DefaultComparisonType(StringAttribute(i, "type"), in)) return std::nullopt;
      result.SetUint(k, *r);
      continue;
    }
    if (is_float) {
      // Exact in double for every narrower format, then rounded once.
      double x = a.GetDouble(k), y = b.GetDouble(k);
      switch (i.opcode) {
        case Opcode::kAdd: result.SetDouble(k, x + y); break;
        case Opcode::kSubtract: result.SetDouble(k, x - y); break;
        case Opcode::kMultiply: result.SetDouble(k, x * y); break;
        default: return std::nullopt;  // max/min NaN rules, division: the evaluator's
      }
    } else {
      uint64_t x = IntBits(a, k), y = IntBits(b, k);
      if (IsPred(in)) {
        // pred arithmetic is logic: add is or, multiply is and.
        switch (i.opcode) {
          case Opcode::kAdd: case Opcode::kOr: case Opcode::kMaximum: result.SetUint(k, x | y); continue;
          case Opcode::kMultiply: case Opcode::kAnd: case Opcode::kMinimum: result.SetUint(k, x & y); continue;
          case Opcode::kXor: result.SetUint(k, x ^ y); continue;
          default: return std::nullopt;
        }
      }
      switch (i.opcode) {
        case Opcode::kAdd: result.SetUint(k, x + y); break;  // wraps, as the spec says
        case Opcode::kSubtract: result.SetUint(k, x - y); break;
        case Opcode::kMultiply: result.SetUint(k, x * y); break;
        case Opcode::kAnd: result.SetUint(k, x & y); break;
        case Opcode::kOr: result.SetUint(k, x | y); break;
        case Opcode::kXor: result.SetUint(k, x ^ y); break;
        case Opcode::kMaximum:
          result.SetUint(k, is_unsigned ? std::max(x, y)
                                        : static_cast<uint64_t>(std::max(static_cast<int64_t>(x), static_cast<int64_t>(y))));
          break;
        case Opcode::kMinimum:
          result.SetUint(k, is_unsigned ? std::min(x, y)
                                        : static_cast<uint64_t>(std::min(static_cast<int64_t>(x), static_cast<int64_t>(y))));
          break;
        default: return std::nullopt;
      }
    }
  }
  return result;
}

}  // namespace

void ReplaceAllUses(Computation& c, Instruction* from, Instruction* to) {
  for (auto& i : c.instructions) {
    for (Instruction*& o : i->operands) {
      if (o == from) o = to;
    }
  }
  if (c.root == from) c.root = to;
}

int FoldConstants(Module& module) {
  int folded = 0;
  for (auto& c : module.computations) {
    for (auto& owned : c->instructions) {
      Instruction& i = *owned;
      if (i.opcode == Opcode::kGetTupleElement && i.operands.size() == 1 &&
          i.operands[0]->opcode == Opcode::kTuple) {
        auto index = IntAttribute(i, "index", std::nullopt);
        if (index.ok() && *index >= 0 && *index < static_cast<int64_t>(i.operands[0]->operands.size())) {
          ReplaceAllUses(*c, &i, i.operands[0]->operands[*index]);
          ++folded;
        }
        continue;
      }
      if (i.opcode == Opcode::kConstant || i.opcode == Opcode::kParameter) continue;
      std::optional<Literal> value = Fold(i);
      if (!value) continue;
      // The instruction becomes the constant in place: same name, same shape.
      i.opcode = Opcode::kConstant;
      i.operands.clear();
      i.attributes.clear();
      i.called_computations.clear();
      i.literal = std::move(*value);
      ++folded;
    }
  }
  return folded;
}

}  // namespace anvil::hlo
