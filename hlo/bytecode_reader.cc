// The section layout follows MLIR's bytecode format (mlir/docs/BytecodeFormat.md):
// a magic, a version varint, the producer string, then sections. Counts are
// checked against the bytes left before anything is sized from them, and
// nesting is bounded, so hostile input fails with a message instead of a
// crash, a huge allocation or a deep recursion.
#include "hlo/bytecode_reader.h"

#include <cstring>
#include <map>
#include <optional>

namespace anvil::hlo::bytecode {
namespace {

constexpr int kMaxRegionDepth = 64;  // as deep as the text parsers go, roughly

Status ReadStrings(Bytes section, const std::string* file, std::vector<std::string_view>& strings) {
  Reader r(section, file);
  uint64_t count = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadCount(count, "the string count"));
  strings.resize(count);
  // The sizes come first, for the last string first; the characters (each
  // string NUL-terminated) fill the end of the section in order.
  size_t end = section.size;
  for (uint64_t k = 0; k < count; ++k) {
    const size_t at = r.offset();
    uint64_t size = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadVarInt(size, "a string size"));
    if (size == 0 || size > end) {
      return r.ErrorAtOffset(at, "string size " + std::to_string(size) + " does not fit the string section");
    }
    const size_t start = end - size;
    if (section.data[end - 1] != 0) {
      return r.ErrorAtOffset(section.offset + end - 1, "expected a string's NUL terminator");
    }
    strings[count - 1 - k] = std::string_view(reinterpret_cast<const char*>(section.data + start), size - 1);
    end = start;
  }
  if (section.size - r.remaining() != end) {
    return r.Error("unexpected bytes between the string sizes and their characters");
  }
  return OkStatus();
}

Status StringAt(const File& f, Reader& r, uint64_t index, std::string_view& out) {
  if (index >= f.strings.size()) return r.Error("string index " + std::to_string(index) + " out of range");
  out = f.strings[index];
  return OkStatus();
}

Status ReadDialects(Bytes section, const std::string* file, File& f) {
  Reader r(section, file);
  uint64_t count = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadCount(count, "the dialect count"));
  f.dialects.resize(count);
  for (DialectEntry& d : f.dialects) {
    uint64_t name = 0;
    bool has_version = false;
    if (f.version < kVersionDialectVersioning) {
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(name, "a dialect name"));
    } else {
      ANVIL_RETURN_IF_ERROR(r.ReadVarIntWithFlag(name, has_version, "a dialect name"));
    }
    ANVIL_RETURN_IF_ERROR(StringAt(f, r, name, d.name));
    if (has_version) {
      // The dialect's own version blob: VHLO names its version in the
      // producer string instead, so the blob is framed but not read.
      SectionId id;
      Bytes ignored;
      const size_t at = r.offset();
      ANVIL_RETURN_IF_ERROR(r.ReadSection(id, ignored));
      if (id != SectionId::kDialectVersions) return r.ErrorAtOffset(at, "expected a dialect version section");
    }
  }
  if (f.version >= kVersionElideUnknownBlockArgLocation) {
    uint64_t num_ops = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadCount(num_ops, "the operation name count"));
  }
  // Operation names, grouped by dialect.
  while (!r.AtEnd()) {
    uint64_t dialect = 0, n = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadVarInt(dialect, "a dialect index"));
    if (dialect >= f.dialects.size()) return r.Error("dialect index " + std::to_string(dialect) + " out of range");
    ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "the operation name count of a dialect"));
    for (uint64_t k = 0; k < n; ++k) {
      OpNameEntry op;
      op.dialect = dialect;
      uint64_t name = 0;
      if (f.version < kVersionNativeProperties) {
        ANVIL_RETURN_IF_ERROR(r.ReadVarInt(name, "an operation name"));
      } else {
        ANVIL_RETURN_IF_ERROR(r.ReadVarIntWithFlag(name, op.registered, "an operation name"));
      }
      ANVIL_RETURN_IF_ERROR(StringAt(f, r, name, op.name));
      f.op_names.push_back(op);
    }
  }
  return OkStatus();
}

