#include "hlo/cse.h"

#include <cstring>
#include <string>
#include <unordered_map>

#include "hlo/canonicalize.h"

namespace anvil::hlo {
namespace {

bool HoldsToken(const Shape& shape) {
  if (shape.IsToken()) return true;
  for (const Shape& e : shape.tuple_elements()) {
    if (HoldsToken(e)) return true;
  }
  return false;
}

// What a second copy of an instruction might compute differently from the
// first, or must run for its own sake: never merged.
bool MayDiffer(const Instruction& i) {
  return i.opcode == Opcode::kParameter || i.opcode == Opcode::kCustomCall || HasSideEffect(i) ||
         HoldsToken(i.shape) || (i.literal && (i.literal->elided() || i.shape.IsTuple()));
}

void AppendInt(std::string& key, int64_t v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Equal keys mean equal values, given equal operand ids: everything the
// instruction's result depends on but its name, its place in the text and
// its metadata. `callee_id` stands for each called computation's structure.
template <typename OperandId>
std::string KeyOf(const Instruction& i, OperandId operand_id,
                  const std::unordered_map<const Computation*, int64_t>& callee_id) {
  std::string key;
  AppendInt(key, static_cast<int64_t>(i.opcode));
  key += i.async_spelling;
  key += '|';
  key += i.shape.ToString();
  key += '|';
  AppendInt(key, i.parameter_number);
  AppendInt(key, static_cast<int64_t>(i.operands.size()));
  for (const Instruction* o : i.operands) AppendInt(key, operand_id(o));
  for (const Computation* c : i.called_computations) AppendInt(key, callee_id.at(c));
  for (const Attribute& a : i.attributes) {
    // Computations are compared by structure above, not by name.
    if (a.key == "metadata" || IsComputationAttribute(a.key)) continue;
    key += a.key;
    key += '=';
    key += a.value;
    key += '\n';
  }
  if (i.literal) {
    const auto& data = i.literal->data();
    AppendInt(key, static_cast<int64_t>(data.size()));
    key.append(reinterpret_cast<const char*>(data.data()), data.size());
  }
  return key;
}

// Ids for computations, equal when their instructions are (in order, with
// operands by position) and their roots are at the same place; and whether
// each is pure (nothing in it, or in what it calls, may differ between two
// runs). Callees come before their callers in a module.
struct Computations {
  std::unordered_map<const Computation*, int64_t> id;
  std::unordered_map<const Computation*, bool> pure;

  explicit Computations(const Module& module) {
    std::unordered_map<std::string, int64_t> ids;
    for (const auto& c : module.computations) {
      std::unordered_map<const Instruction*, int64_t> position;
      std::string signature;
      bool is_pure = true;
      for (const auto& i : c->instructions) {
        position.emplace(i.get(), static_cast<int64_t>(position.size()));
        for (const Computation* callee : i->called_computations) {
          // A callee not yet seen (out of order) makes this one unique.
          if (!id.count(callee)) {
            id[callee] = -1 - static_cast<int64_t>(id.size());
            pure[callee] = false;
          }
          is_pure &= pure[callee];
        }
        if (MayDiffer(*i) && i->opcode != Opcode::kParameter) {
          is_pure = false;
          // An elided constant's data is its own: no other computation equals this one.
          if (i->literal) AppendInt(signature, reinterpret_cast<intptr_t>(i.get()));
        }
        signature += KeyOf(*i, [&](const Instruction* o) { return position.at(o); }, id);
        signature += '\0';
      }
      AppendInt(signature, c->root ? position.at(c->root) : -1);
      pure[c.get()] = is_pure;
      if (id.count(c.get())) continue;  // called before it was defined: already unique
      id[c.get()] = ids.emplace(std::move(signature), static_cast<int64_t>(ids.size())).first->second;
    }
  }
};

}  // namespace

int EliminateCommonSubexpressions(Module& module) {
  const Computations computations(module);
  int replaced_count = 0;
  for (auto& c : module.computations) {
    std::unordered_map<Instruction*, Instruction*> replaced;
    std::unordered_map<std::string, Instruction*> first;
    for (auto& owned : c->instructions) {
      Instruction* i = owned.get();
      for (Instruction*& o : i->operands) {
        auto r = replaced.find(o);
        if (r != replaced.end()) o = r->second;
      }
      if (MayDiffer(*i)) continue;
      bool callees_pure = true;
      for (const Computation* callee : i->called_computations) callees_pure &= computations.pure.at(callee);
      if (!callees_pure) continue;
      const std::string key =
          KeyOf(*i, [](const Instruction* o) { return reinterpret_cast<intptr_t>(o); }, computations.id);
      auto [at, inserted] = first.emplace(key, i);
      if (!inserted) {
        replaced[i] = at->second;
        ++replaced_count;
      }
    }
    if (auto r = replaced.find(c->root); r != replaced.end()) c->root = r->second;
  }
  return replaced_count;
}

}  // namespace anvil::hlo
