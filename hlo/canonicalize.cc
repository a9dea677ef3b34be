#include "hlo/canonicalize.h"

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "hlo/attributes.h"
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
  bool changed = false;
  for (auto& owned : c.instructions) {
    Instruction* i = owned.get();
    for (Instruction*& o : i->operands) {
      auto r = replaced.find(o);
      if (r != replaced.end()) o = r->second;
    }
    if (i->opcode != Opcode::kCall || i->called_computations.size() != 1) {
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
      for (Instruction*& o : copy->operands) o = copies.at(o);
      copies[ci.get()] = copy.get();
      rebuilt.push_back(std::move(copy));
    }
    replaced[i] = copies.at(callee.root);
    if (c.root == i) c.root = replaced[i];
    // The call itself is dropped; later uses were redirected above (only its
    // address is looked up from here on).
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

Status Canonicalize(Module& module) {
  ANVIL_RETURN_IF_ERROR(InlineCalls(module));
  RemoveDeadCode(module);
  // Inlined calls leave attributes naming their computations (`to_apply`) on
  // nothing: every remaining reference must still resolve.
  return Verify(module);
}

}  // namespace anvil::hlo
