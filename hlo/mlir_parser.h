// Reads MLIR text (the subset StableHLO programs use) into the syntax tree of
// mlir_syntax.h. Internal to hlo/; the lowering turns the tree into the IR.
#pragma once

#include <string_view>

#include "hlo/literal.h"
#include "hlo/mlir_source.h"
#include "hlo/mlir_syntax.h"
#include "hlo/text_cursor.h"

namespace anvil::hlo::mlir {

class Parser : public SyntaxSource {
 public:
  Parser(std::string_view text, const SourceInfo& source) : c_(text, source, /*allow_block_comments=*/false) {}

  // With `recover_functions`, a function that fails to parse is kept with
  // its `error` set and parsing resumes after it; otherwise the first error
  // fails the module.
  StatusOr<ModuleSyntax> ParseModule(bool recover_functions = false);
  // Reads the body of a `dense<...>` attribute (found at `body_pos`) as a
  // literal of `shape`.
  StatusOr<Literal> ParseDense(size_t body_pos, const Shape& shape);
  StatusOr<Literal> DenseValue(const Attr& dense, const Shape& shape) override {
    return ParseDense(dense.body_pos, shape);
  }
  std::optional<Literal> DenseSplat(const Attr& dense, const Shape& shape) override {
    return ParseDenseSplat(dense.body_pos, shape);
  }
  // The one value of a `dense<...>` body that is a splat (`dense<1.5>`, or
  // a hex string of one element), as a scalar; nullopt otherwise.
  std::optional<Literal> ParseDenseSplat(size_t body_pos, const Shape& shape);
  Status ErrorAt(size_t pos, std::string_view message) const override { return c_.ErrorAt(pos, message); }
  std::pair<int, int> LineColumn(size_t pos) const override { return c_.LineColumn(pos); }

 private:
  Status ParseFunction(ModuleSyntax& module);
  // After a function that failed at some point: its name and where it ends.
  Status SkipFailedFunction(size_t start, ModuleSyntax& module, Status error);
  Status ParseRegion(Region& region);
  Status ParseBlockBody(Block& block);
  StatusOr<std::unique_ptr<Op>> ParseOp();
  Status ParseGenericBody(Op& op);
  Status ParsePrettyBody(Op& op);
  Status ParsePrettyGroup(Op& op, std::vector<Value>& inits, std::vector<std::string>& bound_names);
  Status ParseTypeSignature(Op& op);
  Status ParseTrailingRegions(Op& op);
  Status SkipLocation();
  Status SkipAttributeAliases();
  // `attributes`, when given, receives each argument's dictionary.
  Status ParseBlockArguments(std::vector<std::pair<std::string, Shape>>& arguments,
                             std::vector<std::vector<NamedAttr>>* attributes = nullptr);
  StatusOr<Value> ParseValue();
  StatusOr<std::string> ParseValueName();
  StatusOr<Shape> ParseType();
  StatusOr<Attr> ParseAttr();
  // An attribute's optional `: type` suffix, the type of its data.
  Status ParseDataType(Attr& a);
  Status ParseDict(std::vector<NamedAttr>& entries, char close);
  StatusOr<std::string> ScanBalanced(char open, char close);
  Status ParseDenseElements(Literal& literal, int64_t& index, int depth);
  Status ParseDenseElement(Literal& literal, int64_t index);

  TextCursor c_;
  int64_t literal_bytes_left_ = kMaxLiteralBytes;
  bool index_as_s64_ = false;  // while reading the type of an attribute's data
};

}  // namespace anvil::hlo::mlir
