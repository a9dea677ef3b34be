// An elementwise f32 program read from the canonical HLO text core hands a
// plugin (docs/abi.md): parameters, constants, broadcasts of scalars, and
// the unary and binary arithmetic ops below, with an array or a tuple of
// arrays as the root. Anything else is refused when the program is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace elementwise {

// A failure with the anvil_status_code the plugin reports for it.
struct Error : std::runtime_error {
  Error(int32_t code, const std::string& message) : std::runtime_error(message), code(code) {}
  int32_t code;
};

enum class Op {
  kParameter, kConstant, kBroadcast,
  kAbs, kCopy, kExp, kLog, kLogistic, kNegate, kRsqrt, kSqrt, kTanh,
  kAdd, kDivide, kMaximum, kMinimum, kMultiply, kPower, kSubtract,
};

// One instruction; operands and the program's outputs are indices of
// earlier instructions.
struct Instruction {
  Op op;
  size_t elements = 1;
  std::vector<size_t> operands;
  size_t parameter = 0;         // kParameter
  std::vector<float> constant;  // kConstant: one value per element
};

class Program {
 public:
  // Throws Error: UNIMPLEMENTED naming what the plugin does not run,
  // INVALID_ARGUMENT for text it cannot read.
  static Program Parse(std::string_view text);

  // The element count of each parameter and output, in order.
  const std::vector<size_t>& parameter_elements() const { return parameter_elements_; }
  std::vector<size_t> output_elements() const;

  // Computes every output from `parameters` (one array per parameter, of
  // parameter_elements() floats) into `outputs` (likewise).
  void Run(const float* const* parameters, float* const* outputs) const;

 private:
  std::vector<Instruction> instructions_;
  std::vector<size_t> parameter_elements_;
  std::vector<size_t> outputs_;
};

}  // namespace elementwise
