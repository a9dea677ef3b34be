#include "plugins/gpu/element_types.h"

#include <cstdio>
#include <cstring>

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
    default: return "void";
  }
}

std::string StorageType(ElementType t) {
  switch (t) {
    case ElementType::kPred: case ElementType::kU2: case ElementType::kU4: case ElementType::kU8: return "uint8_t";
    case ElementType::kS2: case ElementType::kS4: case ElementType::kS8: return "int8_t";
    case ElementType::kS16: return "int16_t";
    case ElementType::kU16: case ElementType::kBF16: return "uint16_t";
    case ElementType::kF16: return "float16_t";
    default: return RegisterType(t);
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
    default: return s;
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
    default: return v;
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
    default: return "0";
  }
}

std::string ZeroExpr(ElementType t) { return RegisterType(t) + "(0)"; }

}  // namespace anvil::gpu
