// Pieces both front doors share: splitting a file at `// -----` lines and
// reading literal element values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hlo/literal.h"
#include "hlo/text_cursor.h"

namespace anvil::hlo {

struct TextChunk {
  std::string_view text;
  int first_line;  // 1-based line of the chunk's first line in the file
};

// Splits at lines that hold only `// -----`, as MLIR's and XLA's
// --split-input-file do. Always at least one chunk.
std::vector<TextChunk> SplitInputFile(std::string_view text);

// Reads one element value (integer, float, `inf`, `nan(0x..)`, `true`, a
// complex `(re, im)`) for element `index` of `literal`.
Status ParseLiteralElement(TextCursor& cursor, Literal& literal, int64_t index);

}  // namespace anvil::hlo
