#include "hlo/element_type.h"

#include <cmath>
#include <limits>

namespace anvil::hlo {
namespace {

using Nan = FloatFormat::Nan;

constexpr FloatFormat kF4E2M1FN{2, 1, 1, true, false, Nan::kNone};
constexpr FloatFormat kF6E2M3FN{2, 3, 1, true, false, Nan::kNone};
constexpr FloatFormat kF6E3M2FN{3, 2, 3, true, false, Nan::kNone};
constexpr FloatFormat kF8E3M4{3, 4, 3, true, true, Nan::kIeee};
constexpr FloatFormat kF8E4M3{4, 3, 7, true, true, Nan::kIeee};
constexpr FloatFormat kF8E4M3FN{4, 3, 7, true, false, Nan::kAllOnes};
constexpr FloatFormat kF8E4M3FNUZ{4, 3, 8, true, false, Nan::kNegativeZero};
constexpr FloatFormat kF8E4M3B11FNUZ{4, 3, 11, true, false, Nan::kNegativeZero};
constexpr FloatFormat kF8E5M2{5, 2, 15, true, true, Nan::kIeee};
constexpr FloatFormat kF8E5M2FNUZ{5, 2, 16, true, false, Nan::kNegativeZero};
constexpr FloatFormat kF8E8M0FNU{8, 0, 127, false, false, Nan::kAllOnesNoSign};
constexpr FloatFormat kBF16{8, 7, 127, true, true, Nan::kIeee};
constexpr FloatFormat kF16{5, 10, 15, true, true, Nan::kIeee};

using E = ElementType;
using C = TypeClass;

constexpr ElementTypeInfo kInfos[] = {
    {E::kInvalid, "invalid", "invalid", C::kInvalid, 0, 0, nullptr},
    {E::kPred, "pred", "i1", C::kPred, 1, 1, nullptr},
    {E::kS2, "s2", "i2", C::kSigned, 2, 1, nullptr},
    {E::kS4, "s4", "i4", C::kSigned, 4, 1, nullptr},
    {E::kS8, "s8", "i8", C::kSigned, 8, 1, nullptr},
    {E::kS16, "s16", "i16", C::kSigned, 16, 2, nullptr},
    {E::kS32, "s32", "i32", C::kSigned, 32, 4, nullptr},
    {E::kS64, "s64", "i64", C::kSigned, 64, 8, nullptr},
    {E::kU2, "u2", "ui2", C::kUnsigned, 2, 1, nullptr},
    {E::kU4, "u4", "ui4", C::kUnsigned, 4, 1, nullptr},
    {E::kU8, "u8", "ui8", C::kUnsigned, 8, 1, nullptr},
    {E::kU16, "u16", "ui16", C::kUnsigned, 16, 2, nullptr},
    {E::kU32, "u32", "ui32", C::kUnsigned, 32, 4, nullptr},
    {E::kU64, "u64", "ui64", C::kUnsigned, 64, 8, nullptr},
    {E::kF4E2M1FN, "f4e2m1fn", "f4E2M1FN", C::kFloat, 4, 1, &kF4E2M1FN},
    {E::kF6E2M3FN, "f6e2m3fn", "f6E2M3FN", C::kFloat, 6, 1, &kF6E2M3FN},
    {E::kF6E3M2FN, "f6e3m2fn", "f6E3M2FN", C::kFloat, 6, 1, &kF6E3M2FN},
    {E::kF8E3M4, "f8e3m4", "f8E3M4", C::kFloat, 8, 1, &kF8E3M4},
    {E::kF8E4M3, "f8e4m3", "f8E4M3", C::kFloat, 8, 1, &kF8E4M3},
    {E::kF8E4M3FN, "f8e4m3fn", "f8E4M3FN", C::kFloat, 8, 1, &kF8E4M3FN},
    {E::kF8E4M3FNUZ, "f8e4m3fnuz", "f8E4M3FNUZ", C::kFloat, 8, 1, &kF8E4M3FNUZ},
    {E::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", "f8E4M3B11FNUZ", C::kFloat, 8, 1, &kF8E4M3B11FNUZ},
    {E::kF8E5M2, "f8e5m2", "f8E5M2", C::kFloat, 8, 1, &kF8E5M2},
    {E::kF8E5M2FNUZ, "f8e5m2fnuz", "f8E5M2FNUZ", C::kFloat, 8, 1, &kF8E5M2FNUZ},
    {E::kF8E8M0FNU, "f8e8m0fnu", "f8E8M0FNU", C::kFloat, 8, 1, &kF8E8M0FNU},
    {E::kBF16, "bf16", "bf16", C::kFloat, 16, 2, &kBF16},
    {E::kF16, "f16", "f16", C::kFloat, 16, 2, &kF16},
    {E::kF32, "f32", "f32", C::kFloat, 32, 4, nullptr},
    {E::kF64, "f64", "f64", C::kFloat, 64, 8, nullptr},
    {E::kC64, "c64", "complex<f32>", C::kComplex, 64, 8, nullptr},
    {E::kC128, "c128", "complex<f64>", C::kComplex, 128, 16, nullptr},
    {E::kToken, "token", "!stablehlo.token", C::kToken, 0, 0, nullptr},
    {E::kOpaque, "opaque", "opaque", C::kOpaque, 0, 0, nullptr},
};

// Largest finite magnitude and the bit pattern of the canonical NaN.
double MaxFinite(const FloatFormat& f) {
  int max_exp_field = (1 << f.exponent_bits) - 1;
  uint32_t max_mant = (1u << f.mantissa_bits) - 1;
  switch (f.nan) {
    case Nan::kIeee: max_exp_field -= 1; break;
    case Nan::kAllOnes: max_mant -= (f.mantissa_bits > 0 ? 1 : 0); break;
    case Nan::kAllOnesNoSign: max_exp_field -= 1; break;
    case Nan::kNegativeZero:
    case Nan::kNone: break;
  }
  double mant = f.mantissa_bits == 0 ? 1.0 : 1.0 + double(max_mant) / double(1u << f.mantissa_bits);
  return std::ldexp(mant, max_exp_field - f.bias);
}

uint32_t NanBits(const FloatFormat& f) {
  int sign_shift = f.exponent_bits + f.mantissa_bits;
  uint32_t exp_ones = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
  switch (f.nan) {
    case Nan::kIeee: return exp_ones | (1u << (f.mantissa_bits - 1));
    case Nan::kAllOnes: return exp_ones | ((1u << f.mantissa_bits) - 1);
    case Nan::kNegativeZero: return 1u << sign_shift;
    case Nan::kAllOnesNoSign: return 0xFF;
    case Nan::kNone: return 0;
  }
  return 0;
}

}  // namespace

const ElementTypeInfo& Info(ElementType type) {
  auto index = static_cast<size_t>(type);
  if (index >= sizeof(kInfos) / sizeof(kInfos[0])) return kInfos[0];
  return kInfos[index];
}

std::string_view HloName(ElementType type) { return Info(type).hlo_name; }
std::string_view MlirName(ElementType type) { return Info(type).mlir_name; }

std::optional<ElementType> ElementTypeFromHloName(std::string_view name) {
  for (const auto& info : kInfos) {
    if (info.type != E::kInvalid && info.hlo_name == name) return info.type;
  }
  return std::nullopt;
}

std::optional<ElementType> ElementTypeFromMlirName(std::string_view name) {
  for (const auto& info : kInfos) {
    if (info.type != E::kInvalid && info.mlir_name == name) return info.type;
  }
  return std::nullopt;
}

ElementType ComponentType(ElementType t) {
  if (t == E::kC64) return E::kF32;
  if (t == E::kC128) return E::kF64;
  return t;
}

ElementType ComplexOf(ElementType component) {
  if (component == E::kF32) return E::kC64;
  if (component == E::kF64) return E::kC128;
  return E::kInvalid;
}

uint32_t EncodeFloat(const FloatFormat& f, double value) {
  const int sign_shift = f.exponent_bits + f.mantissa_bits;
  const bool negative = std::signbit(value) && f.has_sign;
  const uint32_t sign = negative ? (1u << sign_shift) : 0;
  if (std::isnan(value)) {
    if (f.nan == Nan::kNone) return sign;  // no NaN: the formats define it as zero... keep sign
    uint32_t bits = NanBits(f);
    if (f.nan == Nan::kIeee || f.nan == Nan::kAllOnes) bits |= sign;
    return bits;
  }
  double magnitude = std::fabs(value);
  if (!f.has_sign && std::signbit(value) && magnitude != 0) return NanBits(f);
  const double max_finite = MaxFinite(f);
  const uint32_t exp_ones = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
  auto overflow = [&]() -> uint32_t {
    if (f.has_infinity) return sign | exp_ones;
    if (f.nan != Nan::kNone) {
      uint32_t bits = NanBits(f);
      if (f.nan == Nan::kAllOnes) bits |= sign;
      return bits;
    }
    return sign | EncodeFloat(f, max_finite);  // saturate
  };
  if (std::isinf(magnitude)) return overflow();
  if (magnitude == 0) {
    return f.nan == Nan::kNegativeZero ? 0 : sign;  // FNUZ has no -0
  }
  const int emin = 1 - f.bias;
  int e;
  std::frexp(magnitude, &e);
  int exponent = e - 1;  // magnitude = 1.x * 2^exponent
  if (f.mantissa_bits == 0 && !f.has_sign) {
    // f8E8M0FNU: powers of two only; round to the nearest power (ties up, on the log scale midpoint).
    double lower = std::ldexp(1.0, exponent);
    if (magnitude - lower >= lower * 0.5) exponent += 1;
    if (exponent < emin) return 0;
    if (exponent > (0xFE - f.bias)) return NanBits(f);
    return static_cast<uint32_t>(exponent + f.bias);
  }
  int quantum_exp = (exponent < emin ? emin : exponent) - f.mantissa_bits;
  double scaled = std::ldexp(magnitude, -quantum_exp);
  double rounded = std::nearbyint(scaled);  // default rounding mode: nearest, ties to even
  double result = std::ldexp(rounded, quantum_exp);
  if (result > max_finite) return overflow();
  if (result == 0) return f.nan == Nan::kNegativeZero ? 0 : sign;
  std::frexp(result, &e);
  exponent = e - 1;
  if (exponent < emin) {
    auto mant = static_cast<uint32_t>(std::ldexp(result, -(emin - f.mantissa_bits)));
    return sign | mant;
  }
  auto mant = static_cast<uint32_t>(std::ldexp(result, -(exponent - f.mantissa_bits))) -
              (1u << f.mantissa_bits);
  return sign | (static_cast<uint32_t>(exponent + f.bias) << f.mantissa_bits) | mant;
}

double DecodeFloat(const FloatFormat& f, uint32_t bits) {
  const int sign_shift = f.exponent_bits + f.mantissa_bits;
  const uint32_t mant_mask = (1u << f.mantissa_bits) - 1;
  const uint32_t exp_max = (1u << f.exponent_bits) - 1;
  const bool negative = f.has_sign && ((bits >> sign_shift) & 1);
  const uint32_t exp_field = (bits >> f.mantissa_bits) & exp_max;
  const uint32_t mant = bits & mant_mask;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.nan) {
    case Nan::kIeee:
      if (exp_field == exp_max) {
        if (mant != 0) return negative ? -nan : nan;
        return negative ? -INFINITY : INFINITY;
      }
      break;
    case Nan::kAllOnes:
      if (exp_field == exp_max && mant == mant_mask) return negative ? -nan : nan;
      break;
    case Nan::kNegativeZero:
      if (negative && exp_field == 0 && mant == 0) return nan;
      break;
    case Nan::kAllOnesNoSign:
      if ((bits & 0xFF) == 0xFF) return nan;
      break;
    case Nan::kNone: break;
  }
  double magnitude;
  if (f.mantissa_bits == 0 && !f.has_sign) {
    magnitude = std::ldexp(1.0, static_cast<int>(exp_field) - f.bias);
  } else if (exp_field == 0) {
    magnitude = std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mant | (1u << f.mantissa_bits)),
                           static_cast<int>(exp_field) - f.bias - f.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

}  // namespace anvil::hlo
