#include "hlo/patterns.h"

namespace anvil::hlo {

std::optional<Opcode> SingleOpReducer(const Computation& body) {
  if (body.parameters.size() != 2 || !body.root || body.root->operands.size() != 2) return std::nullopt;
  const Instruction* r = body.root;
  if (r->operands[0]->opcode != Opcode::kParameter || r->operands[1]->opcode != Opcode::kParameter ||
      r->operands[0] == r->operands[1]) {
    return std::nullopt;
  }
  switch (r->opcode) {
    case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kAnd: case Opcode::kOr:
      return r->opcode;
    default:
      return std::nullopt;
  }
}

std::optional<WindowScan> PrefixScan(const std::vector<WindowDim>& window, const std::vector<int64_t>& dims,
                                     const std::vector<int64_t>& out_dims) {
  if (dims != out_dims || window.size() != dims.size()) return std::nullopt;
  std::optional<size_t> axis;
  for (size_t d = 0; d < window.size(); ++d) {
    const WindowDim& w = window[d];
    if (w.stride != 1 || w.base_dilation != 1 || w.window_dilation != 1 || w.reversal) return std::nullopt;
    if (w.size == 1 && w.pad_low == 0 && w.pad_high == 0) continue;
    if (axis || dims[d] < 2 || w.size != dims[d] || w.pad_low != dims[d] - 1 || w.pad_high != 0) return std::nullopt;
    axis = d;
  }
  if (!axis) return std::nullopt;
  WindowScan s;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d < *axis) s.outer *= dims[d];
    if (d > *axis) s.inner *= dims[d];
  }
  s.length = dims[*axis];
  return s;
}

}  // namespace anvil::hlo
