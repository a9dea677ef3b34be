// Source locations of MLIR bytecode ops: the builtin location attributes
// (file:line:col ranges, names, call sites, fused locations) reduced to the
// one place a person looks first.
#pragma once

#include <cstdint>
#include <string>

#include "hlo/bytecode_reader.h"

namespace anvil::hlo::bytecode {

struct SourceLocation {
  std::string name;  // a NameLoc's name: JAX's op path, `jit(f)/sin`
  std::string file;
  int64_t line = 0;  // 0: unknown
  int64_t column = 0;

  bool empty() const { return name.empty() && file.empty(); }
  // "file:line:col (name)", "file:line:col", or "name".
  std::string ToString() const;
};

// The location attribute `index` of `file` describes. Anything unreadable or
// unknown gives an empty location: locations only ever add to messages.
SourceLocation DescribeLocation(const File& file, uint64_t index);

}  // namespace anvil::hlo::bytecode
