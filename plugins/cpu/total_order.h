// The total order of floats (-NaN < -inf < ... < -0 < +0 < ... < +inf <
// +NaN, HLO's TOTALORDER compare) as integer keys, and integers' own order,
// for the kernels that rank elements (topk, sort).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "plugins/cpu/float_formats.h"

namespace anvil::cpu {

// A key whose integer order is the element's rank: a float's bits with the
// magnitude of negatives flipped (the IEEE total order), an integer's value.
template <typename T>
int64_t RankKey(T v) {
  if constexpr (std::is_same_v<T, float>) {
    int32_t b;
    std::memcpy(&b, &v, 4);
    return b < 0 ? int64_t{b ^ 0x7fffffff} : int64_t{b};
  } else if constexpr (std::is_same_v<T, double>) {
    int64_t b;
    std::memcpy(&b, &v, 8);
    return b < 0 ? (b ^ 0x7fffffffffffffff) : b;
  } else if constexpr (std::is_same_v<T, Bf16> || std::is_same_v<T, F16>) {
    const int16_t b = static_cast<int16_t>(v.bits);
    return b < 0 ? int64_t{static_cast<int16_t>(b ^ 0x7fff)} : int64_t{b};
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return static_cast<int64_t>(v ^ (uint64_t{1} << 63));  // u64's order, moved into int64's range
  } else {
    return static_cast<int64_t>(v);  // integers of up to 32 bits, s64, pred
  }
}

}  // namespace anvil::cpu
