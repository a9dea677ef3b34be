// A module in a compact binary form, for what caches keep: reading it back
// is several times cheaper than parsing the module's text, because nothing
// is tokenised, no number is converted from decimal and no name is looked
// up (operands and callees are indices).
//
// WriteBinaryModule(m) read back by ReadBinaryModule is a module Equal to m
// (less its instructions' metadata if the options say so),
// with the same instruction lines and columns. Splat constants are written
// as one element. Reading checks every count, index, element type and shape
// (CheckShapeSize) before it allocates anything, so truncated or corrupt
// bytes give INVALID_ARGUMENT naming the byte offset, never a crash. The
// format is versioned by its first bytes; bytes of another version are
// refused with an error that says so (a cache treats that as a miss).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

struct BinaryModuleOptions {
  // Leave out each instruction's `metadata` (where the framework made it:
  // op names, source lines), which nothing after a compile reads. It is
  // often half of a model's text (MobileNet v2's step: 421 of 827 KB), and
  // each value is a string to allocate when the bytes are read back. The
  // module read back then lacks those attributes; nothing else changes.
  bool keep_metadata = true;
};

std::string WriteBinaryModule(const Module& module, const BinaryModuleOptions& options = {});

// `file` names the bytes in messages (`cache entry: byte 12: ...`).
StatusOr<std::unique_ptr<Module>> ReadBinaryModule(std::string_view bytes, const std::string& file);

// Whether `bytes` start as WriteBinaryModule's output does (any version).
bool LooksLikeBinaryModule(std::string_view bytes);

}  // namespace anvil::hlo
