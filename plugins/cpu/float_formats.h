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

inline float ToFloat(F16 v) {
  _Float16 h;
  std::memcpy(&h, &v.bits, 2);
  return static_cast<float>(h);
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

inline F16 ToF16(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  F16 out;
  std::memcpy(&out.bits, &h, 2);
  return out;
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
