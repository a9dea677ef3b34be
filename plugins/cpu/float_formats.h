// The 16-bit float formats the CPU plugin computes in f32: loads widen
// exactly, stores round to nearest even (NaN stays NaN), as the reference
// evaluator rounds.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace anvil::cpu {

struct Bf16 {
  uint16_t bits;
};
struct F16 {
  uint16_t bits;
};

inline float ToFloat(Bf16 v) {
  const uint32_t bits = uint32_t{v.bits} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// f16 to f32 on the bits, branch free, so that loops of it vectorise: on
// baseline x86-64 a _Float16 cast is a libgcc call per element (an f16
// dot's packing spent most of its time there). A normal value's exponent
// is rebiased (15 to 127) with its mantissa shifted into f32's field; a
// subnormal one (and zero) is its 10-bit mantissa times 2^-24, exact in
// f32 and computed from normal f32 values only, so that the flush mode's
// DAZ (float_mode.h), which reads an f32 denormal operand as zero, leaves
// it alone, as the CPU's conversion instructions do (f16_conversions.h);
// infinities and NaNs keep their payload, NaNs made quiet, as a conversion
// makes them.
inline float ToFloat(F16 v) {
  const uint32_t sign = uint32_t{v.bits & 0x8000u} << 16;
  const uint32_t magnitude = v.bits & 0x7fffu;
  const uint32_t shifted = magnitude << 13;
  const float subnormal = static_cast<float>(magnitude & 0x3ffu) * 0x1p-24f;
  uint32_t small;
  std::memcpy(&small, &subnormal, 4);
  const uint32_t normal = shifted + ((127u - 15u) << 23);
  const uint32_t special = shifted | 0x7f800000u | (magnitude > 0x7c00u ? 0x00400000u : 0u);
  const uint32_t bits = (magnitude >= 0x7c00u ? special : magnitude >= 0x400u ? normal : small) | sign;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
inline float ToFloat(T v) {
  return static_cast<float>(v);
}

inline Bf16 ToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return Bf16{static_cast<uint16_t>((bits >> 16) | 0x40)};  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1);
  return Bf16{static_cast<uint16_t>(bits >> 16)};
}

// f32 to f16, to nearest even, on the bits and branch free (as ToFloat).
// Normal results: the exponent rebiased and the mantissa rounded by adding
// half an f16 ulp less one, plus the bit that makes ties go to even.
// Subnormal results (below 2^-14): adding 0.5 leaves the value rounded to
// a multiple of 2^-24, f16's subnormal step, in the low mantissa bits.
// 65520 and above round to infinity; a NaN keeps its top payload bits,
// made quiet.
inline F16 ToF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  const uint32_t normal = (magnitude - (uint32_t{127 - 15} << 23) + 0xfffu + ((magnitude >> 13) & 1u)) >> 13;
  float absolute;
  std::memcpy(&absolute, &magnitude, 4);
  const float aligned = absolute + 0.5f;
  uint32_t aligned_bits;
  std::memcpy(&aligned_bits, &aligned, 4);
  const uint32_t subnormal = aligned_bits - 0x3f000000u;  // the bits of 0.5
  const uint32_t special = magnitude > 0x7f800000u ? 0x7e00u | ((magnitude >> 13) & 0x3ffu) : 0x7c00u;
  const uint32_t rounded = magnitude >= 0x477ff000u ? special : magnitude < 0x38800000u ? subnormal : normal;
  return F16{static_cast<uint16_t>(rounded | sign)};
}

// f32 rounded to bf16 (Bf16) or f16 (F16), to nearest even.
template <typename N>
inline N RoundFromFloat(float f) {
  if constexpr (std::is_same_v<N, Bf16>) {
    return ToBf16(f);
  } else {
    return ToF16(f);
  }
}

// A binary op on bf16 or f16 computed in f32 and rounded once, as the
// evaluator computes bf16 and f16 arithmetic.
template <typename N, typename F>
auto ThroughFloat(F f) {
  return [f](N a, N b) { return RoundFromFloat<N>(f(ToFloat(a), ToFloat(b))); };
}

}  // namespace anvil::cpu

namespace anvil::cpu {

// Copies n elements of type T (a float format or f32) widened to f32.
template <typename T>
void WidenToFloat(const void* from, float* to, int64_t begin, int64_t end) {
  const T* x = static_cast<const T*>(from);
  for (int64_t k = begin; k < end; ++k) to[k] = ToFloat(x[k]);
}

// Copies n f32 values rounded to bf16 (Bf16) or f16 (F16).
template <typename T>
void NarrowFromFloat(const float* from, void* to, int64_t begin, int64_t end) {
  T* y = static_cast<T*>(to);
  for (int64_t k = begin; k < end; ++k) y[k] = RoundFromFloat<T>(from[k]);
}

}  // namespace anvil::cpu
