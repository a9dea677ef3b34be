// SPIR-V compute kernels for elementwise ops: one invocation per element,
// operands and result in storage buffers (bindings 0..n-1 the operands, n the
// result), the element count in a push constant. An operand of one element is
// read at index 0 (a scalar broadcast). Every module is checked with
// SPIRV-Tools' validator before it is returned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/element_type.h"
#include "hlo/opcode.h"
#include "hlo/status.h"

namespace anvil::vulkan {

inline constexpr uint32_t kWorkgroupSize = 64;

struct ElementwiseKernel {
  hlo::Opcode opcode = hlo::Opcode::kAdd;  // kCopy reads operand 0 unchanged
  hlo::ElementType type = hlo::ElementType::kF32;  // operands' and result's
  std::vector<bool> scalar_operands;               // read at index 0
};

// The SPIR-V words of `kernel`, validated for Vulkan 1.1; UNIMPLEMENTED when
// the op or the element type has no SPIR-V form here.
hlo::StatusOr<std::vector<uint32_t>> EmitElementwise(const ElementwiseKernel& kernel);

// Whether EmitElementwise takes this op on this element type.
bool HasElementwiseKernel(hlo::Opcode opcode, hlo::ElementType type, size_t operands);

// SPIRV-Tools' verdict on `words` for the Vulkan 1.1 environment: OK, or
// INTERNAL with the validator's message.
hlo::Status ValidateSpirv(const std::vector<uint32_t>& words);

}  // namespace anvil::vulkan
