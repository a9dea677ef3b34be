#include "plugins/gpu/element_types.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace anvil::gpu {

using hlo::ElementType;

namespace {

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Bits of the integer width an element is wrapped to (0: the register's own).
int WrapBits(ElementType t) {
  switch (t) {
    case ElementType::kS2: case ElementType::kU2: return 2;
    case ElementType::kS4: case ElementType::kU4: return 4;
    case ElementType::kS8: case ElementType::kU8: return 8;
    case ElementType::kS16: case ElementType::kU16: return 16;
    default: return 0;
  }
}

}  // namespace

std::string RegisterType(ElementType t) {
  switch (t) {
    case ElementType::kPred: return "bool";
    case ElementType::kS2: case ElementType::kS4: case ElementType::kS8: case ElementType::kS16:
    case ElementType::kS32: return "int";
    case ElementType::kU2: case ElementType::kU4: case ElementType::kU8: case ElementType::kU16:
    case ElementType::kU32: return "uint";
    case ElementType::kS64: return "int64_t";
    case ElementType::kU64: return "uint64_t";
    case ElementType::kF16: case ElementType::kBF16: case ElementType::kF32: return "float";
    case ElementType::kF64: return "double";
    case ElementType::kC64: return "vec2";
    case ElementType::kC128: return "dvec2";
    default: return IsNarrowFloat(t) ? "float" : "void";
  }
}

std::string StorageType(ElementType t) {
  switch (t) {
    case ElementType::kPred: case ElementType::kU2: case ElementType::kU4: case ElementType::kU8: return "uint8_t";
    case ElementType::kS2: case ElementType::kS4: case ElementType::kS8: return "int8_t";
    case ElementType::kS16: return "int16_t";
    case ElementType::kU16: case ElementType::kBF16: return "uint16_t";
    case ElementType::kF16: return "float16_t";
    default: return IsNarrowFloat(t) ? "uint8_t" : RegisterType(t);
  }
}

std::string LoadExpr(ElementType t, const std::string& s) {
  switch (t) {
    case ElementType::kPred: return "(" + s + " != uint8_t(0))";
    // A sub-byte element's byte may hold only its low bits: PJRT's unpacked
    // host buffers (ml_dtypes' int4 keeps -3 as 0x0D) arrive byte for byte.
    // Sign-extend (or mask) from the element's own width, as the evaluator's
    // LoadScalar does, so registers always hold the normalized value.
    case ElementType::kS2: case ElementType::kS4: case ElementType::kU2: case ElementType::kU4:
      return Normalize(t, std::string(hlo::IsSignedInt(t) ? "int(" : "uint(") + s + ")");
    case ElementType::kS8: case ElementType::kS16: return "int(" + s + ")";
    case ElementType::kU8: case ElementType::kU16: return "uint(" + s + ")";
    case ElementType::kBF16: return "uintBitsToFloat(uint(" + s + ") << 16)";
    case ElementType::kF16: return "float(" + s + ")";
    default: return IsNarrowFloat(t) ? std::string(hlo::HloName(t)) + "_decode(uint(" + s + "))" : s;
  }
}

std::string StoreExpr(ElementType t, const std::string& v) {
  switch (t) {
    case ElementType::kPred: return "uint8_t(" + v + " ? 1u : 0u)";
    case ElementType::kS2: case ElementType::kS4: case ElementType::kS8: case ElementType::kS16:
    case ElementType::kU2: case ElementType::kU4: case ElementType::kU8: case ElementType::kU16:
      return StorageType(t) + "(" + v + ")";
    case ElementType::kBF16: return "uint16_t(floatBitsToUint(" + v + ") >> 16)";
    case ElementType::kF16: return "float16_t(" + v + ")";
    default: return IsNarrowFloat(t) ? "uint8_t(" + std::string(hlo::HloName(t)) + "_encode(" + v + "))" : v;
  }
}

std::string Normalize(ElementType t, const std::string& v) {
  const int bits = WrapBits(t);
  if (bits) {
    if (hlo::IsSignedInt(t)) return "((" + v + ") << " + std::to_string(32 - bits) + " >> " + std::to_string(32 - bits) + ")";
    return "((" + v + ") & " + std::to_string((1u << bits) - 1) + "u)";
  }
  if (t == ElementType::kBF16) return "bf16_round(" + v + ")";
  if (t == ElementType::kF16) return "f16_round(" + v + ")";
  if (IsNarrowFloat(t)) return std::string(hlo::HloName(t)) + "_round(" + v + ")";
  return v;
}

namespace {

// The bits of a floating-point literal, a uint expression. A +0 is
// kRuntimeZero, which is 0 only when the kernel runs: lavapipe's LLVM
// back end (gallivm) returns 0 for a product with, and a quotient of, a
// compile-time 0 whatever the other operand, ignoring `precise`, so x * 0
// was 0 for an infinite or NaN x, where IEEE (and HLO) give NaN; x + 0 was
// x, -0 for x = -0 where the sum is +0.
std::string FloatBits(uint64_t bits) { return bits == 0 ? std::string(kRuntimeZero) : Hex(bits) + "u"; }

// A double's: only a whole +0 has a runtime half (1.0's low half is 0 too).
std::string DoubleExpr(uint64_t bits) {
  const std::string low = bits == 0 ? std::string(kRuntimeZero) : Hex(bits & 0xFFFFFFFFu) + "u";
  return "packDouble2x32(uvec2(" + low + ", " + Hex(bits >> 32) + "u))";
}

}  // namespace

std::string LiteralExpr(const hlo::Literal& literal, int64_t k) {
  const ElementType t = literal.shape().element_type();
  const int bytes = hlo::Info(t).byte_size;
  uint64_t bits = 0;
  std::memcpy(&bits, literal.data().data() + k * bytes, std::min(bytes, 8));
  switch (t) {
    case ElementType::kPred: return bits & 1 ? "true" : "false";
    case ElementType::kS2: case ElementType::kS4: case ElementType::kS8:
      return "int(" + std::to_string(static_cast<int8_t>(bits)) + ")";
    case ElementType::kS16: return "int(" + std::to_string(static_cast<int16_t>(bits)) + ")";
    case ElementType::kS32: return "int(" + Hex(static_cast<uint32_t>(bits)) + "u)";
    case ElementType::kU2: case ElementType::kU4: case ElementType::kU8: case ElementType::kU16:
    case ElementType::kU32: return Hex(bits) + "u";
    case ElementType::kS64: return "int64_t(" + Hex(bits) + "ul)";
    case ElementType::kU64: return Hex(bits) + "ul";
    case ElementType::kF16: return "float(uint16BitsToFloat16(uint16_t(" + FloatBits(bits) + ")))";
    case ElementType::kBF16: return "uintBitsToFloat(" + FloatBits(bits << 16) + ")";
    case ElementType::kF32: return "uintBitsToFloat(" + FloatBits(bits) + ")";
    case ElementType::kF64: return DoubleExpr(bits);
    case ElementType::kC64: {
      uint64_t v;
      std::memcpy(&v, literal.data().data() + k * 8, 8);
      return "vec2(uintBitsToFloat(" + FloatBits(v & 0xFFFFFFFFu) + "), uintBitsToFloat(" + FloatBits(v >> 32) + "))";
    }
    case ElementType::kC128: {
      uint64_t re, im;
      std::memcpy(&re, literal.data().data() + k * 16, 8);
      std::memcpy(&im, literal.data().data() + k * 16 + 8, 8);
      return "dvec2(" + DoubleExpr(re) + ", " + DoubleExpr(im) + ")";
    }
    default: {
      if (!IsNarrowFloat(t)) return "0";
      // The value, which a float holds exactly.
      const float value = static_cast<float>(hlo::DecodeFloat(*hlo::Info(t).float_format, static_cast<uint32_t>(bits)));
      uint32_t f;
      std::memcpy(&f, &value, sizeof f);
      return "uintBitsToFloat(" + FloatBits(f) + ")";
    }
  }
}

std::string ZeroExpr(ElementType t) { return RegisterType(t) + "(0)"; }

bool IsNarrowFloat(ElementType t) {
  return hlo::Info(t).float_format != nullptr && t != ElementType::kBF16 && t != ElementType::kF16 &&
         t != ElementType::kF8E8M0FNU;
}

namespace {

// A float constant, exactly: its bits.
std::string FloatConstant(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return "uintBitsToFloat(" + Hex(bits) + "u)";
}

// The helpers of narrow float type t (element_types.h), from its format:
// the special encodings (NaN, overflow, -0) are hlo::EncodeFloat's own
// answers, so each format's rules come from one place.
std::string NarrowFloatHelpers(ElementType t) {
  const hlo::FloatFormat& f = *hlo::Info(t).float_format;
  const std::string name(hlo::HloName(t));
  const int m = f.mantissa_bits, emin = 1 - f.bias;
  const uint32_t width = static_cast<uint32_t>(1 + f.exponent_bits + f.mantissa_bits);
  const uint32_t exp_mask = (1u << f.exponent_bits) - 1, mant_mask = (1u << m) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto code = [&](double v) { return Hex(hlo::EncodeFloat(f, v)) + "u"; };
  double max_finite = 0;
  for (uint32_t bits = 0; bits < (1u << (width - 1)); ++bits) {
    const double v = hlo::DecodeFloat(f, bits);
    if (std::isfinite(v)) max_finite = std::max(max_finite, v);
  }
  const std::string M = std::to_string(m), EMIN = std::to_string(emin), BIAS = std::to_string(f.bias);
  std::string d = "float " + name + "_decode(uint b) {\n";
  d += "  b &= " + Hex((1u << width) - 1) + "u;\n";
  d += "  uint e = (b >> " + M + "u) & " + Hex(exp_mask) + "u, mant = b & " + Hex(mant_mask) + "u;\n";
  d += "  bool neg = (b >> " + std::to_string(width - 1) + "u) != 0u;\n";
  using Nan = hlo::FloatFormat::Nan;
  const std::string quiet = "uintBitsToFloat(0x7fc00000u)", minus_quiet = "uintBitsToFloat(0xffc00000u)";
  switch (f.nan) {
    case Nan::kIeee:
      d += "  if (e == " + Hex(exp_mask) + "u) return mant != 0u ? (neg ? " + minus_quiet + " : " + quiet +
           ") : (neg ? uintBitsToFloat(0xff800000u) : uintBitsToFloat(0x7f800000u));\n";
      break;
    case Nan::kAllOnes:
      d += "  if (e == " + Hex(exp_mask) + "u && mant == " + Hex(mant_mask) + "u) return neg ? " + minus_quiet + " : " +
           quiet + ";\n";
      break;
    case Nan::kNegativeZero: d += "  if (neg && e == 0u && mant == 0u) return " + quiet + ";\n"; break;
    default: break;
  }
  d += "  float mag = e == 0u ? ldexp(float(mant), " + std::to_string(emin - m) + ") : ldexp(float(mant | " +
       Hex(1u << m) + "u), int(e) - " + std::to_string(f.bias + m) + ");\n";
  d += "  return neg ? -mag : mag;\n}\n";
  // Encoding: EncodeFloat's steps on a float. A magnitude at most half the
  // smallest subnormal rounds to zero (a tie, to the even 0), which also
  // keeps frexp and ldexp on normal numbers (lavapipe needs them).
  std::string e = "uint " + name + "_encode(float x) {\n";
  e += "  bool neg = (floatBitsToUint(x) >> 31) != 0u;\n";
  e += "  if (isnan(x)) return neg ? " + code(-nan) + " : " + code(nan) + ";\n";
  e += "  float m = abs(x);\n";
  e += "  if (isinf(m)) return neg ? " + code(-inf) + " : " + code(inf) + ";\n";
  e += "  if (m <= " + FloatConstant(std::ldexp(1.0f, emin - m - 1)) + ") return neg ? " + code(-0.0) + " : 0u;\n";
  e += "  int ex;\n  frexp(m, ex);\n  int exponent = ex - 1;\n";
  e += "  int quantum = max(exponent, " + EMIN + ") - " + M + ";\n";
  e += "  float result = ldexp(roundEven(ldexp(m, -quantum)), quantum);\n";
  e += "  if (result > " + FloatConstant(static_cast<float>(max_finite)) + ") return neg ? " + code(-inf) + " : " + code(inf) + ";\n";
  e += "  frexp(result, ex);\n  exponent = ex - 1;\n";
  e += "  uint bits = exponent < " + EMIN + " ? uint(ldexp(result, " + std::to_string(m - emin) + "))\n";
  e += "                : (uint(exponent + " + BIAS + ") << " + M + "u) | (uint(ldexp(result, " + M +
       " - exponent)) - " + Hex(1u << m) + "u);\n";
  e += "  return (neg ? " + Hex(1u << (width - 1)) + "u : 0u) | bits;\n}\n";
  const std::string r = "float " + name + "_round(float x) { return " + name + "_decode(" + name + "_encode(x)); }\n";
  return d + e + r;
}

}  // namespace

std::string NarrowFloatHelpersUsedBy(const std::string& text) {
  std::string helpers;
  for (int k = 0; k < static_cast<int>(ElementType::kF64); ++k) {
    const auto t = static_cast<ElementType>(k);
    if (IsNarrowFloat(t) && text.find(std::string(hlo::HloName(t)) + "_") != std::string::npos) {
      helpers += NarrowFloatHelpers(t);
    }
  }
  return helpers;
}

}  // namespace anvil::gpu
