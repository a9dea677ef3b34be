// What the StableHLO lowering needs from where its syntax tree came from:
// messages that point into the source (FILE:LINE:COL for text, byte offsets
// for bytecode), instruction positions, and the values of dense attributes
// (text leaves them unparsed until the lowering knows their type; bytecode
// has them decoded). Internal to hlo/.
#pragma once

#include <optional>
#include <string_view>
#include <utility>

#include "hlo/literal.h"
#include "hlo/mlir_syntax.h"
#include "hlo/status.h"

namespace anvil::hlo::mlir {

class SyntaxSource {
 public:
  virtual ~SyntaxSource() = default;
  // An INVALID_ARGUMENT status pointing at `pos` (a position the tree recorded).
  virtual Status ErrorAt(size_t pos, std::string_view message) const = 0;
  // Line and column of `pos` for an instruction's source position; (0, 0)
  // when the source has no lines.
  virtual std::pair<int, int> LineColumn(size_t pos) const = 0;
  // The values of a dense attribute as a literal of `shape`. Each call
  // counts against one budget of literal bytes per source, so that a
  // program cannot make the lowering copy a large constant without bound.
  virtual StatusOr<Literal> DenseValue(const Attr& dense, const Shape& shape) = 0;
  // When a dense attribute of `shape` holds one value for every element (a
  // splat), that value as a scalar literal, read without building the
  // array; nullopt otherwise, or where it cannot tell (DenseValue then
  // reads it, and says what is wrong with it).
  virtual std::optional<Literal> DenseSplat(const Attr& dense, const Shape& shape) = 0;
};

}  // namespace anvil::hlo::mlir
