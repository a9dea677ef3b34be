// The MLIR syntax tree the StableHLO parser reads before lowering: generic
// operations with operands, attributes, regions and types, whichever form
// (pretty or generic) the text used. Internal to hlo/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hlo/literal.h"
#include "hlo/shape.h"

namespace anvil::hlo::mlir {

struct Attr;
// One `key = value` of an attribute dictionary. (A struct, not a std::pair,
// so Attr can hold a vector of them before it is complete.)
struct NamedAttr;

struct Attr {
  enum class Kind { kUnit, kBool, kInt, kFloat, kString, kSymbol, kWord, kArray, kDict, kDense, kOpaque, kType };
  Kind kind = Kind::kUnit;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  // kString: the string; kSymbol: the name without '@'; kWord: the bare word;
  // kOpaque: the dialect attribute's name (`stablehlo.gather`, `stablehlo`).
  std::string s;
  std::vector<Attr> list;                             // kArray, and array<...> values
  std::vector<NamedAttr> entries;  // kDict, and kOpaque bodies of `k = v`
  std::string raw;                                    // kOpaque: the text inside <...>
  size_t body_pos = 0;                                // kDense: where the body (text) or data (bytecode) starts
  // kDense from bytecode: the values, already decoded (shared, so that
  // copying an attribute does not copy a large constant).
  std::shared_ptr<const Literal> literal;
  // kDense from bytecode: `literal` is the one value of every element (a
  // splat of more than kMaxSplatConstantElements), a scalar, not an array
  // of `type`.
  bool splat = false;
  std::optional<Shape> type;                          // `: type` suffix, kType's type

  const Attr* Find(std::string_view key) const;
};

struct NamedAttr {
  std::string first;
  Attr second;
};

inline const Attr* Attr::Find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

struct Value {
  std::string name;  // `%x`, `%0#1`
  size_t pos = 0;
};

struct Op;

struct Block {
  std::vector<std::pair<std::string, Shape>> arguments;
  std::vector<std::unique_ptr<Op>> ops;
};

struct Region {
  std::vector<Block> blocks;
  size_t pos = 0;
};

struct Op {
  std::string name;                  // `stablehlo.add`, `func.return`, `check.expect_eq`
  std::vector<std::string> results;  // `%0#0`, `%0#1`, or `%x`
  std::vector<Value> operands;
  std::vector<NamedAttr> attributes;
  std::vector<Region> regions;
  std::vector<Shape> operand_types;
  std::vector<Shape> result_types;
  // The pretty `: t1, t2` form lists types without saying which are results;
  // the lowering takes the last ones as the results.
  bool shorthand_types = false;
  size_t pos = 0;
  // Where the op came from in the framework's source, when the program
  // says (bytecode locations): for messages and instruction metadata.
  std::string source_file;
  int64_t source_line = 0;
  std::string source_name;  // JAX's op path, `jit(f)/sin`
  std::string location;     // all of it for a person: "file:line:col (name)"

  const Attr* FindAttr(std::string_view key) const {
    for (const auto& [k, v] : attributes) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

struct Function {
  std::string name;
  bool is_public = true;
  // Set when the function could not be read: the reader recovered at the
  // next function, so that one function Anvil cannot run does not sink the
  // module when functions are lowered one by one.
  Status error;
  std::vector<std::pair<std::string, Shape>> arguments;
  // Each argument's attribute dictionary (`{jax.buffer_donor = true}`),
  // empty where it has none; as many as `arguments`, or none at all.
  std::vector<std::vector<NamedAttr>> argument_attributes;
  std::vector<Shape> result_types;
  Region body;
  size_t pos = 0;
};

struct ModuleSyntax {
  std::string name;
  std::vector<Function> functions;
};

}  // namespace anvil::hlo::mlir