Status ReadProperties(Bytes section, const std::string* file, File& f) {
  if (section.size == 0) return OkStatus();
  Reader r(section, file);
  uint64_t count = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadCount(count, "the properties count"));
  for (uint64_t k = 0; k < count; ++k) {
    uint64_t size = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadVarInt(size, "a properties size"));
    Bytes blob;
    ANVIL_RETURN_IF_ERROR(r.ReadBytes(size, blob, "bytes of properties"));
    f.properties.push_back(blob);
  }
  if (!r.AtEnd()) return r.Error("unexpected bytes after the properties table");
  return OkStatus();
}

Status ReadAttrTypeOffsets(Bytes entries, Bytes offsets, const std::string* file, File& f) {
  Reader r(offsets, file);
  uint64_t num_attrs = 0, num_types = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadCount(num_attrs, "the attribute count"));
  ANVIL_RETURN_IF_ERROR(r.ReadCount(num_types, "the type count"));
  if (num_attrs + num_types > offsets.size) return r.Error("more attributes and types than the offset table can hold");
  size_t next = 0;
  auto read_group = [&](std::vector<AttrTypeEntry>& out, uint64_t total, const char* what) -> Status {
    while (out.size() < total) {
      uint64_t dialect = 0, n = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(dialect, "a dialect index"));
      if (dialect >= f.dialects.size()) return r.Error("dialect index " + std::to_string(dialect) + " out of range");
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(n, "an entry count"));
      if (n > total - out.size()) return r.Error(std::string("more ") + what + " entries than declared");
      for (uint64_t k = 0; k < n; ++k) {
        AttrTypeEntry e;
        e.dialect = dialect;
        uint64_t size = 0;
        ANVIL_RETURN_IF_ERROR(r.ReadVarIntWithFlag(size, e.custom, "an entry size"));
        if (size > entries.size - next) return r.Error(std::string("a ") + what + " entry runs past its section");
        e.data = Bytes{entries.data + next, static_cast<size_t>(size), entries.offset + next};
        next += size;
        out.push_back(e);
      }
    }
    return OkStatus();
  };
  ANVIL_RETURN_IF_ERROR(read_group(f.attributes, num_attrs, "attribute"));
  ANVIL_RETURN_IF_ERROR(read_group(f.types, num_types, "type"));
  if (!r.AtEnd()) return r.Error("unexpected bytes after the attribute and type offsets");
  return OkStatus();
}

// Reads the IR section: ops, their regions and blocks, and the numbering of
// values. Values are numbered per isolated-from-above scope; each region
// reserves its values after those of the regions enclosing it.
class IrReader {
 public:
  IrReader(File& f, const std::string* file) : f_(f), file_(file) {}

  Status ReadTop(Bytes section) {
    Reader r(section, file_);
    scopes_.emplace_back();
    scopes_.back().next.push_back(0);
    uint64_t num_ops = 0;
    ANVIL_RETURN_IF_ERROR(ReadBlockHeader(r, f_.top, num_ops));
    ANVIL_RETURN_IF_ERROR(ReadOps(r, f_.top, num_ops, /*region_values=*/0, /*num_blocks=*/1));
    if (!r.AtEnd()) return r.Error("unexpected bytes after the top-level operations");
    return OkStatus();
  }

 private:
  struct Scope {
    std::vector<uint64_t> next;  // the next value id of each open region
    uint64_t reserved = 0;       // ids in use by the open regions
    std::map<uint64_t, std::string> names;
  };

  Status Define(Reader& r, std::string& name) {
    Scope& s = scopes_.back();
    uint64_t& id = s.next.back();
    if (id >= s.reserved) return r.Error("a value is defined beyond the values its region declares");
    auto it = s.names.find(id);
    if (it == s.names.end()) it = s.names.emplace(id, Fresh()).first;  // else a forward reference's name
    name = it->second;
    ++id;
    return OkStatus();
  }

