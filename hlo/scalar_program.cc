#include "hlo/scalar_program.h"

#include <unordered_map>

namespace anvil::hlo {
namespace {

bool IsScalarArray(const Shape& s) { return s.IsArray() && s.dims().empty() && IsArrayType(s.element_type()); }

Status NotScalar(const Computation& c, const Instruction& i, const std::string& why) {
  return Unimplemented("computation " + c.name + " is not a scalar program: %" + i.name + " " + why);
}

}  // namespace

StatusOr<ScalarProgram> ScalarProgram::Compile(const Computation& computation) {
  ScalarProgram p;
  if (!computation.root) return Unimplemented("computation " + computation.name + " has no root");
  std::unordered_map<const Instruction*, int> register_of;
  p.parameter_count_ = static_cast<int>(computation.parameters.size());
  p.initial_.resize(computation.parameters.size());
  for (size_t k = 0; k < computation.parameters.size(); ++k) {
    const Instruction* param = computation.parameters[k];
    if (!param || !IsScalarArray(param->shape)) return NotScalar(computation, *param, "is not a scalar parameter");
    register_of[param] = static_cast<int>(k);
  }
  for (const auto& owned : computation.instructions) {
    const Instruction& i = *owned;
    if (i.opcode == Opcode::kParameter) continue;
    if (&i == computation.root && i.opcode == Opcode::kTuple) continue;
    if (!IsScalarArray(i.shape)) return NotScalar(computation, i, "is not a scalar");
    const int reg = static_cast<int>(p.initial_.size());
    if (i.opcode == Opcode::kConstant) {
      if (!i.literal || i.literal->elided() || i.literal->element_count() != 1) {
        return NotScalar(computation, i, "is a constant without its value");
      }
      p.initial_.push_back(LoadScalar(i.shape.element_type(), i.literal->data().data()));
      register_of[&i] = reg;
      continue;
    }
    ANVIL_ASSIGN_OR_RETURN(ScalarOp op, ScalarOp::Of(i));
    Step step{std::move(op), {}, reg};
    for (size_t k = 0; k < i.operands.size(); ++k) {
      auto found = register_of.find(i.operands[k]);
      if (found == register_of.end() || k >= step.operands.size()) {
        return NotScalar(computation, i, "reads what is not a scalar of the computation");
      }
      step.operands[k] = found->second;
    }
    p.steps_.push_back(std::move(step));
    p.initial_.emplace_back();
    register_of[&i] = reg;
  }
  const Instruction* root = computation.root;
  std::vector<const Instruction*> leaves;
  if (root->opcode == Opcode::kTuple) {
    leaves.assign(root->operands.begin(), root->operands.end());
  } else {
    leaves.push_back(root);
  }
  for (const Instruction* leaf : leaves) {
    auto found = register_of.find(leaf);
    if (found == register_of.end() || !IsScalarArray(leaf->shape)) {
      return NotScalar(computation, *root, "returns what is not a scalar");
    }
    p.results_.push_back(found->second);
    p.result_types_.push_back(leaf->shape.element_type());
  }
  return p;
}

}  // namespace anvil::hlo
