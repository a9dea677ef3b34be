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

}  // namespace anvil::gpu
