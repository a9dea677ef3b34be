// The dialect-independent layer of MLIR bytecode: header, string table,
// dialects and operation names, the attribute/type entry table, the
// properties table and the IR section, read into a generic op tree whose
// attributes, types and properties are still indices. `vhlo_*.cc` give those
// indices their meaning. Internal to hlo/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/bytecode_stream.h"

namespace anvil::hlo::bytecode {

struct DialectEntry {
  std::string_view name;
};

struct OpNameEntry {
  uint64_t dialect = 0;
  std::string_view name;  // without the dialect prefix
  bool registered = true;
};

// One attribute or type entry: its dialect, whether it uses the dialect's
// binary encoding (else it is assembly text, NUL-terminated) and its bytes.
struct AttrTypeEntry {
  uint64_t dialect = 0;
  bool custom = false;
  Bytes data;
};

struct GenericRegion;

struct GenericOp {
  uint64_t name = 0;  // index into File::op_names
  size_t offset = 0;  // the op's first byte, for messages
  std::optional<uint64_t> attributes;       // attribute index of the discardable dictionary
  std::optional<uint64_t> properties;       // index into File::properties (registered ops)
  std::optional<uint64_t> properties_attr;  // attribute index (ops unregistered when written)
  std::vector<uint64_t> result_types;       // type indices
  std::vector<std::string> results;         // value names, `%N`
  std::vector<std::string> operands;
  std::vector<GenericRegion> regions;
  bool has_successors = false;
  uint64_t location = 0;  // attribute index of the op's location
};

struct GenericBlock {
  std::vector<std::pair<std::string, uint64_t>> arguments;  // name, type index
  std::vector<GenericOp> ops;
};

struct GenericRegion {
  std::vector<GenericBlock> blocks;
  size_t offset = 0;
};

struct File {
  uint64_t version = 0;
  std::string_view producer;
  std::vector<std::string_view> strings;
  std::vector<DialectEntry> dialects;
  std::vector<OpNameEntry> op_names;
  std::vector<AttrTypeEntry> attributes;
  std::vector<AttrTypeEntry> types;
  std::vector<Bytes> properties;  // each op's properties blob
  GenericBlock top;               // the ops at the top level
};

// The bytecode versions whose changes the reader follows.
inline constexpr uint64_t kVersionDialectVersioning = 1;
inline constexpr uint64_t kVersionLazyLoading = 2;  // isolated regions in their own section
inline constexpr uint64_t kVersionUseListOrdering = 3;
inline constexpr uint64_t kVersionElideUnknownBlockArgLocation = 4;
inline constexpr uint64_t kVersionNativeProperties = 5;
inline constexpr uint64_t kVersionNewest = 6;

// Reads the whole artifact. `file` names it in messages and must outlive the
// returned File, which points into `bytes`.
StatusOr<File> ReadFile(Bytes bytes, const std::string* file);

// True when `bytes` start with the bytecode magic `ML\xefR`.
bool HasBytecodeMagic(std::string_view bytes);

}  // namespace anvil::hlo::bytecode
