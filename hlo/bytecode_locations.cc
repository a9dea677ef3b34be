#include "hlo/bytecode_locations.h"

namespace anvil::hlo::bytecode {
namespace {

// Builtin dialect attribute codes of the location kinds (MLIR's
// BuiltinDialectBytecode), and StringAttr's.
constexpr uint64_t kStringAttr = 2;
constexpr uint64_t kCallSiteLoc = 10;
constexpr uint64_t kFileLineColLoc = 11;
constexpr uint64_t kFusedLoc = 12;
constexpr uint64_t kFusedLocWithMetadata = 13;
constexpr uint64_t kNameLoc = 14;
constexpr uint64_t kFileLineColRange = 22;

constexpr int kMaxDepth = 32;

class Describer {
 public:
  explicit Describer(const File& f) : f_(f) {}

  // Fills `out` from attribute `index`; false when it holds nothing useful.
  bool Describe(uint64_t index, SourceLocation& out, int depth) {
    if (depth > kMaxDepth || index >= f_.attributes.size()) return false;
    const AttrTypeEntry& entry = f_.attributes[index];
    if (!entry.custom || entry.dialect >= f_.dialects.size() || f_.dialects[entry.dialect].name != "builtin") {
      return false;
    }
    Reader r(entry.data, nullptr);
    uint64_t code = 0;
    if (!r.ReadVarInt(code).ok()) return false;
    switch (code) {
      case kFileLineColLoc:
      case kFileLineColRange: {
        uint64_t file = 0;
        if (!r.ReadVarInt(file).ok() || !StringAttr(file, out.file)) return false;
        uint64_t values[2] = {0, 0};
        uint64_t count = 2;
        // A range writes how many of (line, column, end line, end column) follow.
        if (code == kFileLineColRange && !r.ReadVarInt(count).ok()) return true;
        for (uint64_t k = 0; k < count && k < 2; ++k) {
          if (!r.ReadVarInt(values[k]).ok()) break;
        }
        out.line = static_cast<int64_t>(values[0]);
        out.column = static_cast<int64_t>(values[1]);
        return true;
      }
      case kNameLoc: {
        uint64_t name = 0, child = 0;
        if (!r.ReadVarInt(name).ok()) return false;
        std::string text;
        if (!StringAttr(name, text)) return false;
        if (out.name.empty()) out.name = text;
        if (r.ReadVarInt(child).ok()) Describe(child, out, depth + 1);
        return true;
      }
      case kCallSiteLoc: {
        // The callee is where the op was written; the caller, where that was called.
        uint64_t callee = 0, caller = 0;
        if (!r.ReadVarInt(callee).ok() || !r.ReadVarInt(caller).ok()) return false;
        if (Describe(callee, out, depth + 1) && !out.file.empty()) return true;
        return Describe(caller, out, depth + 1);
      }
      case kFusedLoc:
      case kFusedLocWithMetadata: {
        uint64_t n = 0;
        if (!r.ReadVarInt(n).ok()) return false;
        bool any = false;
        for (uint64_t k = 0; k < n && k < 64; ++k) {
          uint64_t part = 0;
          if (!r.ReadVarInt(part).ok()) break;
          any = Describe(part, out, depth + 1) || any;
          if (!out.file.empty()) break;
        }
        return any;
      }
      default: return false;  // UnknownLoc, or not a location
    }
  }

 private:
  bool String(uint64_t index, std::string& out) const {
    if (index >= f_.strings.size()) return false;
    out = std::string(f_.strings[index]);
    return true;
  }

  // A StringAttr's text, from its attribute index.
  bool StringAttr(uint64_t index, std::string& out) const {
    if (index >= f_.attributes.size()) return false;
    const AttrTypeEntry& entry = f_.attributes[index];
    Reader r(entry.data, nullptr);
    uint64_t code = 0, string = 0;
    if (!entry.custom || !r.ReadVarInt(code).ok() || code != kStringAttr || !r.ReadVarInt(string).ok()) return false;
    return String(string, out);
  }

  const File& f_;
};

}  // namespace

std::string SourceLocation::ToString() const {
  std::string where;
  if (!file.empty()) {
    where = file;
    if (line > 0) where += ":" + std::to_string(line);
    if (line > 0 && column > 0) where += ":" + std::to_string(column);
  }
  if (name.empty()) return where;
  return where.empty() ? name : where + " (" + name + ")";
}

SourceLocation DescribeLocation(const File& file, uint64_t index) {
  SourceLocation out;
  Describer(file).Describe(index, out, 0);
  return out;
}

}  // namespace anvil::hlo::bytecode
