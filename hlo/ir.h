// The module IR both front doors (XLA HLO text, StableHLO MLIR text) produce:
// a module of computations, each a list of instructions in definition order.
//
// Attributes the IR does not interpret structurally (window, dimension
// numbers, metadata, sharding, backend_config...) are kept as normalised
// `key=value` text in XLA's own spelling, so every program prints back as it
// came in; `hlo/attributes.h` reads the ones the verifier and the passes need.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/literal.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"

namespace anvil::hlo {

class Computation;

struct Attribute {
  std::string key;
  std::string value;  // XLA spelling, whitespace normalised
  bool operator==(const Attribute&) const = default;
};

class Instruction {
 public:
  std::string name;
  Opcode opcode = Opcode::kParameter;
  // The spelling of an async wrapper (`custom-call-start`), else empty.
  std::string async_spelling;
  Shape shape;
  std::vector<Instruction*> operands;
  std::vector<Attribute> attributes;
  // Computations named by attributes (to_apply, calls, condition, body,
  // branch_computations...), in the order the attributes name them.
  std::vector<Computation*> called_computations;
  std::optional<Literal> literal;   // kConstant
  int64_t parameter_number = -1;    // kParameter
  // Where the instruction came from in the source text (0 when built in
  // code), so the verifier can say FILE:LINE:COL; not part of equality.
  int line = 0;
  int column = 0;

  const Attribute* FindAttribute(std::string_view key) const;
  std::string* MutableAttribute(std::string_view key);
  void SetAttribute(std::string key, std::string value);
  std::string_view OpcodeSpelling() const;
};

class Computation {
 public:
  std::string name;
  std::vector<std::unique_ptr<Instruction>> instructions;  // definition order
  std::vector<Instruction*> parameters;                    // by parameter number
  Instruction* root = nullptr;
  // `execution_thread="..."` and other trailing attributes, kept verbatim.
  std::vector<Attribute> attributes;

  Instruction* AddInstruction(std::unique_ptr<Instruction> instruction);
  Instruction* Find(std::string_view instruction_name) const;
  // The computation's signature, from its parameters and root.
  Shape ResultShape() const { return root ? root->shape : Shape(); }
};

class Module {
 public:
  std::string name;
  std::string source_file;  // for messages; not part of equality
  // Header attributes (`entry_computation_layout=...`, `is_scheduled=true`).
  std::vector<Attribute> attributes;
  std::vector<std::unique_ptr<Computation>> computations;  // callees first
  Computation* entry = nullptr;

  Computation* AddComputation(std::unique_ptr<Computation> computation);
  Computation* FindComputation(std::string_view computation_name) const;
};

// Structural equality: names, opcodes, shapes with layouts, operands by name,
// attributes, literals bit for bit, computations and entry. This is what
// "parse(print(m)) is the same module as m" means.
bool Equal(const Module& a, const Module& b, std::string* difference = nullptr);

// The attribute keys whose values name computations.
bool IsComputationAttribute(std::string_view key);

}  // namespace anvil::hlo