  Status Use(Reader& r, std::string& name) {
    uint64_t id = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadVarInt(id, "a value index"));
    Scope& s = scopes_.back();
    if (id >= s.reserved) return r.Error("value index " + std::to_string(id) + " out of range");
    auto it = s.names.find(id);
    if (it == s.names.end()) it = s.names.emplace(id, Fresh()).first;  // defined later
    name = it->second;
    return OkStatus();
  }

  std::string Fresh() { return "%" + std::to_string(counter_++); }

  Status TypeIndex(Reader& r, uint64_t& out) {
    ANVIL_RETURN_IF_ERROR(r.ReadVarInt(out, "a type index"));
    if (out >= f_.types.size()) return r.Error("type index " + std::to_string(out) + " out of range");
    return OkStatus();
  }

  Status AttrIndex(Reader& r, uint64_t& out) {
    ANVIL_RETURN_IF_ERROR(r.ReadVarInt(out, "an attribute index"));
    if (out >= f_.attributes.size()) return r.Error("attribute index " + std::to_string(out) + " out of range");
    return OkStatus();
  }

  Status ReadUseListOrder(Reader& r, uint64_t values) {
    uint64_t n = 1;
    if (values > 1) ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "the use-list order count"));
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t index = 0, uses = 0;
      bool pairs = false;
      if (values > 1) ANVIL_RETURN_IF_ERROR(r.ReadVarInt(index, "a value index"));
      ANVIL_RETURN_IF_ERROR(r.ReadVarIntWithFlag(uses, pairs, "a use count"));
      if (uses > r.remaining()) return r.Error("use-list order longer than the data left");
      for (uint64_t u = 0; u < uses; ++u) ANVIL_RETURN_IF_ERROR(r.ReadVarInt(index, "a use index"));
    }
    return OkStatus();
  }

  Status ReadBlockHeader(Reader& r, GenericBlock& block, uint64_t& num_ops) {
    bool has_args = false;
    ANVIL_RETURN_IF_ERROR(r.ReadVarIntWithFlag(num_ops, has_args, "a block's operation count"));
    if (num_ops > r.remaining()) return r.Error("block declares more operations than the data left can hold");
    if (!has_args) return OkStatus();
    uint64_t n = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "the block argument count"));
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t type = 0, loc = 0;
      if (f_.version >= kVersionElideUnknownBlockArgLocation) {
        bool has_loc = false;
        ANVIL_RETURN_IF_ERROR(r.ReadVarIntWithFlag(type, has_loc, "a block argument type"));
        if (type >= f_.types.size()) return r.Error("type index " + std::to_string(type) + " out of range");
        if (has_loc) ANVIL_RETURN_IF_ERROR(AttrIndex(r, loc));
      } else {
        ANVIL_RETURN_IF_ERROR(TypeIndex(r, type));
        ANVIL_RETURN_IF_ERROR(AttrIndex(r, loc));
      }
      std::string name;
      ANVIL_RETURN_IF_ERROR(Define(r, name));
      block.arguments.emplace_back(std::move(name), type);
    }
    if (f_.version >= kVersionUseListOrdering) {
      uint8_t has_orders = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadByte(has_orders, "the use-list order flag"));
      if (has_orders) ANVIL_RETURN_IF_ERROR(ReadUseListOrder(r, n));
    }
    return OkStatus();
  }

  Status ReadOps(Reader& r, GenericBlock& block, uint64_t num_ops, uint64_t region_values, uint64_t num_blocks) {
    for (uint64_t k = 0; k < num_ops; ++k) {
      block.ops.emplace_back();
      ANVIL_RETURN_IF_ERROR(ReadOp(r, block.ops.back(), region_values, num_blocks));
    }
    return OkStatus();
  }

  Status ReadOp(Reader& r, GenericOp& op, uint64_t region_values, uint64_t num_blocks) {
    op.offset = r.offset();
    ANVIL_RETURN_IF_ERROR(r.ReadVarInt(op.name, "an operation name index"));
    if (op.name >= f_.op_names.size()) {
      return r.Error("operation name index " + std::to_string(op.name) + " out of range");
    }
    uint8_t mask = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadByte(mask, "an operation's encoding mask"));
    if (mask & 0x80) return r.ErrorAtOffset(r.offset() - 1, "unknown bits in an operation's encoding mask");
    uint64_t index = 0;
    ANVIL_RETURN_IF_ERROR(AttrIndex(r, index));
    op.location = index;
    if (mask & 0x01) {
      ANVIL_RETURN_IF_ERROR(AttrIndex(r, index));
      op.attributes = index;
    }
    if (mask & 0x40) {
      if (f_.version < kVersionNativeProperties) return r.Error("properties in a bytecode version that has none");
      if (f_.op_names[op.name].registered) {
        ANVIL_RETURN_IF_ERROR(r.ReadVarInt(index, "a properties index"));
        if (index >= f_.properties.size()) {
          return r.Error("properties index " + std::to_string(index) + " out of range");
        }
        op.properties = index;
      } else {
        ANVIL_RETURN_IF_ERROR(AttrIndex(r, index));
        op.properties_attr = index;
      }
    }
    if (mask & 0x02) {
      uint64_t n = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "the result count"));
      for (uint64_t k = 0; k < n; ++k) {
        ANVIL_RETURN_IF_ERROR(TypeIndex(r, index));
        op.result_types.push_back(index);
      }
    }
    if (mask & 0x04) {
      uint64_t n = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "the operand count"));
      for (uint64_t k = 0; k < n; ++k) {
        std::string name;
        ANVIL_RETURN_IF_ERROR(Use(r, name));
        op.operands.push_back(std::move(name));
      }
    }
    if (mask & 0x08) {
      uint64_t n = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "the successor count"));
      for (uint64_t k = 0; k < n; ++k) {
        ANVIL_RETURN_IF_ERROR(r.ReadVarInt(index, "a successor block index"));
        if (index >= num_blocks) return r.Error("successor block index " + std::to_string(index) + " out of range");
      }
      op.has_successors = n > 0;
    }
    if ((mask & 0x20) && f_.version >= kVersionUseListOrdering) {
      ANVIL_RETURN_IF_ERROR(ReadUseListOrder(r, op.result_types.size()));
    }
    uint64_t num_regions = 0;
    bool isolated = false;
    if (mask & 0x10) {
      ANVIL_RETURN_IF_ERROR(r.ReadVarIntWithFlag(num_regions, isolated, "the region count"));
      if (num_regions > r.remaining()) return r.Error("more regions than the data left can hold");
    }
    // Results are numbered only inside a region that declares values (the
    // top level declares none).
    if (region_values > 0) {
      for (size_t k = 0; k < op.result_types.size(); ++k) {
        std::string name;
        ANVIL_RETURN_IF_ERROR(Define(r, name));
        op.results.push_back(std::move(name));
      }
    } else {
      for (size_t k = 0; k < op.result_types.size(); ++k) op.results.push_back(Fresh());
    }
    if (num_regions == 0) return OkStatus();
    if (++depth_ > kMaxRegionDepth) {
      return r.Error("regions nested more than " + std::to_string(kMaxRegionDepth) + " deep");
    }
    op.regions.resize(num_regions);
    if (isolated && f_.version >= kVersionLazyLoading) {
      // An isolated op's regions form a section of their own.
      SectionId id;
      Bytes data;
      const size_t at = r.offset();
      ANVIL_RETURN_IF_ERROR(r.ReadSection(id, data));
      if (id != SectionId::kIR) return r.ErrorAtOffset(at, "expected the IR section of an isolated region");
      Reader inner(data, file_);
      ANVIL_RETURN_IF_ERROR(ReadRegions(inner, op, isolated));
      if (!inner.AtEnd()) return inner.Error("unexpected bytes after an isolated region");
    } else {
      ANVIL_RETURN_IF_ERROR(ReadRegions(r, op, isolated));
    }
    --depth_;
    return OkStatus();
  }

  Status ReadRegions(Reader& r, GenericOp& op, bool isolated) {
    if (isolated) {
      scopes_.emplace_back();
    }
    for (GenericRegion& region : op.regions) ANVIL_RETURN_IF_ERROR(ReadRegion(r, region));
    if (isolated) scopes_.pop_back();
    return OkStatus();
  }

  Status ReadRegion(Reader& r, GenericRegion& region) {
    region.offset = r.offset();
    uint64_t num_blocks = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadCount(num_blocks, "the block count"));
    if (num_blocks == 0) return OkStatus();
    uint64_t num_values = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadCount(num_values, "the value count"));
    Scope& s = scopes_.back();
    s.next.push_back(s.reserved);
    s.reserved += num_values;
    region.blocks.resize(num_blocks);
    for (GenericBlock& block : region.blocks) {
      uint64_t num_ops = 0;
      ANVIL_RETURN_IF_ERROR(ReadBlockHeader(r, block, num_ops));
      ANVIL_RETURN_IF_ERROR(ReadOps(r, block, num_ops, num_values, num_blocks));
    }
    Scope& after = scopes_.back();
    after.reserved -= num_values;
    after.next.pop_back();
    after.names.erase(after.names.lower_bound(after.reserved), after.names.end());
    return OkStatus();
  }

  File& f_;
  const std::string* file_;
  std::vector<Scope> scopes_;
  uint64_t counter_ = 0;
  int depth_ = 0;
};

}  // namespace

