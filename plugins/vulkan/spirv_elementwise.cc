#include "plugins/vulkan/spirv_elementwise.h"

#include <spirv-tools/libspirv.hpp>

#include <initializer_list>
#include <string_view>

namespace anvil::vulkan {
namespace {

using hlo::ElementType;
using hlo::Opcode;

// SPIR-V opcodes and enumerants used here (SPIR-V 1.3 specification).
enum Op : uint32_t {
  kOpExtInstImport = 11, kOpExtInst = 12, kOpMemoryModel = 14, kOpEntryPoint = 15, kOpExecutionMode = 16,
  kOpCapability = 17, kOpTypeVoid = 19, kOpTypeBool = 20, kOpTypeInt = 21, kOpTypeFloat = 22,
  kOpTypeVector = 23, kOpTypeRuntimeArray = 29, kOpTypeStruct = 30, kOpTypePointer = 32,
  kOpTypeFunction = 33, kOpConstant = 43, kOpFunction = 54, kOpFunctionEnd = 56, kOpVariable = 59,
  kOpLoad = 61, kOpStore = 62, kOpAccessChain = 65, kOpDecorate = 71, kOpMemberDecorate = 72,
  kOpSNegate = 126, kOpFNegate = 127, kOpIAdd = 128, kOpFAdd = 129, kOpISub = 130, kOpFSub = 131,
  kOpIMul = 132, kOpFMul = 133, kOpFDiv = 136, kOpIsNan = 156, kOpLogicalOr = 166, kOpSelect = 169,
  kOpULessThan = 176, kOpBitwiseOr = 197, kOpBitwiseXor = 198, kOpBitwiseAnd = 199,
  kOpSelectionMerge = 247, kOpLabel = 248, kOpBranch = 249, kOpBranchConditional = 250, kOpReturn = 253,
};
// GLSL.std.450 extended instructions.
enum Glsl : uint32_t {
  kFAbs = 4, kSAbs = 5, kFloor = 8, kCeil = 9, kSin = 13, kCos = 14, kTanh = 21, kExp = 27, kLog = 28,
  kSqrt = 31, kInverseSqrt = 32, kFMin = 37, kUMin = 38, kSMin = 39, kFMax = 40, kUMax = 41, kSMax = 42,
};
constexpr uint32_t kCapabilityShader = 1, kExecutionModelGLCompute = 5, kExecutionModeLocalSize = 17;
constexpr uint32_t kDecorationBlock = 2, kDecorationArrayStride = 6, kDecorationBuiltIn = 11,
                   kDecorationBinding = 33, kDecorationDescriptorSet = 34, kDecorationOffset = 35;
constexpr uint32_t kBuiltInGlobalInvocationId = 28;
constexpr uint32_t kStorageInput = 1, kStoragePushConstant = 9, kStorageStorageBuffer = 12;

enum class Class { kFloat, kSigned, kUnsigned };

bool ClassOf(ElementType t, Class* out) {
  switch (t) {
    case ElementType::kF32: *out = Class::kFloat; return true;
    case ElementType::kS32: *out = Class::kSigned; return true;
    case ElementType::kU32: *out = Class::kUnsigned; return true;
    default: return false;
  }
}

// How one op is computed: a core instruction, a GLSL.std.450 one, or (for
// float max/min) the GLSL one with NaN propagated as HLO requires.
struct Recipe {
  uint32_t core = 0;
  uint32_t glsl = 0;
  bool propagate_nan = false;
};

bool RecipeFor(Opcode op, Class c, size_t operands, Recipe* r) {
  const bool f = c == Class::kFloat, s = c == Class::kSigned;
  if (operands == 1) {
    switch (op) {
      case Opcode::kCopy: return true;
      case Opcode::kNegate: r->core = f ? kOpFNegate : kOpSNegate; return c != Class::kUnsigned;
      case Opcode::kAbs:
        r->glsl = f ? kFAbs : kSAbs;
        return c != Class::kUnsigned;
      case Opcode::kExp: r->glsl = kExp; return f;
      case Opcode::kLog: r->glsl = kLog; return f;
      case Opcode::kSqrt: r->glsl = kSqrt; return f;
      case Opcode::kRsqrt: r->glsl = kInverseSqrt; return f;
      case Opcode::kTanh: r->glsl = kTanh; return f;
      case Opcode::kSin: r->glsl = kSin; return f;
      case Opcode::kCos: r->glsl = kCos; return f;
      case Opcode::kFloor: r->glsl = kFloor; return f;
      case Opcode::kCeil: r->glsl = kCeil; return f;
      default: return false;
    }
  }
  if (operands != 2) return false;
  switch (op) {
    case Opcode::kAdd: r->core = f ? kOpFAdd : kOpIAdd; return true;
    case Opcode::kSubtract: r->core = f ? kOpFSub : kOpISub; return true;
    case Opcode::kMultiply: r->core = f ? kOpFMul : kOpIMul; return true;
    case Opcode::kDivide: r->core = kOpFDiv; return f;  // integer x/0 has HLO-defined answers: not here yet
    case Opcode::kMaximum:
      r->glsl = f ? kFMax : (s ? kSMax : kUMax);
      r->propagate_nan = f;
      return true;
    case Opcode::kMinimum:
      r->glsl = f ? kFMin : (s ? kSMin : kUMin);
      r->propagate_nan = f;
      return true;
    case Opcode::kAnd: r->core = kOpBitwiseAnd; return !f;
    case Opcode::kOr: r->core = kOpBitwiseOr; return !f;
    case Opcode::kXor: r->core = kOpBitwiseXor; return !f;
    default: return false;
  }
}

// Appends instructions word by word and hands out result ids.
class Module {
 public:
  uint32_t Id() { return next_id_++; }
  void Emit(uint32_t op, std::initializer_list<uint32_t> operands) {
    words_.push_back(static_cast<uint32_t>((operands.size() + 1) << 16) | op);
    words_.insert(words_.end(), operands);
  }
  void EmitWithString(uint32_t op, std::initializer_list<uint32_t> before, std::string_view text,
                      std::initializer_list<uint32_t> after) {
    std::vector<uint32_t> packed((text.size() + 4) / 4, 0);  // NUL-terminated, zero-padded
    for (size_t k = 0; k < text.size(); ++k) packed[k / 4] |= static_cast<uint32_t>(static_cast<uint8_t>(text[k])) << (8 * (k % 4));
    words_.push_back(static_cast<uint32_t>((before.size() + packed.size() + after.size() + 1) << 16) | op);
    words_.insert(words_.end(), before);
    words_.insert(words_.end(), packed.begin(), packed.end());
    words_.insert(words_.end(), after);
  }
  std::vector<uint32_t> Finish() {
    // Header: magic, version 1.3, generator (0: unregistered), id bound, schema.
    std::vector<uint32_t> out = {0x07230203u, 0x00010300u, 0u, next_id_, 0u};
    out.insert(out.end(), words_.begin(), words_.end());
    return out;
  }

