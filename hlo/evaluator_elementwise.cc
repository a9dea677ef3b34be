// Elementwise ops of the reference evaluator, by the StableHLO spec. Floats
// of every width are computed in double and rounded once into their type
// (exact for + - * / sqrt, whose double results round correctly to any
// narrower format); integers in 64-bit two's complement, then wrapped.
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>

#include "hlo/attributes.h"
#include "hlo/evaluator_internal.h"
#include "hlo/scalar_functions.h"
#include "hlo/scalar_ops.h"

namespace anvil::hlo::eval {
namespace {

using C = std::complex<double>;

Status Unsupported(const Instruction& i, ElementType t) {
  return Unimplemented("the evaluator does not run " + std::string(i.OpcodeSpelling()) + " on " +
                       std::string(HloName(t)));
}

int Width(ElementType t) { return Info(t).bit_width; }

// --- reduce_precision, on the bits of f32 or f64

// --- unary

// The evaluator's real-valued ops are hlo/scalar_functions' (plugins that
// compute in double use the same functions, so they agree bit for bit).
StatusOr<double> UnaryReal(const Instruction& i, double x) {
  switch (i.opcode) {
    case Opcode::kCopy:
    case Opcode::kReal: return x;
    case Opcode::kImag: return 0.0;
    default: break;
  }
  if (RealUnaryFunction f = RealUnaryOf(i.opcode)) return f(x);
  return Unimplemented("");
}

StatusOr<C> UnaryComplex(const Instruction& i, C x) {
  if (ComplexUnaryFunction f = ComplexUnaryOf(i.opcode)) return f(x);
  return Unimplemented("");
}

StatusOr<uint64_t> UnaryInt(const Instruction& i, uint64_t x, ElementType t) {
  if (std::optional<uint64_t> r = IntegerUnary(i.opcode, x, t)) return *r;
  return Unimplemented("");
}

// --- binary

StatusOr<uint64_t> BinaryInt(const Instruction& i, uint64_t a, uint64_t b, ElementType t) {
  if (std::optional<uint64_t> r = IntegerBinary(i.opcode, a, b, t)) return *r;
  return Unimplemented("");
}

StatusOr<double> BinaryReal(const Instruction& i, double a, double b) {
  if (RealBinaryFunction f = RealBinaryOf(i.opcode)) return f(a, b);
  return Unimplemented("");
}

StatusOr<C> BinaryComplex(const Instruction& i, C a, C b) {
  if (ComplexBinaryFunction f = ComplexBinaryOf(i.opcode)) return f(a, b);
  return Unimplemented("");
}

}  // namespace

int64_t TotalOrderKey(const Literal& l, int64_t k) {
  const int width = Width(l.shape().element_type());
  const uint64_t bits = l.GetBits(k);
  const uint64_t sign = uint64_t{1} << (width - 1);
  const auto magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude - 1 : magnitude;
}

namespace {

StatusOr<Literal> EvalCompare(const Instruction& i, const Literal& a, const Literal& b) {
  Literal out(Shape(ElementType::kPred, i.shape.dims()));
  const std::string direction = StringAttribute(i, "direction");
  const std::string type = StringAttribute(i, "type");
  const ElementType t = a.shape().element_type();
  ANVIL_ASSIGN_OR_RETURN(const unsigned mask, CompareDirectionMask(direction));
  const int64_t n = out.element_count();
  for (int64_t k = 0; k < n; ++k) {
    int ordering;
    if (IsComplex(t)) {
      C x = a.GetComplex(k), y = b.GetComplex(k);
      if (direction != "EQ" && direction != "NE") {
        return InvalidArgument("complex numbers compare only for EQ and NE");
      }
      ordering = x == y ? 0 : 2;
    } else if (IsFloat(t) && type == "TOTALORDER") {
      int64_t x = TotalOrderKey(a, k), y = TotalOrderKey(b, k);
      ordering = x < y ? -1 : (x > y ? 1 : 0);
    } else if (IsFloat(t)) {
      double x = a.GetDouble(k), y = b.GetDouble(k);
      ordering = std::isnan(x) || std::isnan(y) ? 2 : (x < y ? -1 : (x > y ? 1 : 0));
    } else if (IsSignedInt(t)) {
      int64_t x = a.GetInt(k), y = b.GetInt(k);
      ordering = x < y ? -1 : (x > y ? 1 : 0);
    } else {
      uint64_t x = BitsAt(a, k), y = BitsAt(b, k);
      ordering = x < y ? -1 : (x > y ? 1 : 0);
    }
    out.SetUint(k, (mask >> (ordering + 1)) & 1u);
  }
  return out;
}

// The general loop below, for operands and result of one full-width real
// type: the same scalar functions, with elements read and written in place
// instead of through Literal's per-element type dispatch.
template <typename T>
T* ElementsOf(Literal& l) {
  return reinterpret_cast<T*>(l.mutable_data().data());
}
template <typename T>
const T* ElementsOf(const Literal& l) {
  return reinterpret_cast<const T*>(l.data().data());
}

template <typename T>
Status FloatLoop(const Instruction& i, const std::vector<const Literal*>& operands, Literal& out) {
  const int64_t n = out.element_count();
  const T* a = ElementsOf<T>(*operands[0]);
  T* r = ElementsOf<T>(out);
  if (operands.size() == 1) {
    if (RealUnaryFunction f = RealUnaryOf(i.opcode)) {
      for (int64_t k = 0; k < n; ++k) r[k] = static_cast<T>(f(a[k]));
      return OkStatus();
    }
    for (int64_t k = 0; k < n; ++k) {
      StatusOr<double> v = UnaryReal(i, a[k]);
      if (!v.ok()) return Unsupported(i, out.shape().element_type());
      r[k] = static_cast<T>(*v);
    }
    return OkStatus();
  }
  const T* b = ElementsOf<T>(*operands[1]);
  if (RealBinaryFunction f = RealBinaryOf(i.opcode)) {
    for (int64_t k = 0; k < n; ++k) r[k] = static_cast<T>(f(a[k], b[k]));
    return OkStatus();
  }
  for (int64_t k = 0; k < n; ++k) {
    StatusOr<double> v = BinaryReal(i, a[k], b[k]);
    if (!v.ok()) return Unsupported(i, out.shape().element_type());
    r[k] = static_cast<T>(*v);
  }
  return OkStatus();
}

// The integer ops programs are mostly made of, as one loop each over
// full-width elements; false for the rest, which BinaryInt computes. Same
// answers as BinaryInt: wrap-around, shifts past the width give 0 (or the
// sign), the shift amount read as unsigned.
template <typename T>
bool CommonIntBinary(Opcode op, const T* a, const T* b, T* r, int64_t n) {
  using U = std::make_unsigned_t<T>;
  constexpr uint64_t kWidth = sizeof(T) * 8;
  auto each = [&](auto f) {
    for (int64_t k = 0; k < n; ++k) r[k] = static_cast<T>(f(a[k], b[k]));
    return true;
  };
  auto u = [](T x) { return static_cast<uint64_t>(static_cast<U>(x)); };
  switch (op) {
    case Opcode::kAdd: return each([&](T x, T y) { return u(x) + u(y); });
    case Opcode::kSubtract: return each([&](T x, T y) { return u(x) - u(y); });
    case Opcode::kMultiply: return each([&](T x, T y) { return u(x) * u(y); });
    case Opcode::kAnd: return each([&](T x, T y) { return u(x) & u(y); });
    case Opcode::kOr: return each([&](T x, T y) { return u(x) | u(y); });
    case Opcode::kXor: return each([&](T x, T y) { return u(x) ^ u(y); });
    case Opcode::kMaximum: return each([](T x, T y) { return x < y ? y : x; });
    case Opcode::kMinimum: return each([](T x, T y) { return y < x ? y : x; });
    case Opcode::kShiftLeft: return each([&](T x, T y) { return u(y) >= kWidth ? 0 : u(x) << u(y); });
    case Opcode::kShiftRightLogical: return each([&](T x, T y) { return u(y) >= kWidth ? 0 : u(x) >> u(y); });
    case Opcode::kShiftRightArithmetic:
      return each([&](T x, T y) {
        using S = std::make_signed_t<T>;
        const auto sx = static_cast<S>(x);
        return static_cast<T>(u(y) >= kWidth ? (sx < 0 ? S(-1) : S(0)) : static_cast<S>(sx >> u(y)));
      });
    default: return false;
  }
}

// Integers as BitsAt reads them: sign- or zero-extended to 64 bits.
template <typename T>
Status IntLoop(const Instruction& i, const std::vector<const Literal*>& operands, Literal& out) {
  const ElementType t = out.shape().element_type();
  const int64_t n = out.element_count();
  auto widen = [](T x) { return static_cast<uint64_t>(static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(x)); };
  const T* a = ElementsOf<T>(*operands[0]);
  T* r = ElementsOf<T>(out);
  if (operands.size() == 1) {
    for (int64_t k = 0; k < n; ++k) {
      StatusOr<uint64_t> v = UnaryInt(i, widen(a[k]), t);
      if (!v.ok()) return Unsupported(i, t);
      r[k] = static_cast<T>(*v);
    }
    return OkStatus();
  }
  const T* b = ElementsOf<T>(*operands[1]);
  if (CommonIntBinary<T>(i.opcode, a, b, r, n)) return OkStatus();
  for (int64_t k = 0; k < n; ++k) {
    StatusOr<uint64_t> v = BinaryInt(i, widen(a[k]), widen(b[k]), t);
    if (!v.ok()) return Unsupported(i, t);
    r[k] = static_cast<T>(*v);
  }
  return OkStatus();
}

// Runs the typed loop when every operand has the result's type and size and
// that type is f32, f64 or a full-width integer; nullopt otherwise.
std::optional<Status> TypedElementwise(const Instruction& i, const std::vector<const Literal*>& operands,
                                       Literal& out) {
  const ElementType t = out.shape().element_type();
  if (operands.empty() || operands.size() > 2) return std::nullopt;
  for (const Literal* o : operands) {
    if (o->shape().element_type() != t || o->element_count() != out.element_count()) return std::nullopt;
  }
  switch (t) {
    case ElementType::kF32: return FloatLoop<float>(i, operands, out);
    case ElementType::kF64: return FloatLoop<double>(i, operands, out);
    case ElementType::kS8: return IntLoop<int8_t>(i, operands, out);
    case ElementType::kS16: return IntLoop<int16_t>(i, operands, out);
    case ElementType::kS32: return IntLoop<int32_t>(i, operands, out);
    case ElementType::kS64: return IntLoop<int64_t>(i, operands, out);
    case ElementType::kU8: return IntLoop<uint8_t>(i, operands, out);
    case ElementType::kU16: return IntLoop<uint16_t>(i, operands, out);
    case ElementType::kU32: return IntLoop<uint32_t>(i, operands, out);
    case ElementType::kU64: return IntLoop<uint64_t>(i, operands, out);
    default: return std::nullopt;
  }
}

}  // namespace

StatusOr<Literal> EvalElementwise(const Instruction& i, const std::vector<const Literal*>& operands) {
  if (i.opcode == Opcode::kCompare) return EvalCompare(i, *operands[0], *operands[1]);
  Literal out(Shape(i.shape.element_type(), i.shape.dims()));
  const int64_t n = out.element_count();
  const Literal& a = *operands[0];
  const ElementType in = a.shape().element_type();
  const ElementType result = i.shape.element_type();
  if (i.opcode == Opcode::kSelect) {
    const Literal& p = *operands[0];
    const bool scalar_predicate = p.element_count() == 1;
    for (int64_t k = 0; k < n; ++k) {
      const Literal& pick = p.GetUint(scalar_predicate ? 0 : k) ? *operands[1] : *operands[2];
      CopyElement(pick, k, out, k);
    }
    return out;
  }
  if (i.opcode == Opcode::kClamp) {
    const Literal& lo = *operands[0];
    const Literal& x = *operands[1];
    const Literal& hi = *operands[2];
    const bool scalar_lo = lo.element_count() == 1, scalar_hi = hi.element_count() == 1;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t kl = scalar_lo ? 0 : k, kh = scalar_hi ? 0 : k;
      if (IsFloat(result)) {
        double v = x.GetDouble(k), l = lo.GetDouble(kl), h = hi.GetDouble(kh);
        double r = std::isnan(v) || std::isnan(l) || std::isnan(h) ? std::nan("") : std::min(std::max(v, l), h);
        out.SetDouble(k, r);
      } else if (IsSignedInt(result)) {
        out.SetInt(k, std::min(std::max(x.GetInt(k), lo.GetInt(kl)), hi.GetInt(kh)));
      } else if (IsIntegral(result)) {
        out.SetUint(k, std::min(std::max(BitsAt(x, k), BitsAt(lo, kl)), BitsAt(hi, kh)));
      } else {
        return Unsupported(i, result);
      }
    }
    return out;
  }
  if (i.opcode == Opcode::kReducePrecision) {
    auto exponent = IntAttribute(i, "exponent_bits", std::nullopt);
    auto mantissa = IntAttribute(i, "mantissa_bits", std::nullopt);
    if (!exponent.ok()) return exponent.status();
    if (!mantissa.ok()) return mantissa.status();
    if (!IsFloat(in)) return Unsupported(i, in);
    for (int64_t k = 0; k < n; ++k) {
      out.SetDouble(k, ReducePrecision(a.GetDouble(k), in, static_cast<int>(*exponent), static_cast<int>(*mantissa)));
    }
    return out;
  }
  if (i.opcode == Opcode::kIsFinite) {
    for (int64_t k = 0; k < n; ++k) out.SetUint(k, std::isfinite(a.GetDouble(k)));
    return out;
  }
  if (i.opcode == Opcode::kComplex) {
    for (int64_t k = 0; k < n; ++k) out.SetComplex(k, a.GetDouble(k), operands[1]->GetDouble(k));
    return out;
  }
  if (IsComplex(in) && (i.opcode == Opcode::kReal || i.opcode == Opcode::kImag || i.opcode == Opcode::kAbs)) {
    for (int64_t k = 0; k < n; ++k) {
      C x = a.GetComplex(k);
      out.SetDouble(k, i.opcode == Opcode::kReal ? x.real() : (i.opcode == Opcode::kImag ? x.imag() : std::abs(x)));
    }
    return out;
  }
  if (std::optional<Status> typed = TypedElementwise(i, operands, out)) {
    if (!typed->ok()) return *typed;
    return out;
  }
  const bool unary = operands.size() == 1;
  for (int64_t k = 0; k < n; ++k) {
    if (IsComplex(in)) {
      StatusOr<C> r = unary ? UnaryComplex(i, a.GetComplex(k)) : BinaryComplex(i, a.GetComplex(k), operands[1]->GetComplex(k));
      if (!r.ok()) return Unsupported(i, in);
      out.SetComplex(k, r->real(), r->imag());
    } else if (IsFloat(in)) {
      StatusOr<double> r = unary ? UnaryReal(i, a.GetDouble(k)) : BinaryReal(i, a.GetDouble(k), operands[1]->GetDouble(k));
      if (!r.ok()) return Unsupported(i, in);
      out.SetDouble(k, *r);
    } else if (IsIntegral(in)) {
      StatusOr<uint64_t> r = unary ? UnaryInt(i, BitsAt(a, k), in) : BinaryInt(i, BitsAt(a, k), BitsAt(*operands[1], k), in);
      if (!r.ok()) return Unsupported(i, in);
      SetBits(out, k, *r);
    } else {
      return Unsupported(i, in);
    }
  }
  return out;
}