bool HasBytecodeMagic(std::string_view bytes) { return bytes.size() >= 4 && bytes.substr(0, 4) == "ML\xefR"; }

StatusOr<File> ReadFile(Bytes bytes, const std::string* file) {
  File f;
  Reader r(bytes, file);
  if (!HasBytecodeMagic(std::string_view(reinterpret_cast<const char*>(bytes.data), bytes.size))) {
    return r.Error("expected the MLIR bytecode magic 'ML\\xefR'");
  }
  Bytes magic;
  ANVIL_RETURN_IF_ERROR(r.ReadBytes(4, magic, "magic bytes"));
  const size_t version_at = r.offset();
  ANVIL_RETURN_IF_ERROR(r.ReadVarInt(f.version, "the bytecode version"));
  if (f.version > kVersionNewest) {
    return r.ErrorAtOffset(version_at, "bytecode version " + std::to_string(f.version) +
                                           " is newer than the newest this reader knows (" +
                                           std::to_string(kVersionNewest) + ")");
  }
  ANVIL_RETURN_IF_ERROR(r.ReadNullTerminated(f.producer));
  std::optional<Bytes> sections[kNumSections];
  while (!r.AtEnd()) {
    const size_t at = r.offset();
    SectionId id;
    Bytes data;
    ANVIL_RETURN_IF_ERROR(r.ReadSection(id, data));
    auto& slot = sections[static_cast<int>(id)];
    if (slot) return r.ErrorAtOffset(at, "section " + std::to_string(static_cast<int>(id)) + " appears twice");
    slot = data;
  }
  const char* kNames[] = {"string", "dialect", "attribute/type", "attribute/type offset", "IR"};
  for (int k = 0; k < 5; ++k) {
    if (!sections[k]) return r.Error(std::string("expected the ") + kNames[k] + " section, found end of data");
  }
  const auto& props = sections[static_cast<int>(SectionId::kProperties)];
  if (!props && f.version >= kVersionNativeProperties) {
    return r.Error("expected the properties section, found end of data");
  }
  ANVIL_RETURN_IF_ERROR(ReadStrings(*sections[0], file, f.strings));
  if (props) ANVIL_RETURN_IF_ERROR(ReadProperties(*props, file, f));
  ANVIL_RETURN_IF_ERROR(ReadDialects(*sections[1], file, f));
  ANVIL_RETURN_IF_ERROR(ReadAttrTypeOffsets(*sections[2], *sections[3], file, f));
  IrReader ir(f, file);
  ANVIL_RETURN_IF_ERROR(ir.ReadTop(*sections[static_cast<int>(SectionId::kIR)]));
  return f;
}

}  // namespace anvil::hlo::bytecode
