// anvil_element_type <-> hlo::ElementType: the C enum uses the IR's values.
#pragma once

#include "anvil/anvil.h"
#include "hlo/element_type.h"
#include "hlo/shape.h"

namespace anvil::core {

#define ANVIL_SAME_VALUE(c, ir) static_assert(static_cast<int>(c) == static_cast<int>(hlo::ElementType::ir))
ANVIL_SAME_VALUE(ANVIL_PRED, kPred);
ANVIL_SAME_VALUE(ANVIL_S4, kS4);
ANVIL_SAME_VALUE(ANVIL_S8, kS8);
ANVIL_SAME_VALUE(ANVIL_F8E4M3FN, kF8E4M3FN);
ANVIL_SAME_VALUE(ANVIL_F8E8M0FNU, kF8E8M0FNU);
ANVIL_SAME_VALUE(ANVIL_S16, kS16);
ANVIL_SAME_VALUE(ANVIL_S32, kS32);
ANVIL_SAME_VALUE(ANVIL_S64, kS64);
ANVIL_SAME_VALUE(ANVIL_U8, kU8);
ANVIL_SAME_VALUE(ANVIL_U16, kU16);
ANVIL_SAME_VALUE(ANVIL_U32, kU32);
ANVIL_SAME_VALUE(ANVIL_U64, kU64);
ANVIL_SAME_VALUE(ANVIL_BF16, kBF16);
ANVIL_SAME_VALUE(ANVIL_F16, kF16);
ANVIL_SAME_VALUE(ANVIL_F32, kF32);
ANVIL_SAME_VALUE(ANVIL_F64, kF64);
ANVIL_SAME_VALUE(ANVIL_C64, kC64);
ANVIL_SAME_VALUE(ANVIL_C128, kC128);
#undef ANVIL_SAME_VALUE

// The IR type of a C type code, or kInvalid when the ABI does not name it.
inline hlo::ElementType FromAbi(int32_t t) {
  if (t <= static_cast<int32_t>(hlo::ElementType::kInvalid) || t > static_cast<int32_t>(hlo::ElementType::kC128)) {
    return hlo::ElementType::kInvalid;
  }
  return static_cast<hlo::ElementType>(t);
}

inline int32_t ToAbi(hlo::ElementType t) { return static_cast<int32_t>(t); }

// Only for shapes that passed hlo::CheckShapeSize (every shape core makes).
inline size_t ByteSize(const hlo::Shape& shape) { return static_cast<size_t>(shape.ByteSize()); }

}  // namespace anvil::core
