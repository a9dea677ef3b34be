// Index values read at run time (dynamic-slice starts, scatter indices):
// integers of any width and signedness, as int64.
#pragma once

#include <cstdint>
#include <limits>

#include "hlo/element_type.h"

namespace anvil::cpu {

inline bool IsIndexType(hlo::ElementType t) {
  using hlo::ElementType;
  return t == ElementType::kS8 || t == ElementType::kS16 || t == ElementType::kS32 || t == ElementType::kS64 ||
         t == ElementType::kU8 || t == ElementType::kU16 || t == ElementType::kU32 || t == ElementType::kU64;
}

// Element `k` of an integer array of type `t`; u64 values past int64's range
// read as its maximum (an index that large is out of bounds either way).
inline int64_t ReadIndex(const void* p, hlo::ElementType t, int64_t k = 0) {
  using hlo::ElementType;
  switch (t) {
    case ElementType::kS8: return static_cast<const int8_t*>(p)[k];
    case ElementType::kS16: return static_cast<const int16_t*>(p)[k];
    case ElementType::kS32: return static_cast<const int32_t*>(p)[k];
    case ElementType::kS64: return static_cast<const int64_t*>(p)[k];
    case ElementType::kU8: return static_cast<const uint8_t*>(p)[k];
    case ElementType::kU16: return static_cast<const uint16_t*>(p)[k];
    case ElementType::kU32: return static_cast<const uint32_t*>(p)[k];
    case ElementType::kU64: {
      const uint64_t v = static_cast<const uint64_t*>(p)[k];
      return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                            : static_cast<int64_t>(v);
    }
    default: return 0;
  }
}

}  // namespace anvil::cpu
