#include "hlo/scalar_ops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>

#include "hlo/attributes.h"

namespace anvil::hlo {
namespace {

using C = std::complex<double>;

uint64_t WidthMask(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

int64_t SignExtended(uint64_t v, int width) {
  if (width >= 64) return static_cast<int64_t>(v);
  const uint64_t sign = uint64_t{1} << (width - 1);
  v &= (sign << 1) - 1;
  return static_cast<int64_t>((v ^ sign) - sign);
}

// TOTALORDER's key of a float's bits: negative values below positive ones,
// -NaN lowest and +NaN highest.
int64_t TotalOrder(uint64_t bits, int width) {
  const uint64_t sign = uint64_t{1} << (width - 1);
  const auto magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude - 1 : magnitude;
}

Status Unsupported(const Instruction& i, ElementType t) {
  return Unimplemented("no element-by-element form of " + std::string(i.OpcodeSpelling()) + " on " +
                       std::string(HloName(t)));
}

}  // namespace

Scalar LoadScalar(ElementType t, const void* element) {
  const ElementTypeInfo& info = Info(t);
  Scalar s;
  switch (info.type_class) {
    case TypeClass::kFloat: {
      std::memcpy(&s.bits, element, static_cast<size_t>(info.byte_size));
      if (t == ElementType::kF32) {
        s.re = std::bit_cast<float>(static_cast<uint32_t>(s.bits));
      } else if (t == ElementType::kF64) {
        s.re = std::bit_cast<double>(s.bits);
      } else {
        s.re = DecodeFloat(*info.float_format, static_cast<uint32_t>(s.bits));
      }
      return s;
    }
    case TypeClass::kComplex: {
      if (t == ElementType::kC64) {
        float parts[2];
        std::memcpy(parts, element, 8);
        s.re = parts[0];
        s.im = parts[1];
      } else {
        double parts[2];
        std::memcpy(parts, element, 16);
        s.re = parts[0];
        s.im = parts[1];
      }
      return s;
    }
    default: {
      uint64_t raw = 0;
      std::memcpy(&raw, element, static_cast<size_t>(std::min(info.byte_size, 8)));
      s.bits = IsSignedInt(t) ? static_cast<uint64_t>(SignExtended(raw, info.bit_width)) : raw & WidthMask(info.bit_width);
      return s;
    }
  }
}

void StoreScalar(ElementType t, const Scalar& v, void* element) {
  const ElementTypeInfo& info = Info(t);
  switch (info.type_class) {
    case TypeClass::kFloat: {
      if (t == ElementType::kF32) {
        const float f = static_cast<float>(v.re);
        std::memcpy(element, &f, 4);
      } else if (t == ElementType::kF64) {
        std::memcpy(element, &v.re, 8);
      } else {
        const uint32_t bits = EncodeFloat(*info.float_format, v.re);
        std::memcpy(element, &bits, static_cast<size_t>(info.byte_size));
      }
      return;
    }
    case TypeClass::kComplex: {
      if (t == ElementType::kC64) {
        const float parts[2] = {static_cast<float>(v.re), static_cast<float>(v.im)};
        std::memcpy(element, parts, 8);
      } else {
        const double parts[2] = {v.re, v.im};
        std::memcpy(element, parts, 16);
      }
      return;
    }
    default: {
      uint64_t bits = v.bits;
      if (IsPred(t)) {
        bits = bits != 0;
      } else if (info.bit_width < 64) {
        bits &= WidthMask(info.bit_width);
        // Sub-byte signed values are stored sign-extended to their byte.
        if (IsSignedInt(t) && (bits >> (info.bit_width - 1)) & 1) bits |= ~WidthMask(info.bit_width);
      }
      std::memcpy(element, &bits, static_cast<size_t>(std::min(info.byte_size, 8)));
      return;
    }
  }
}

Scalar Canonical(ElementType t, const Scalar& v) {
  alignas(16) unsigned char element[16] = {};
  StoreScalar(t, v, element);
  return LoadScalar(t, element);
}

StatusOr<Scalar> ConvertScalar(ElementType from, ElementType to, const Scalar& v) {
  Scalar r;
  if (IsComplex(from)) {
    if (IsComplex(to) || IsFloat(to)) {
      r.re = v.re;
      r.im = IsComplex(to) ? v.im : 0;
    } else if (IsPred(to)) {
      r.bits = v.re != 0;  // like every complex-to-real conversion: the real part
    } else {
      Scalar real;
      real.re = v.re;
      return ConvertScalar(ElementType::kF64, to, real);  // the real part, converted as a float would be
    }
  } else if (IsFloat(from)) {
    const double x = v.re;
    if (IsFloat(to) || IsComplex(to)) {
      r.re = x;
    } else if (IsPred(to)) {
      r.bits = x != 0;
    } else if (std::isnan(x)) {
      r.bits = 0;  // float to integer: NaN to 0, out-of-range saturates (XLA's choice)
    } else if (IsSignedInt(to)) {
      const int w = Info(to).bit_width;
      const double lo = -std::ldexp(1.0, w - 1), hi = std::ldexp(1.0, w - 1);
      const int64_t s = x <= lo ? static_cast<int64_t>(lo)
                                : (x >= hi ? (w >= 64 ? INT64_MAX : (int64_t{1} << (w - 1)) - 1)
                                           : static_cast<int64_t>(std::trunc(x)));
      r.bits = static_cast<uint64_t>(s);
    } else {
      const int w = Info(to).bit_width;
      const double hi = std::ldexp(1.0, w);
      r.bits = x <= 0 ? 0 : (x >= hi ? WidthMask(w) : static_cast<uint64_t>(std::trunc(x)));
    }
  } else if (IsInteger(from) || IsPred(from)) {
    const bool is_signed = IsSignedInt(from);
    if (to == ElementType::kF32) {
      // Round the integer straight to f32, not through double.
      r.re = is_signed ? static_cast<float>(static_cast<int64_t>(v.bits)) : static_cast<float>(v.bits);
    } else if (IsFloat(to) || IsComplex(to)) {
      r.re = is_signed ? static_cast<double>(static_cast<int64_t>(v.bits)) : static_cast<double>(v.bits);
    } else if (IsPred(to)) {
      r.bits = v.bits != 0;
    } else {
      r.bits = v.bits;
    }
  } else {
    return Unimplemented("convert from " + std::string(HloName(from)));
  }
  if (!IsArrayType(to)) return Unimplemented("convert to " + std::string(HloName(to)));
  return Canonical(to, r);
}

StatusOr<unsigned> CompareDirectionMask(const std::string& direction) {
  if (direction == "EQ") return 0b0010u;
  if (direction == "NE") return 0b1101u;
  if (direction == "LT") return 0b0001u;
  if (direction == "LE") return 0b0011u;
  if (direction == "GT") return 0b0100u;
  if (direction == "GE") return 0b0110u;
  return InvalidArgument("bad compare direction '" + direction + "'");
}

StatusOr<ScalarOp> ScalarOp::Of(const Instruction& i) {
  ScalarOp op;
  op.opcode_ = i.opcode;
  op.result_ = i.shape.element_type();
  op.operand_count_ = static_cast<int>(i.operands.size());
  if (!i.shape.IsArray() || i.operands.empty()) return Unsupported(i, op.result_);
  for (const Instruction* o : i.operands) {
    if (!o->shape.IsArray()) return Unsupported(i, op.result_);
  }
  const ElementType in = i.operands[0]->shape.element_type();
  op.operand_ = in;
  auto order_of = [](ElementType t) {
    if (IsComplex(t)) return Order::kComplex;
    if (IsFloat(t)) return Order::kFloat;
    if (IsSignedInt(t)) return Order::kSigned;
    return Order::kUnsigned;
  };
  switch (i.opcode) {
    case Opcode::kCompare: {
      if (op.operand_count_ != 2) return Unsupported(i, in);
      const std::string direction = StringAttribute(i, "direction");
      ANVIL_ASSIGN_OR_RETURN(op.compare_mask_, CompareDirectionMask(direction));
      op.kind_ = Kind::kCompare;
      op.order_ = order_of(in);
      if (op.order_ == Order::kFloat && StringAttribute(i, "type") == "TOTALORDER") op.order_ = Order::kTotal;
      if (op.order_ == Order::kComplex && direction != "EQ" && direction != "NE") {
        return InvalidArgument("complex numbers compare only for EQ and NE");
      }
      return op;
    }
    case Opcode::kSelect:
      if (op.operand_count_ != 3) return Unsupported(i, in);
      op.kind_ = Kind::kSelect;
      return op;
    case Opcode::kClamp:
      if (op.operand_count_ != 3 || IsComplex(op.result_) || !IsArrayType(op.result_)) return Unsupported(i, op.result_);
      op.kind_ = Kind::kClamp;
      op.order_ = order_of(op.result_);
      return op;
    case Opcode::kConvert: {
      op.kind_ = Kind::kConvert;
      Scalar zero;
      ANVIL_RETURN_IF_ERROR(ConvertScalar(in, op.result_, zero).status());
      return op;
    }
    case Opcode::kReducePrecision: {
      if (!IsFloat(in)) return Unsupported(i, in);
      ANVIL_ASSIGN_OR_RETURN(int64_t exponent, IntAttribute(i, "exponent_bits", std::nullopt));
      ANVIL_ASSIGN_OR_RETURN(int64_t mantissa, IntAttribute(i, "mantissa_bits", std::nullopt));
      op.kind_ = Kind::kReducePrecision;
      op.exponent_bits_ = static_cast<int>(exponent);
      op.mantissa_bits_ = static_cast<int>(mantissa);
      return op;
    }
    case Opcode::kIsFinite:
      op.kind_ = Kind::kIsFinite;
      return op;
    case Opcode::kComplex:
      if (op.operand_count_ != 2 || !IsFloat(in)) return Unsupported(i, in);
      op.kind_ = Kind::kMakeComplex;
      return op;
    case Opcode::kCopy:
      op.kind_ = Kind::kCopy;
      return op;
    default: break;
  }
  if (IsComplex(in) && op.operand_count_ == 1 &&
      (i.opcode == Opcode::kReal || i.opcode == Opcode::kImag || i.opcode == Opcode::kAbs)) {
    op.kind_ = i.opcode == Opcode::kReal ? Kind::kRealPart : (i.opcode == Opcode::kImag ? Kind::kImagPart : Kind::kComplexAbs);
    return op;
  }
  if (op.operand_count_ > 2 || (!IsElementwiseUnary(i.opcode) && !IsElementwiseBinary(i.opcode))) {
    return Unsupported(i, in);
  }
  const bool unary = op.operand_count_ == 1;
  if (IsComplex(in)) {
    op.kind_ = unary ? Kind::kComplexUnary : Kind::kComplexBinary;
    if (unary) op.complex_unary_ = ComplexUnaryOf(i.opcode);
    if (!unary) op.complex_binary_ = ComplexBinaryOf(i.opcode);
    if (!op.complex_unary_ && !op.complex_binary_) return Unsupported(i, in);
  } else if (IsFloat(in)) {
    if (unary && i.opcode == Opcode::kReal) {
      op.kind_ = Kind::kCopy;
    } else if (unary && i.opcode == Opcode::kImag) {
      op.kind_ = Kind::kImagOfReal;
    } else {
      op.kind_ = unary ? Kind::kRealUnary : Kind::kRealBinary;
      if (unary) op.real_unary_ = RealUnaryOf(i.opcode);
      if (!unary) op.real_binary_ = RealBinaryOf(i.opcode);
      if (!op.real_unary_ && !op.real_binary_) return Unsupported(i, in);
    }
  } else if (IsInteger(in) || IsPred(in)) {
    op.kind_ = unary ? Kind::kIntegerUnary : Kind::kIntegerBinary;
    // Whether an integer op is defined never depends on its operands' values.
    const bool defined = unary ? IntegerUnary(i.opcode, 0, in).has_value() : IntegerBinary(i.opcode, 0, 0, in).has_value();
    if (!defined) return Unsupported(i, in);
  } else {
    return Unsupported(i, in);
  }
  return op;
}

Scalar ScalarOp::Apply(const Scalar* x) const {
  Scalar r;
  switch (kind_) {
    case Kind::kCopy: r = x[0]; break;
    case Kind::kRealUnary: r.re = real_unary_(x[0].re); break;
    case Kind::kRealBinary: r.re = real_binary_(x[0].re, x[1].re); break;
    case Kind::kImagOfReal: r.re = 0; break;
    case Kind::kComplexUnary: {
      const C c = complex_unary_(C(x[0].re, x[0].im));
      r.re = c.real();
      r.im = c.imag();
      break;
    }
    case Kind::kComplexBinary: {
      const C c = complex_binary_(C(x[0].re, x[0].im), C(x[1].re, x[1].im));
      r.re = c.real();
      r.im = c.imag();
      break;
    }
    case Kind::kIntegerUnary: r.bits = *IntegerUnary(opcode_, x[0].bits, operand_); break;
    case Kind::kIntegerBinary: r.bits = *IntegerBinary(opcode_, x[0].bits, x[1].bits, operand_); break;
    case Kind::kCompare: {
      int ordering = 2;
      const Scalar& a = x[0];
      const Scalar& b = x[1];
      switch (order_) {
        case Order::kComplex: ordering = a.re == b.re && a.im == b.im ? 0 : 2; break;
        case Order::kTotal: {
          const int width = Info(operand_).bit_width;
          const int64_t ka = TotalOrder(a.bits, width), kb = TotalOrder(b.bits, width);
          ordering = ka < kb ? -1 : (ka > kb ? 1 : 0);
          break;
        }
        case Order::kFloat:
          ordering = std::isnan(a.re) || std::isnan(b.re) ? 2 : (a.re < b.re ? -1 : (a.re > b.re ? 1 : 0));
          break;
        case Order::kSigned: {
          const auto sa = static_cast<int64_t>(a.bits), sb = static_cast<int64_t>(b.bits);
          ordering = sa < sb ? -1 : (sa > sb ? 1 : 0);
          break;
        }
        case Order::kUnsigned: ordering = a.bits < b.bits ? -1 : (a.bits > b.bits ? 1 : 0); break;
      }
      r.bits = (compare_mask_ >> (ordering + 1)) & 1u;
      break;
    }
    case Kind::kSelect: return x[0].bits ? x[1] : x[2];
    case Kind::kClamp: {
      const Scalar &lo = x[0], &v = x[1], &hi = x[2];
      switch (order_) {
        case Order::kFloat:
          r.re = std::isnan(v.re) || std::isnan(lo.re) || std::isnan(hi.re) ? std::nan("")
                                                                              : std::min(std::max(v.re, lo.re), hi.re);
          break;
        case Order::kSigned:
          r.bits = static_cast<uint64_t>(std::min(std::max(static_cast<int64_t>(v.bits), static_cast<int64_t>(lo.bits)),
                                                  static_cast<int64_t>(hi.bits)));
          break;
        default: r.bits = std::min(std::max(v.bits, lo.bits), hi.bits); break;
      }
      break;
    }
    case Kind::kConvert: return *ConvertScalar(operand_, result_, x[0]);
    case Kind::kIsFinite: r.bits = std::isfinite(x[0].re); break;
    case Kind::kMakeComplex:
      r.re = x[0].re;
      r.im = x[1].re;
      break;
    case Kind::kRealPart: r.re = x[0].re; break;
    case Kind::kImagPart: r.re = x[0].im; break;
    case Kind::kComplexAbs: r.re = std::abs(C(x[0].re, x[0].im)); break;
    case Kind::kReducePrecision: r.re = ReducePrecision(x[0].re, operand_, exponent_bits_, mantissa_bits_); break;
  }
  return Canonical(result_, r);
}

}  // namespace anvil::hlo
