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

}  // namespace anvil::hlo
