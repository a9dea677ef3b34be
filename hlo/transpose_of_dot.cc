#include "hlo/transpose_of_dot.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "hlo/attributes.h"

namespace anvil::hlo {
namespace {

// Whether `dot` multiplies two matrices into one: rank 2 everywhere, one
// contracting dimension a side, no batch dimensions.
bool IsMatrixProduct(const Instruction& dot) {
  if (dot.opcode != Opcode::kDot || dot.operands.size() != 2 || !dot.shape.IsArray() || dot.shape.rank() != 2) {
    return false;
  }
  for (const Instruction* o : dot.operands) {
    if (!o->shape.IsArray() || o->shape.rank() != 2) return false;
  }
  for (const char* key : {"lhs_batch_dims", "rhs_batch_dims"}) {
    if (const Attribute* a = dot.FindAttribute(key); a && a->value != "{}") return false;
  }
  if (dot.FindAttribute("sparsity")) return false;  // describes one operand: not swapped
  auto lhs = IntListAttribute(dot, "lhs_contracting_dims");
  auto rhs = IntListAttribute(dot, "rhs_contracting_dims");
  return lhs.ok() && rhs.ok() && lhs->size() == 1 && rhs->size() == 1;
}

bool SwapsMatrix(const Instruction& transpose) {
  if (transpose.opcode != Opcode::kTranspose || transpose.operands.size() != 1) return false;
  auto dims = IntListAttribute(transpose, "dimensions");
  return dims.ok() && *dims == std::vector<int64_t>{1, 0};
}

// "{a,b}" as "{b,a}": an attribute with one entry per operand.
std::string SwapPair(const std::string& value) {
  if (value.size() < 2 || value.front() != '{' || value.back() != '}') return value;
  const std::string inner = value.substr(1, value.size() - 2);
  const size_t comma = inner.find(',');
  if (comma == std::string::npos || inner.find(',', comma + 1) != std::string::npos) return value;
  return "{" + inner.substr(comma + 1) + "," + inner.substr(0, comma) + "}";
}

int FoldIn(Computation& computation) {
  std::unordered_map<const Instruction*, int> readers;
  for (const auto& i : computation.instructions) {
    for (const Instruction* o : i->operands) ++readers[o];
  }
  int folded = 0;
  for (auto& owned : computation.instructions) {
    Instruction& transpose = *owned;
    if (!SwapsMatrix(transpose)) continue;
    const Instruction& dot = *transpose.operands[0];
    if (!IsMatrixProduct(dot) || readers[&dot] != 1 || &dot == computation.root) continue;
    // The transpose becomes the swapped product, in place: its readers,
    // name and layout stay as they are.
    const std::string lhs = dot.FindAttribute("lhs_contracting_dims")->value;
    const std::string rhs = dot.FindAttribute("rhs_contracting_dims")->value;
    std::vector<Attribute> attributes;
    for (const Attribute& a : dot.attributes) {
      Attribute swapped = a;
      if (a.key == "lhs_contracting_dims") swapped.value = rhs;
      if (a.key == "rhs_contracting_dims") swapped.value = lhs;
      if (a.key == "operand_precision") swapped.value = SwapPair(a.value);
      if (a.key == "metadata") continue;  // the transpose's own stays
      attributes.push_back(std::move(swapped));
    }
    for (const Attribute& a : transpose.attributes) {
      if (a.key == "metadata") attributes.push_back(a);
    }
    transpose.opcode = Opcode::kDot;
    transpose.operands = {dot.operands[1], dot.operands[0]};
    transpose.attributes = std::move(attributes);
    ++folded;
  }
  return folded;
}

}  // namespace

int FoldTransposesOfDots(Module& module) {
  int folded = 0;
  for (auto& computation : module.computations) folded += FoldIn(*computation);
  return folded;
}

}  // namespace anvil::hlo
