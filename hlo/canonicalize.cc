#include "hlo/canonicalize.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "hlo/attributes.h"
#include "hlo/constant_folding.h"
#include "hlo/cse.h"
#include "hlo/rng_values.h"
#include "hlo/verifier.h"

namespace anvil::hlo {

bool HasSideEffect(const Instruction& i) {
  switch (i.opcode) {
    case Opcode::kCustomCall:
      return BoolAttribute(i, "custom_call_has_side_effect");
    case Opcode::kSend: case Opcode::kSendDone: case Opcode::kRecv: case Opcode::kRecvDone:
    case Opcode::kInfeed: case Opcode::kOutfeed: case Opcode::kRng: case Opcode::kRngGetAndUpdateState:
    case Opcode::kAllReduce: case Opcode::kAllGather: case Opcode::kAllToAll: case Opcode::kCollectivePermute:
    case Opcode::kAsyncStart: case Opcode::kAsyncDone: case Opcode::kAsyncUpdate:
      return true;
    default:
      return false;
  }
}

namespace {

// Names in `c` not yet taken, for inlined copies.
class NameSource {
 public:
  explicit NameSource(const Computation& c) {
    for (const auto& i : c.instructions) taken_.insert(i->name);
  }
  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int n = 1; taken_.count(name); ++n) name = base + ".inl" + std::to_string(n);
    taken_.insert(name);
    return name;
  }

 private:
  std::unordered_set<std::string> taken_;
};

// Inlines the calls of one computation; returns whether any was inlined.
bool InlineOnce(Computation& c) {
  NameSource names(c);
  std::vector<std::unique_ptr<Instruction>> rebuilt;
  std::unordered_map<Instruction*, Instruction*> replaced;  // call -> callee root copy
  std::vector<std::unique_ptr<Instruction>> dropped;
  bool changed = false;
  for (auto& owned : c.instructions) {
    Instruction* i = owned.get();
    for (Instruction*& o : i->operands) {
      auto r = replaced.find(o);
      if (r != replaced.end()) o = r->second;
    }
    // A fusion is a call of its fused computation (XLA's optimised HLO has
    // them); each plugin fuses what it can by its own rules.
    const bool call = i->opcode == Opcode::kCall || i->opcode == Opcode::kFusion;
    if (!call || i->called_computations.size() != 1) {
      rebuilt.push_back(std::move(owned));
      continue;
    }
    changed = true;
    const Computation& callee = *i->called_computations[0];
    std::unordered_map<const Instruction*, Instruction*> copies;
    for (const auto& ci : callee.instructions) {
      if (ci->opcode == Opcode::kParameter) {
        copies[ci.get()] = i->operands[ci->parameter_number];
        continue;
      }
      auto copy = std::make_unique<Instruction>(*ci);
      copy->name = names.Fresh(ci->name);
      // An rng's values are keyed by its name (hlo/rng_values); a renamed
      // copy keeps the name the evaluator, which runs the call, keys it by
      // (two calls of one computation draw the same values there).
      if (copy->opcode == Opcode::kRng && copy->name != ci->name && !copy->FindAttribute(kRngKeyAttribute)) {
        copy->SetAttribute(kRngKeyAttribute, ci->name);
      }
      for (Instruction*& o : copy->operands) o = copies.at(o);
      copies[ci.get()] = copy.get();
      rebuilt.push_back(std::move(copy));
    }
    replaced[i] = copies.at(callee.root);
    if (c.root == i) c.root = replaced[i];
    // The call itself is dropped once the walk is over (kept alive until then
    // so no new instruction can take its address, which `replaced` keys on).
    dropped.push_back(std::move(owned));
  }
  c.instructions = std::move(rebuilt);
  return changed;
}

}  // namespace

Status InlineCalls(Module& module) {
  // Callees are inlined into their callers repeatedly until no call remains;
  // recursion is impossible (the verifier rejects a computation calling itself
  // and the parsers reject recursive functions), but the bound keeps it so.
  for (int round = 0; round < 64; ++round) {
    bool changed = false;
    for (auto& c : module.computations) changed |= InlineOnce(*c);
    if (!changed) return OkStatus();
  }
  return Internal("calls nested more than 64 deep were not all inlined");
}

void RemoveDeadCode(Module& module) {
  for (auto& c : module.computations) {
    std::unordered_set<const Instruction*> live;
    std::vector<const Instruction*> work;
    auto mark = [&](const Instruction* i) {
      if (live.insert(i).second) work.push_back(i);
    };
    mark(c->root);
    for (const auto& i : c->instructions) {
      if (HasSideEffect(*i) || i->opcode == Opcode::kParameter) mark(i.get());
    }
    while (!work.empty()) {
      const Instruction* i = work.back();
      work.pop_back();
      for (const Instruction* o : i->operands) mark(o);
    }
    std::vector<std::unique_ptr<Instruction>> kept;
    for (auto& i : c->instructions) {
      if (live.count(i.get())) kept.push_back(std::move(i));
    }
    c->instructions = std::move(kept);
  }
  // Computations reachable from the entry.
  std::unordered_set<const Computation*> reachable;
  std::vector<const Computation*> work = {module.entry};
  while (!work.empty()) {
    const Computation* c = work.back();
    work.pop_back();
    if (!reachable.insert(c).second) continue;
    for (const auto& i : c->instructions) {
      for (const Computation* callee : i->called_computations) work.push_back(callee);
    }
  }
  std::vector<std::unique_ptr<Computation>> kept;
  for (auto& c : module.computations) {
    if (reachable.count(c.get())) kept.push_back(std::move(c));
  }
  module.computations = std::move(kept);
}

