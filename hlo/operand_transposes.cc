#include "hlo/operand_transposes.h"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hlo/attributes.h"

namespace anvil::hlo {
namespace {

// The permutation of a transpose of a row-major array into a row-major
// result, or nothing.
std::optional<std::vector<int64_t>> Permutation(const Instruction& i) {
  if (i.opcode != Opcode::kTranspose || i.operands.size() != 1 || !i.shape.IsArray() ||
      !i.shape.HasDefaultLayout() || !i.operands[0]->shape.IsArray() || !i.operands[0]->shape.HasDefaultLayout()) {
    return std::nullopt;
  }
  auto dims = IntListAttribute(i, "dimensions");
  if (!dims.ok() || dims->size() != i.shape.dims().size()) return std::nullopt;
  // A permutation of 0..rank-1 (the verifier's rule, checked again here
  // since a wrong one would index out of range below).
  std::vector<bool> seen(dims->size(), false);
  for (int64_t d : *dims) {
    if (d < 0 || d >= static_cast<int64_t>(dims->size()) || seen[static_cast<size_t>(d)]) return std::nullopt;
    seen[static_cast<size_t>(d)] = true;
  }
  return *dims;
}

std::unordered_map<const Instruction*, int> CountReaders(const Computation& computation) {
  std::unordered_map<const Instruction*, int> readers;
  for (const auto& i : computation.instructions) {
    for (const Instruction* o : i->operands) ++readers[o];
  }
  ++readers[computation.root];  // the root's value leaves the computation
  return readers;
}

int MoveSlicesIn(Computation& computation) {
  std::unordered_map<const Instruction*, int> readers = CountReaders(computation);
  std::vector<std::unique_ptr<Instruction>> out;
  out.reserve(computation.instructions.size());
  int moved = 0;
  for (auto& owned : computation.instructions) {
    Instruction& slice = *owned;
    if (slice.opcode != Opcode::kSlice || slice.operands.size() != 1 || !slice.shape.HasDefaultLayout()) {
      out.push_back(std::move(owned));
      continue;
    }
    Instruction& transpose = *slice.operands[0];
    const std::optional<std::vector<int64_t>> permutation = Permutation(transpose);
    const Attribute* spelled = slice.FindAttribute("slice");
    auto dims = spelled ? ParseSlice(spelled->value) : StatusOr<std::vector<SliceDim>>(InvalidArgument("no slice"));
    if (!permutation || readers[&transpose] != 1 || !dims.ok() || dims->size() != permutation->size()) {
      out.push_back(std::move(owned));
      continue;
    }
    // Result dimension d of the transpose is dimension permutation[d] of
    // its operand: the slice of d applies there.
    const Instruction& x = *transpose.operands[0];
    std::vector<SliceDim> before(dims->size());
    std::vector<int64_t> kept(dims->size());
    for (size_t d = 0; d < dims->size(); ++d) {
      const size_t from = static_cast<size_t>((*permutation)[d]);
      before[from] = (*dims)[d];
      kept[from] = slice.shape.dims()[d];
    }
    auto early = std::make_unique<Instruction>();
    early->name = slice.name + ".before_transpose";
    early->opcode = Opcode::kSlice;
    early->shape = Shape(x.shape.element_type(), kept);
    early->operands = {transpose.operands[0]};
    early->attributes = {{"slice", FormatSlice(before)}};
    for (const Attribute& a : slice.attributes) {
      if (a.key == "metadata") early->attributes.push_back(a);
    }
    early->line = slice.line;
    early->column = slice.column;
    // The slice becomes the transpose of the early slice, in place: its
    // readers, name, shape and metadata stay.
    slice.opcode = Opcode::kTranspose;
    slice.operands = {early.get()};
    std::vector<Attribute> attributes = {{"dimensions", FormatIntList(*permutation)}};
    for (const Attribute& a : slice.attributes) {
      if (a.key == "metadata") attributes.push_back(a);
    }
    slice.attributes = std::move(attributes);
    out.push_back(std::move(early));
    out.push_back(std::move(owned));
    ++moved;
  }
  computation.instructions = std::move(out);
  return moved;
}

// Whether `permutation` swaps the last two of its dimensions and keeps the
// others in place.
bool SwapsLastTwo(const std::vector<int64_t>& permutation) {
  const size_t rank = permutation.size();
  if (rank < 2) return false;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (permutation[d] != static_cast<int64_t>(d)) return false;
  }
  return permutation[rank - 2] == static_cast<int64_t>(rank - 1) && permutation[rank - 1] == static_cast<int64_t>(rank - 2);
}

// Folds operand `side` (0: lhs, 1: rhs) of `dot` when it is such a
// transpose: its batch dimensions are its leading ones, in order, and it
// has one contracting dimension and one free one, so that the swap
// of the last two moves only the contracting dimension and the free one,
// and the result's dimensions keep their order.
bool FoldOperand(Instruction& dot, int side) {
  Instruction& transpose = *dot.operands[static_cast<size_t>(side)];
  const std::optional<std::vector<int64_t>> permutation = Permutation(transpose);
  if (!permutation || !SwapsLastTwo(*permutation)) return false;
  const std::string prefix = side == 0 ? "lhs" : "rhs";
  auto batch = IntListAttribute(dot, prefix + "_batch_dims", std::vector<int64_t>{});
  auto contracting = IntListAttribute(dot, prefix + "_contracting_dims", std::vector<int64_t>{});
  if (!batch.ok() || !contracting.ok() || contracting->size() != 1) return false;
  const int64_t rank = static_cast<int64_t>(permutation->size());
  if (static_cast<int64_t>(batch->size()) + 2 != rank) return false;
  for (size_t k = 0; k < batch->size(); ++k) {
    if ((*batch)[k] != static_cast<int64_t>(k)) return false;
  }
  const int64_t c = (*contracting)[0];
  if (c < rank - 2) return false;
  dot.operands[static_cast<size_t>(side)] = transpose.operands[0];
  dot.SetAttribute(prefix + "_contracting_dims", FormatIntList({(*permutation)[static_cast<size_t>(c)]}));
  return true;
}

}  // namespace

int MoveSlicesBeforeTransposes(Module& module) {
  int moved = 0;
  for (auto& computation : module.computations) moved += MoveSlicesIn(*computation);
  return moved;
}

int FoldTransposedDotOperands(Module& module) {
  int folded = 0;
  for (auto& computation : module.computations) {
    for (auto& i : computation->instructions) {
      if (i->opcode != Opcode::kDot || i->operands.size() != 2 || i->FindAttribute("sparsity")) continue;
      for (int side = 0; side < 2; ++side) folded += FoldOperand(*i, side) ? 1 : 0;
    }
  }
  return folded;
}

}  // namespace anvil::hlo
