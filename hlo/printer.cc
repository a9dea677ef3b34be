#include "hlo/printer.h"

namespace anvil::hlo {
namespace {

void AppendAttributes(std::string& out, const std::vector<Attribute>& attributes) {
  for (const Attribute& a : attributes) {
    out += ", ";
    out += a.key;
    out += '=';
    out += a.value;
  }
}

void AppendComputation(std::string& out, const Computation& computation, bool is_entry) {
  if (is_entry) out += "ENTRY ";
  out += '%';
  out += computation.name;
  out += " (";
  for (size_t i = 0; i < computation.parameters.size(); ++i) {
    if (i) out += ", ";
    out += computation.parameters[i]->name;
    out += ": ";
    out += computation.parameters[i]->shape.ToString();
  }
  out += ") -> ";
  out += computation.ResultShape().ToString();
  out += " {\n";
  for (const auto& instruction : computation.instructions) {
    out += "  ";
    if (instruction.get() == computation.root) out += "ROOT ";
    out += PrintInstruction(*instruction);
    out += '\n';
  }
  out += '}';
  AppendAttributes(out, computation.attributes);
  out += "\n\n";
}

}  // namespace

std::string PrintInstruction(const Instruction& instruction) {
  std::string out = "%" + instruction.name + " = " + instruction.shape.ToString() + " ";
  out += instruction.OpcodeSpelling();
  out += '(';
  if (instruction.opcode == Opcode::kConstant && instruction.literal) {
    // A splat prints as its one value, which the parser spreads over the
    // shape as XLA does: a large zero-filled constant stays one token. So
    // does an empty array of rank 2 or more, whose nested braces ({{}, {},
    // ...}) could outnumber the characters of the program many times over.
    const Literal& literal = *instruction.literal;
    if (literal.IsSplat()) {
      out += literal.ElementToString(0);
    } else if (!literal.elided() && literal.shape().IsArray() && literal.shape().rank() >= 2 &&
               literal.element_count() == 0) {
      out += Literal(Shape(literal.shape().element_type(), {})).ToString();
    } else {
      out += literal.ToString();
    }
  } else if (instruction.opcode == Opcode::kParameter) {
    out += std::to_string(instruction.parameter_number);
  } else {
    for (size_t i = 0; i < instruction.operands.size(); ++i) {
      if (i) out += ", ";
      out += '%';
      out += instruction.operands[i]->name;
    }
  }
  out += ')';
  AppendAttributes(out, instruction.attributes);
  return out;
}

std::string Print(const Module& module) {
  std::string out = "HloModule " + module.name;
  AppendAttributes(out, module.attributes);
  out += "\n\n";
  for (const auto& computation : module.computations) {
    AppendComputation(out, *computation, computation.get() == module.entry);
  }
  return out;
}

std::string PrintModules(const std::vector<std::unique_ptr<Module>>& modules) {
  std::string out;
  for (size_t k = 0; k < modules.size(); ++k) {
    if (k) out += "// -----\n";
    out += Print(*modules[k]);
  }
  return out;
}

}  // namespace anvil::hlo
