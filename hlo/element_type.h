// Element types of the IR: the names XLA HLO text and StableHLO MLIR text use
// for them, their storage size and their numeric class.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace anvil::hlo {

enum class ElementType : uint8_t {
  kInvalid,
  kPred,
  kS2, kS4, kS8, kS16, kS32, kS64,
  kU2, kU4, kU8, kU16, kU32, kU64,
  kF4E2M1FN, kF6E2M3FN, kF6E3M2FN,
  kF8E3M4, kF8E4M3, kF8E4M3FN, kF8E4M3FNUZ, kF8E4M3B11FNUZ,
  kF8E5M2, kF8E5M2FNUZ, kF8E8M0FNU,
  kBF16, kF16, kF32, kF64,
  kC64, kC128,
  kToken,   // ordering token: no data
  kOpaque,  // XLA's opaque handle type: no data the IR can see
};

enum class TypeClass : uint8_t { kPred, kSigned, kUnsigned, kFloat, kComplex, kToken, kOpaque, kInvalid };

// How a floating-point format with fewer bits than f32 is laid out; used to
// convert literals and, later, by the evaluator.
struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_sign;      // false only for f8E8M0FNU
  bool has_infinity;  // IEEE-style all-ones exponent encodes infinities
  enum class Nan : uint8_t {
    kIeee,           // all-ones exponent with a non-zero mantissa
    kAllOnes,        // only S.1111.111 (the "FN" formats)
    kNegativeZero,   // only 1.0000.000 (the "FNUZ" formats: no -0)
    kNone,           // no NaN at all (f4/f6)
    kAllOnesNoSign,  // f8E8M0FNU: 0xFF
  } nan;
};

struct ElementTypeInfo {
  ElementType type;
  std::string_view hlo_name;   // "f32", "s8", "pred", "c64"
  std::string_view mlir_name;  // "f32", "i8", "i1", "complex<f32>"
  TypeClass type_class;
  int bit_width;   // the value's width: 4 for s4, 64 for c64 (two f32)
  int byte_size;   // storage of one element in a literal or buffer (s4 takes a byte)
  const FloatFormat* float_format;  // for floats narrower than f32; null otherwise
};

const ElementTypeInfo& Info(ElementType type);
std::string_view HloName(ElementType type);
std::string_view MlirName(ElementType type);
std::optional<ElementType> ElementTypeFromHloName(std::string_view name);
// Scalar MLIR names only ("complex<f32>" is handled by the type parser).
std::optional<ElementType> ElementTypeFromMlirName(std::string_view name);

inline bool IsFloat(ElementType t) { return Info(t).type_class == TypeClass::kFloat; }
inline bool IsComplex(ElementType t) { return Info(t).type_class == TypeClass::kComplex; }
inline bool IsSignedInt(ElementType t) { return Info(t).type_class == TypeClass::kSigned; }
inline bool IsUnsignedInt(ElementType t) { return Info(t).type_class == TypeClass::kUnsigned; }
inline bool IsInteger(ElementType t) { return IsSignedInt(t) || IsUnsignedInt(t); }
inline bool IsPred(ElementType t) { return t == ElementType::kPred; }
inline bool IsArrayType(ElementType t) {
  return t != ElementType::kToken && t != ElementType::kOpaque && t != ElementType::kInvalid;
}
// The real component type of a complex type (f32 for c64); t itself otherwise.
ElementType ComponentType(ElementType t);
// The complex type with this component (c64 for f32); kInvalid if none.
ElementType ComplexOf(ElementType component);

// Conversions between double and a narrow float format's bit pattern, with
// round-to-nearest-even. Out-of-range values become infinity where the format
// has one, NaN where it has NaN but no infinity, and saturate otherwise.
uint32_t EncodeFloat(const FloatFormat& format, double value);
double DecodeFloat(const FloatFormat& format, uint32_t bits);

}  // namespace anvil::hlo
