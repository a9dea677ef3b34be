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

namespace {

// A window of the whole dimension along exactly one axis, padded n-1 below
// (`prefix`) or above, and one element wide everywhere else.
std::optional<WindowScan> WholeLineScan(const std::vector<WindowDim>& window, const std::vector<int64_t>& dims,
                                        const std::vector<int64_t>& out_dims, bool prefix) {
  if (dims != out_dims || window.size() != dims.size()) return std::nullopt;
  std::optional<size_t> axis;
  for (size_t d = 0; d < window.size(); ++d) {
    const WindowDim& w = window[d];
    if (w.stride != 1 || w.base_dilation != 1 || w.window_dilation != 1 || w.reversal) return std::nullopt;
    if (w.size == 1 && w.pad_low == 0 && w.pad_high == 0) continue;
    const int64_t below = prefix ? dims[d] - 1 : 0, above = prefix ? 0 : dims[d] - 1;
    if (axis || dims[d] < 2 || w.size != dims[d] || w.pad_low != below || w.pad_high != above) return std::nullopt;
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

}  // namespace

std::optional<WindowScan> PrefixScan(const std::vector<WindowDim>& window, const std::vector<int64_t>& dims,
                                     const std::vector<int64_t>& out_dims) {
  return WholeLineScan(window, dims, out_dims, /*prefix=*/true);
}

std::optional<WindowScan> SuffixScan(const std::vector<WindowDim>& window, const std::vector<int64_t>& dims,
                                     const std::vector<int64_t>& out_dims) {
  return WholeLineScan(window, dims, out_dims, /*prefix=*/false);
}

}  // namespace anvil::hlo
