#include "hlo/cost.h"

#include <set>
#include <vector>

#include "hlo/attributes.h"

namespace anvil::hlo {

double TermsPerElement(const Instruction& i) {
  if (!i.shape.IsArray()) return 1;
  double terms = 1;
  if (i.opcode == Opcode::kDot && !i.operands.empty()) {
    auto contracting = IntListAttribute(i, "lhs_contracting_dims");
    if (contracting.ok()) {
      for (int64_t d : *contracting) terms *= static_cast<double>(i.operands[0]->shape.dim(static_cast<int>(d)));
    }
  } else if (i.opcode == Opcode::kConvolution && i.operands.size() == 2) {
    // Each output element reads the kernel's window for one output feature.
    const Shape& kernel = i.operands[1]->shape;
    auto labels = ParseDimLabels(StringAttribute(i, "dim_labels"));
    if (labels.ok() && kernel.IsArray()) {
      const int64_t outputs = kernel.dim(static_cast<int>(labels->kernel_output_feature));
      if (outputs > 0) terms = static_cast<double>(kernel.ElementCount()) / static_cast<double>(outputs);
    }
  } else if (i.opcode == Opcode::kReduce && !i.operands.empty() && i.operands[0]->shape.IsArray()) {
    const Shape& result = i.shape.IsTuple() ? i.shape.tuple_elements()[0] : i.shape;
    const int64_t results = result.IsArray() ? result.ElementCount() : 1;
    if (results > 0) terms = static_cast<double>(i.operands[0]->shape.ElementCount()) / static_cast<double>(results);
  }
  return terms;
}

double MatrixFlops(const Module& module) {
  double flops = 0;
  std::set<const Computation*> seen;
  std::vector<const Computation*> pending{module.entry};
  while (!pending.empty()) {
    const Computation* c = pending.back();
    pending.pop_back();
    if (!c || !seen.insert(c).second) continue;
    for (const auto& i : c->instructions) {
      if (i->opcode == Opcode::kDot || i->opcode == Opcode::kConvolution) {
        flops += 2 * static_cast<double>(i->shape.ElementCount()) * TermsPerElement(*i);
      }
      for (const Computation* callee : i->called_computations) pending.push_back(callee);
    }
  }
  return flops;
}

}  // namespace anvil::hlo
