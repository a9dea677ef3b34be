// How each HLO element type lives in a generated kernel: the type its
// values have in registers, the type of its elements in memory, and the
// conversions between them. Narrow types are widened in registers and
// brought back to their own range after every op (wrapped integers, bf16
// and f16 rounded to nearest even), so a fused chain rounds like the
// unfused ops.
#pragma once

#include <string>

#include "hlo/element_type.h"
#include "hlo/literal.h"

namespace anvil::gpu {

std::string RegisterType(hlo::ElementType type);  // "float", "int", "bool", "vec2"...
std::string StorageType(hlo::ElementType type);   // "float", "int8_t", "uint16_t"...
// A register value from a stored element, and back.
std::string LoadExpr(hlo::ElementType type, const std::string& stored);
std::string StoreExpr(hlo::ElementType type, const std::string& value);
// A register value brought back into the type's range after an op.
std::string Normalize(hlo::ElementType type, const std::string& value);
// A uint that each dialect's modules define to be 0 when the kernel runs
// but unknown to the compiler (GLSL: one less than the dispatch's workgroup
// count along y, always 1). Floating-point literals of +0 are spelled with
// it (LiteralExpr), so that no compiler folds x * 0 to 0.
inline constexpr const char* kRuntimeZero = "ANVIL_RUNTIME_ZERO";
// Element `index` of `literal` as a register-typed expression, bit exact.
std::string LiteralExpr(const hlo::Literal& literal, int64_t index);
// The register type's zero.
std::string ZeroExpr(hlo::ElementType type);

// The 8-bit and narrower float types but f8E8M0FNU (f8E4M3FN, f8E5M2,
// their FNUZ forms, f8E4M3, f8E3M4, f8E4M3B11FNUZ, f6E2M3FN, f6E3M2FN,
// f4E2M1FN): float in registers, one element a byte in memory, converted by
// the helpers below, named after the type's HLO name: NAME_decode(uint)
// gives the value of the bits, NAME_encode(float) the bits of a value
// rounded to nearest even as hlo::EncodeFloat rounds it (infinity, NaN or
// saturation past the largest finite value, as the format has them), and
// NAME_round(float) the value rounded. A float holds every value of these
// types exactly, and keeps more than twice their bits, so an op computed
// in float and rounded to them rounds as the evaluator's double does.
bool IsNarrowFloat(hlo::ElementType type);
// GLSL definitions of the helpers of each narrow float type that `text`
// calls (a module's library gets those its code uses).
std::string NarrowFloatHelpersUsedBy(const std::string& text);

}  // namespace anvil::gpu
