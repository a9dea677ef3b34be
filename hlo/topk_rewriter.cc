#include "hlo/topk_rewriter.h"

#include <map>

#include "hlo/attributes.h"

namespace anvil::hlo {
namespace {

// The order a sort's comparator asks for when it is one compare of the two
// elements of its first operand: largest first (true) or smallest first
// (false); nullopt for anything else, or for a compare whose order is not
// the one topk ranks by (floats must be compared in their total order).
std::optional<bool> LargestFirst(const Computation& comparator, ElementType key_type) {
  const Instruction* root = comparator.root;
  if (!root || root->opcode != Opcode::kCompare || root->operands.size() != 2) return std::nullopt;
  const Instruction* a = root->operands[0];
  const Instruction* b = root->operands[1];
  if (a->opcode != Opcode::kParameter || b->opcode != Opcode::kParameter) return std::nullopt;
  if (!((a->parameter_number == 0 && b->parameter_number == 1) || (a->parameter_number == 1 && b->parameter_number == 0))) {
    return std::nullopt;
  }
  const std::string direction = StringAttribute(*root, "direction");
  if (direction != "GT" && direction != "LT") return std::nullopt;
  const std::string type = StringAttribute(*root, "type");
  switch (key_type) {
    case ElementType::kF32: case ElementType::kF64: case ElementType::kBF16: case ElementType::kF16:
      if (type != "TOTALORDER") return std::nullopt;  // NaNs: no total order
      break;
    case ElementType::kS8: case ElementType::kS16: case ElementType::kS32: case ElementType::kS64:
      if (!type.empty() && type != "SIGNED") return std::nullopt;
      break;
    case ElementType::kU8: case ElementType::kU16: case ElementType::kU32: case ElementType::kU64:
      if (!type.empty() && type != "UNSIGNED") return std::nullopt;
      break;
    default: return std::nullopt;  // pred, f8, complex, sub-byte: left to the sort
  }
  // compare(p0, p1) GT puts larger keys first; swapping the parameters or
  // the direction reverses it.
  return (direction == "GT") == (a->parameter_number == 0);
}

// k when `slice` takes the first k along `dim` and all of every other
// dimension of `operand`, with unit strides; nullopt otherwise.
std::optional<int64_t> FirstAlong(const Instruction& slice, const Shape& operand, int dim) {
  if (slice.opcode != Opcode::kSlice) return std::nullopt;
  const Attribute* a = slice.FindAttribute("slice");
  if (!a) return std::nullopt;
  auto dims = ParseSlice(a->value);
  if (!dims.ok() || static_cast<int>(dims->size()) != operand.rank()) return std::nullopt;
  for (int d = 0; d < operand.rank(); ++d) {
    const SliceDim& s = (*dims)[static_cast<size_t>(d)];
    if (s.start != 0 || s.stride != 1) return std::nullopt;
    if (d != dim && s.limit != operand.dim(d)) return std::nullopt;
  }
  return (*dims)[static_cast<size_t>(dim)].limit;
}

int RewriteIn(Computation& computation) {
  std::map<const Instruction*, std::vector<Instruction*>> users;
  for (const auto& i : computation.instructions) {
    for (const Instruction* o : i->operands) users[o].push_back(i.get());
  }
  std::vector<std::unique_ptr<Instruction>> out;
  int rewritten = 0;
  for (auto& owned : computation.instructions) {
    Instruction& sort = *owned;
    out.push_back(std::move(owned));
    if (sort.opcode != Opcode::kSort || sort.operands.size() != 2 || sort.called_computations.size() != 1 ||
        &sort == computation.root) {
      continue;
    }
    const Instruction& keys = *sort.operands[0];
    const Instruction& iota = *sort.operands[1];
    if (!keys.shape.IsArray() || keys.shape.rank() == 0) continue;
    const int last = keys.shape.rank() - 1;
    auto dims = IntListAttribute(sort, "dimensions");
    if (!dims.ok() || dims->size() != 1 || (*dims)[0] != last) continue;
    const ElementType index_type = iota.shape.element_type();
    if (iota.opcode != Opcode::kIota || !iota.shape.IsArray() || iota.shape.dims() != keys.shape.dims() ||
        (index_type != ElementType::kS32 && index_type != ElementType::kS64)) {
      continue;
    }
    auto iota_dim = IntAttribute(iota, "iota_dimension", std::nullopt);
    if (!iota_dim.ok() || *iota_dim != last) continue;
    const std::optional<bool> largest = LargestFirst(*sort.called_computations[0], keys.shape.element_type());
    if (!largest) continue;
    // Every reader of the sort takes one of its results, and every reader
    // of those slices off the same first k.
    std::vector<std::pair<Instruction*, int64_t>> slices;  // the slice, which result it reads
    std::optional<int64_t> k;
    bool only_top = users.count(&sort) > 0;
    for (Instruction* g : users[&sort]) {
      auto index = IntAttribute(*g, "index", std::nullopt);
      if (g->opcode != Opcode::kGetTupleElement || !index.ok() || g == computation.root || users[g].empty()) {
        only_top = false;
        break;
      }
      for (Instruction* s : users[g]) {
        const std::optional<int64_t> first = FirstAlong(*s, keys.shape, last);
        only_top = only_top && first && (!k || *k == *first);
        if (!only_top) break;
        k = first;
        slices.push_back({s, *index});
      }
      if (!only_top) break;
    }
    if (!only_top || !k) continue;
    auto topk = std::make_unique<Instruction>();
    topk->name = sort.name + ".topk";
    topk->opcode = Opcode::kTopK;
    std::vector<int64_t> top_dims = keys.shape.dims();
    top_dims[static_cast<size_t>(last)] = *k;
    topk->shape = Shape::Tuple({Shape(keys.shape.element_type(), top_dims), Shape(index_type, top_dims)});
    topk->operands = {sort.operands[0]};
    topk->attributes = {{"k", std::to_string(*k)}, {"largest", *largest ? "true" : "false"}};
    topk->line = sort.line;
    topk->column = sort.column;
    out.push_back(std::move(topk));
    Instruction* t = out.back().get();
    for (auto& [slice, index] : slices) {
      slice->opcode = Opcode::kGetTupleElement;
      slice->operands = {t};
      slice->attributes = {{"index", std::to_string(index)}};
    }
    ++rewritten;
  }
  computation.instructions = std::move(out);
  return rewritten;
}

}  // namespace

int RewriteSortsAsTopK(Module& module) {
  int rewritten = 0;
  for (auto& c : module.computations) rewritten += RewriteIn(*c);
  return rewritten;
}

}  // namespace anvil::hlo