StatusOr<Literal> EvalConvert(const Instruction& i, const Literal& a) {
  const ElementType from = a.shape().element_type();
  const ElementType to = i.shape.element_type();
  Literal out(Shape(to, i.shape.dims()));
  const size_t from_size = static_cast<size_t>(Info(from).byte_size), to_size = static_cast<size_t>(Info(to).byte_size);
  const uint8_t* src = a.data().data();
  uint8_t* dst = out.mutable_data().data();
  for (int64_t k = 0, n = out.element_count(); k < n; ++k) {
    ANVIL_ASSIGN_OR_RETURN(const Scalar r, ConvertScalar(from, to, LoadScalar(from, src + k * from_size)));
    StoreScalar(to, r, dst + k * to_size);
  }
  return out;
}

StatusOr<Literal> EvalBitcastConvert(const Instruction& i, const Literal& a) {
  Literal out(Shape(i.shape.element_type(), i.shape.dims()));
  const ElementType from = a.shape().element_type(), to = i.shape.element_type();
  const int from_bits = Info(from).bit_width, to_bits = Info(to).bit_width;
  if (from_bits % 8 == 0 && to_bits % 8 == 0 && a.data().size() == out.data().size()) {
    out.mutable_data() = a.data();  // both little-endian, row-major
    return out;
  }
  // Widths differ (and the shape gains or loses a last dimension), or one
  // side is narrower than a byte: stream the bits, lowest first.
  std::vector<bool> bits;
  bits.reserve(static_cast<size_t>(a.element_count() * from_bits));
  for (int64_t k = 0, k_end = a.element_count(); k < k_end; ++k) {
    uint64_t v = 0;
    if (IsComplex(from)) return Unimplemented("bitcast-convert of complex values to another width");
    v = a.GetBits(k);
    for (int b = 0; b < from_bits; ++b) bits.push_back((v >> b) & 1);
  }
  if (static_cast<int64_t>(bits.size()) != out.element_count() * to_bits) {
    return InvalidArgument("bitcast-convert changes the number of bits");
  }
  for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
    uint64_t v = 0;
    for (int b = 0; b < to_bits; ++b) v |= static_cast<uint64_t>(bits[static_cast<size_t>(k * to_bits + b)]) << b;
    if (IsFloat(to) || IsComplex(to)) {
      std::memcpy(out.mutable_data().data() + k * Info(to).byte_size, &v, Info(to).byte_size);
    } else {
      SetBits(out, k, v);
    }
  }
  return out;
}

}  // namespace anvil::hlo::eval
