// A computation on scalars (a reduce, reduce-window, scatter or map body,
// a sort comparator) compiled once into a list of hlo/scalar_ops steps over
// numbered registers, so that a kernel can apply it to every element without
// allocating, parsing or evaluating instructions: what the reference
// evaluator computes for the body, bit for bit, at a few nanoseconds a
// step.
#pragma once

#include <array>
#include <vector>

#include "hlo/ir.h"
#include "hlo/scalar_ops.h"
#include "hlo/status.h"

namespace anvil::hlo {

class ScalarProgram {
 public:
  // Unimplemented unless every parameter is a rank-0 array, the root is a
  // rank-0 array or a tuple of them, and every other instruction is a
  // rank-0 constant or an op hlo::ScalarOp computes.
  static StatusOr<ScalarProgram> Compile(const Computation& computation);

  int parameter_count() const { return parameter_count_; }
  int result_count() const { return static_cast<int>(results_.size()); }
  ElementType result_type(int k) const { return result_types_[static_cast<size_t>(k)]; }
  int register_count() const { return static_cast<int>(initial_.size()); }

  // Registers for one thread: the constants in place. Run reuses them.
  std::vector<Scalar> NewRegisters() const { return initial_; }
  // Runs on `parameters` (parameter_count(), canonical in their types),
  // writing result_count() results.
  void Run(const Scalar* parameters, std::vector<Scalar>& registers, Scalar* results) const {
    Scalar* r = registers.data();
    for (int p = 0; p < parameter_count_; ++p) r[p] = parameters[p];
    for (const Step& s : steps_) {
      const Scalar operands[3] = {r[s.operands[0]], r[s.operands[1]], r[s.operands[2]]};
      r[s.result] = s.op.Apply(operands);
    }
    for (size_t k = 0; k < results_.size(); ++k) results[k] = r[results_[k]];
  }

 private:
  struct Step {
    ScalarOp op;
    std::array<int, 3> operands{};  // registers; unused ones 0
    int result = 0;
  };
  int parameter_count_ = 0;
  std::vector<Step> steps_;
  std::vector<int> results_;  // registers
  std::vector<ElementType> result_types_;
  std::vector<Scalar> initial_;  // parameters' registers first, then one per instruction
};

}  // namespace anvil::hlo