Status FlattenTupleParameters(Module& module) {
  Computation& entry = *module.entry;
  std::vector<Instruction*> leaves;              // the new parameters, in order
  std::vector<std::unique_ptr<Instruction>> front;  // leaves and the tuples rebuilt from them
  std::vector<std::pair<Instruction*, Instruction*>> replacements;
  std::unordered_set<std::string> names;
  for (const auto& i : entry.instructions) names.insert(i->name);
  auto fresh = [&](const std::string& base) {
    std::string name = base;
    for (int n = 1; names.count(name); ++n) name = base + "." + std::to_string(n);
    names.insert(name);
    return name;
  };
  // Builds the value of `shape` from new leaf parameters.
  std::function<Instruction*(const Shape&, const std::string&)> build = [&](const Shape& shape,
                                                                          const std::string& base) -> Instruction* {
    auto i = std::make_unique<Instruction>();
    if (!shape.IsTuple()) {
      i->opcode = Opcode::kParameter;
      i->shape = shape;
      i->name = fresh(base);
      leaves.push_back(i.get());
    } else {
      i->opcode = Opcode::kTuple;
      i->name = fresh(base + ".tuple");
      i->shape = shape;
      for (size_t k = 0; k < shape.tuple_elements().size(); ++k) {
        i->operands.push_back(build(shape.tuple_elements()[k], base + "." + std::to_string(k)));
      }
    }
    front.push_back(std::move(i));
    return front.back().get();
  };
  bool any_tuple = false;
  for (Instruction* p : entry.parameters) {
    if (!p->shape.IsTuple()) {
      leaves.push_back(p);
      continue;
    }
    any_tuple = true;
    replacements.emplace_back(p, build(p->shape, p->name));
  }
  if (!any_tuple) return OkStatus();
  for (auto [from, to] : replacements) ReplaceAllUses(entry, from, to);
  for (size_t k = 0; k < leaves.size(); ++k) leaves[k]->parameter_number = static_cast<int64_t>(k);
  // New instructions go first so every use comes after its definition; the
  // old tuple parameters go.
  std::vector<std::unique_ptr<Instruction>> rebuilt = std::move(front);
  for (auto& i : entry.instructions) {
    bool replaced = false;
    for (auto [from, to] : replacements) replaced |= from == i.get();
    if (!replaced) rebuilt.push_back(std::move(i));
  }
  entry.instructions = std::move(rebuilt);
  entry.parameters = leaves;
  return OkStatus();
}

int BroadcastLargeSplats(Module& module) {
  int turned = 0;
  auto large_splat = [](const Instruction& i) {
    return i.opcode == Opcode::kConstant && i.literal && i.shape.IsArray() &&
           i.literal->element_count() > kMaxSplatConstantElements && i.literal->IsSplat();
  };
  for (auto& c : module.computations) {
    // Found first (each check reads the constant's data), and the names
    // taken before any instruction moves into the rebuilt list.
    std::vector<char> splat(c->instructions.size());
    bool any = false;
    for (size_t k = 0; k < splat.size(); ++k) any |= (splat[k] = large_splat(*c->instructions[k])) != 0;
    if (!any) continue;
    NameSource names(*c);
    std::vector<std::unique_ptr<Instruction>> rebuilt;
    rebuilt.reserve(c->instructions.size());
    for (size_t k = 0; k < splat.size(); ++k) {
      std::unique_ptr<Instruction>& owned = c->instructions[k];
      Instruction& i = *owned;
      if (splat[k]) {
        auto scalar = std::make_unique<Instruction>();
        scalar->name = names.Fresh(i.name + ".splat");
        scalar->opcode = Opcode::kConstant;
        scalar->shape = Shape::Scalar(i.shape.element_type());
        scalar->literal.emplace(scalar->shape);
        const size_t bytes = static_cast<size_t>(Info(i.shape.element_type()).byte_size);
        std::copy_n(i.literal->data().begin(), bytes, scalar->literal->mutable_data().begin());
        scalar->line = i.line;
        scalar->column = i.column;
        // The constant becomes the broadcast in place, so its users, name
        // and metadata stay as they were.
        i.opcode = Opcode::kBroadcast;
        i.literal.reset();
        i.operands = {scalar.get()};
        i.attributes.insert(i.attributes.begin(), Attribute{"dimensions", "{}"});
        rebuilt.push_back(std::move(scalar));
        ++turned;
      }
      rebuilt.push_back(std::move(owned));
    }
    c->instructions = std::move(rebuilt);
  }
  return turned;
}

Status Canonicalize(Module& module) {
  ANVIL_RETURN_IF_ERROR(InlineCalls(module));
  ANVIL_RETURN_IF_ERROR(FlattenTupleParameters(module));
  // Folding may expose more folding (a gte of a folded tuple); a few rounds suffice.
  for (int round = 0; round < 8 && FoldConstants(module) > 0; ++round) {
  }
  BroadcastLargeSplats(module);
  EliminateCommonSubexpressions(module);
  RemoveDeadCode(module);
  // Inlined calls leave attributes naming their computations (`to_apply`) on
  // nothing: every remaining reference must still resolve.
  return Verify(module);
}

}  // namespace anvil::hlo
