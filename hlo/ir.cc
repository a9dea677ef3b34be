#include "hlo/ir.h"

namespace anvil::hlo {

const Attribute* Instruction::FindAttribute(std::string_view key) const {
  for (const Attribute& a : attributes) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

std::string* Instruction::MutableAttribute(std::string_view key) {
  for (Attribute& a : attributes) {
    if (a.key == key) return &a.value;
  }
  return nullptr;
}

void Instruction::SetAttribute(std::string key, std::string value) {
  if (std::string* existing = MutableAttribute(key)) {
    *existing = std::move(value);
    return;
  }
  attributes.push_back({std::move(key), std::move(value)});
}

std::string_view Instruction::OpcodeSpelling() const {
  if (!async_spelling.empty()) return async_spelling;
  return OpcodeName(opcode);
}

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
  instructions.push_back(std::move(instruction));
  return instructions.back().get();
}

Instruction* Computation::Find(std::string_view instruction_name) const {
  for (const auto& i : instructions) {
    if (i->name == instruction_name) return i.get();
  }
  return nullptr;
}

Computation* Module::AddComputation(std::unique_ptr<Computation> computation) {
  computations.push_back(std::move(computation));
  return computations.back().get();
}

Computation* Module::FindComputation(std::string_view computation_name) const {
  for (const auto& c : computations) {
    if (c->name == computation_name) return c.get();
  }
  return nullptr;
}

bool IsComputationAttribute(std::string_view key) {
  return key == "to_apply" || key == "calls" || key == "condition" || key == "body" ||
         key == "true_computation" || key == "false_computation" || key == "branch_computations" ||
         key == "called_computations" || key == "select" || key == "scatter" ||
         key == "async_execution_thread_computations";
}

namespace {

bool Fail(std::string* difference, std::string what) {
  if (difference) *difference = std::move(what);
  return false;
}

bool EqualInstruction(const Instruction& a, const Instruction& b, std::string* difference) {
  const std::string where = "instruction " + a.name + ": ";
  if (a.name != b.name) return Fail(difference, where + "name differs from " + b.name);
  if (a.opcode != b.opcode || a.async_spelling != b.async_spelling) return Fail(difference, where + "opcode differs");
  if (!(a.shape == b.shape)) {
    return Fail(difference, where + "shape " + a.shape.ToString() + " vs " + b.shape.ToString());
  }
  if (a.operands.size() != b.operands.size()) return Fail(difference, where + "operand count differs");
  for (size_t i = 0; i < a.operands.size(); ++i) {
    if (a.operands[i]->name != b.operands[i]->name) return Fail(difference, where + "operand " + std::to_string(i));
  }
  if (a.attributes != b.attributes) return Fail(difference, where + "attributes differ");
  if (a.called_computations.size() != b.called_computations.size()) {
    return Fail(difference, where + "called computations differ");
  }
  for (size_t i = 0; i < a.called_computations.size(); ++i) {
    if (a.called_computations[i]->name != b.called_computations[i]->name) {
      return Fail(difference, where + "called computation " + std::to_string(i));
    }
  }
  if (a.literal.has_value() != b.literal.has_value() || (a.literal && !(*a.literal == *b.literal))) {
    return Fail(difference, where + "literal differs");
  }
  if (a.parameter_number != b.parameter_number) return Fail(difference, where + "parameter number differs");
  return true;
}

}  // namespace

bool Equal(const Module& a, const Module& b, std::string* difference) {
  if (a.name != b.name) return Fail(difference, "module name " + a.name + " vs " + b.name);
  if (a.attributes != b.attributes) return Fail(difference, "module attributes differ");
  if (a.computations.size() != b.computations.size()) return Fail(difference, "computation count differs");
  if ((a.entry == nullptr) != (b.entry == nullptr) || (a.entry && a.entry->name != b.entry->name)) {
    return Fail(difference, "entry computation differs");
  }
  for (size_t c = 0; c < a.computations.size(); ++c) {
    const Computation& ca = *a.computations[c];
    const Computation& cb = *b.computations[c];
    if (ca.name != cb.name) return Fail(difference, "computation " + ca.name + " vs " + cb.name);
    if (ca.attributes != cb.attributes) return Fail(difference, "computation " + ca.name + ": attributes differ");
    if (ca.instructions.size() != cb.instructions.size()) {
      return Fail(difference, "computation " + ca.name + ": instruction count differs");
    }
    if ((ca.root == nullptr) != (cb.root == nullptr) || (ca.root && ca.root->name != cb.root->name)) {
      return Fail(difference, "computation " + ca.name + ": root differs");
    }
    for (size_t i = 0; i < ca.instructions.size(); ++i) {
      if (!EqualInstruction(*ca.instructions[i], *cb.instructions[i], difference)) return false;
    }
  }
  return true;
}

}  // namespace anvil::hlo