 private:
  uint32_t next_id_ = 1;
  std::vector<uint32_t> words_;
};

}  // namespace

bool HasElementwiseKernel(Opcode opcode, ElementType type, size_t operands) {
  Class c;
  Recipe r;
  return ClassOf(type, &c) && RecipeFor(opcode, c, operands, &r);
}

hlo::Status ValidateSpirv(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& position, const char* message) {
    messages += "word " + std::to_string(position.index) + ": " + message + "\n";
  });
  if (!tools.Validate(words)) return hlo::Internal("generated SPIR-V does not validate:\n" + messages);
  return hlo::OkStatus();
}

hlo::StatusOr<std::vector<uint32_t>> EmitElementwise(const ElementwiseKernel& kernel) {
  Class c;
  Recipe recipe;
  const size_t n = kernel.scalar_operands.size();
  if (!ClassOf(kernel.type, &c) || !RecipeFor(kernel.opcode, c, n, &recipe)) {
    return hlo::Unimplemented("the Vulkan plugin has no kernel for " + std::string(hlo::OpcodeName(kernel.opcode)) +
                              " on " + std::string(hlo::HloName(kernel.type)) + " yet");
  }
  Module m;
  const uint32_t glsl = m.Id(), main = m.Id(), gid = m.Id();
  const uint32_t t_void = m.Id(), t_fn = m.Id(), t_u32 = m.Id(), t_bool = m.Id(), t_v3 = m.Id();
  const uint32_t t_elem = c == Class::kFloat ? m.Id() : (c == Class::kSigned ? m.Id() : t_u32);
  const uint32_t t_rtarr = m.Id(), t_block = m.Id(), t_ptr_block = m.Id(), t_ptr_elem = m.Id();
  const uint32_t t_ptr_in_v3 = m.Id(), t_ptr_in_u32 = m.Id();
  const uint32_t t_pc = m.Id(), t_ptr_pc = m.Id(), t_ptr_pc_u32 = m.Id(), pc = m.Id();
  const uint32_t c0 = m.Id();
  std::vector<uint32_t> buffers(n + 1);
  for (auto& b : buffers) b = m.Id();

  m.Emit(kOpCapability, {kCapabilityShader});
  m.EmitWithString(kOpExtInstImport, {glsl}, "GLSL.std.450", {});
  m.Emit(kOpMemoryModel, {0 /* Logical */, 1 /* GLSL450 */});
  m.EmitWithString(kOpEntryPoint, {kExecutionModelGLCompute, main}, "main", {gid});
  m.Emit(kOpExecutionMode, {main, kExecutionModeLocalSize, kWorkgroupSize, 1, 1});

  m.Emit(kOpDecorate, {gid, kDecorationBuiltIn, kBuiltInGlobalInvocationId});
  m.Emit(kOpDecorate, {t_rtarr, kDecorationArrayStride, 4});
  m.Emit(kOpMemberDecorate, {t_block, 0, kDecorationOffset, 0});
  m.Emit(kOpDecorate, {t_block, kDecorationBlock});
  m.Emit(kOpMemberDecorate, {t_pc, 0, kDecorationOffset, 0});
  m.Emit(kOpDecorate, {t_pc, kDecorationBlock});
  for (size_t k = 0; k < buffers.size(); ++k) {
    m.Emit(kOpDecorate, {buffers[k], kDecorationDescriptorSet, 0});
    m.Emit(kOpDecorate, {buffers[k], kDecorationBinding, static_cast<uint32_t>(k)});
  }

  m.Emit(kOpTypeVoid, {t_void});
  m.Emit(kOpTypeFunction, {t_fn, t_void});
  m.Emit(kOpTypeInt, {t_u32, 32, 0});
  m.Emit(kOpTypeBool, {t_bool});
  m.Emit(kOpTypeVector, {t_v3, t_u32, 3});
  if (c == Class::kFloat) m.Emit(kOpTypeFloat, {t_elem, 32});
  if (c == Class::kSigned) m.Emit(kOpTypeInt, {t_elem, 32, 1});
  m.Emit(kOpTypeRuntimeArray, {t_rtarr, t_elem});
  m.Emit(kOpTypeStruct, {t_block, t_rtarr});
  m.Emit(kOpTypePointer, {t_ptr_block, kStorageStorageBuffer, t_block});
  m.Emit(kOpTypePointer, {t_ptr_elem, kStorageStorageBuffer, t_elem});
  m.Emit(kOpTypePointer, {t_ptr_in_v3, kStorageInput, t_v3});
  m.Emit(kOpTypePointer, {t_ptr_in_u32, kStorageInput, t_u32});
  m.Emit(kOpTypeStruct, {t_pc, t_u32});
  m.Emit(kOpTypePointer, {t_ptr_pc, kStoragePushConstant, t_pc});
  m.Emit(kOpTypePointer, {t_ptr_pc_u32, kStoragePushConstant, t_u32});
  m.Emit(kOpConstant, {t_u32, c0, 0});
  m.Emit(kOpVariable, {t_ptr_in_v3, gid, kStorageInput});
  m.Emit(kOpVariable, {t_ptr_pc, pc, kStoragePushConstant});
  for (uint32_t b : buffers) m.Emit(kOpVariable, {t_ptr_block, b, kStorageStorageBuffer});

  const uint32_t entry = m.Id(), body = m.Id(), end = m.Id();
  const uint32_t x_ptr = m.Id(), x = m.Id(), count_ptr = m.Id(), count = m.Id(), inside = m.Id();
  m.Emit(kOpFunction, {t_void, main, 0, t_fn});
  m.Emit(kOpLabel, {entry});
  m.Emit(kOpAccessChain, {t_ptr_in_u32, x_ptr, gid, c0});
  m.Emit(kOpLoad, {t_u32, x, x_ptr});
  m.Emit(kOpAccessChain, {t_ptr_pc_u32, count_ptr, pc, c0});
  m.Emit(kOpLoad, {t_u32, count, count_ptr});
  m.Emit(kOpULessThan, {t_bool, inside, x, count});
  m.Emit(kOpSelectionMerge, {end, 0});
  m.Emit(kOpBranchConditional, {inside, body, end});
  m.Emit(kOpLabel, {body});
  std::vector<uint32_t> values(n);
  for (size_t k = 0; k < n; ++k) {
    const uint32_t at = m.Id();
    values[k] = m.Id();
    m.Emit(kOpAccessChain, {t_ptr_elem, at, buffers[k], c0, kernel.scalar_operands[k] ? c0 : x});
    m.Emit(kOpLoad, {t_elem, values[k], at});
  }
  uint32_t result = values[0];
  if (recipe.core != 0) {
    result = m.Id();
    if (n == 1) {
      m.Emit(recipe.core, {t_elem, result, values[0]});
    } else {
      m.Emit(recipe.core, {t_elem, result, values[0], values[1]});
    }
  } else if (recipe.glsl != 0) {
    result = m.Id();
    if (n == 1) {
      m.Emit(kOpExtInst, {t_elem, result, glsl, recipe.glsl, values[0]});
    } else {
      m.Emit(kOpExtInst, {t_elem, result, glsl, recipe.glsl, values[0], values[1]});
    }
    if (recipe.propagate_nan) {
      // HLO's maximum and minimum are NaN when either operand is; GLSL's
      // FMax/FMin leave that undefined. a + b is the NaN to pass on.
      const uint32_t a_nan = m.Id(), b_nan = m.Id(), any_nan = m.Id(), sum = m.Id(), chosen = m.Id();
      m.Emit(kOpIsNan, {t_bool, a_nan, values[0]});
      m.Emit(kOpIsNan, {t_bool, b_nan, values[1]});
      m.Emit(kOpLogicalOr, {t_bool, any_nan, a_nan, b_nan});
      m.Emit(kOpFAdd, {t_elem, sum, values[0], values[1]});
      m.Emit(kOpSelect, {t_elem, chosen, any_nan, sum, result});
      result = chosen;
    }
  }
  const uint32_t out_at = m.Id();
  m.Emit(kOpAccessChain, {t_ptr_elem, out_at, buffers[n], c0, x});
  m.Emit(kOpStore, {out_at, result});
  m.Emit(kOpBranch, {end});
  m.Emit(kOpLabel, {end});
  m.Emit(kOpReturn, {});
  m.Emit(kOpFunctionEnd, {});
  std::vector<uint32_t> words = m.Finish();
  ANVIL_RETURN_IF_ERROR(ValidateSpirv(words));
  return words;
}

}  // namespace anvil::vulkan
