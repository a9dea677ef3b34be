#include "hlo/binary_module.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <unordered_map>

#include "hlo/bytecode_stream.h"

namespace anvil::hlo {
namespace {

// "ANVILHLO" and the format's version: bump it whenever what is written
// changes, so that older bytes are refused rather than misread.
constexpr char kMagic[] = {'A', 'N', 'V', 'I', 'L', 'H', 'L', 'O'};
constexpr uint8_t kVersion = 1;

#define ANVIL_COUNT_OPCODE(e, s) +1
constexpr uint64_t kOpcodeCount = 0 ANVIL_HLO_OPCODES(ANVIL_COUNT_OPCODE);
#undef ANVIL_COUNT_OPCODE

// Tuple shapes and literals nest; corrupt bytes must not recurse without end.
constexpr int kMaxNesting = 64;

enum class LiteralKind : uint8_t { kDense = 0, kSplat = 1, kElided = 2, kTuple = 3 };

// Writes MLIR bytecode's prefix varints (what bytecode::Reader reads): the
// count of trailing zero bits of the first byte is the count of bytes that
// follow.
class Writer {
 public:
  void Byte(uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void VarInt(uint64_t v) {
    for (int n = 1; n <= 8; ++n) {
      if (v < (uint64_t{1} << (7 * n))) {
        const uint64_t encoded = (v << n) | (uint64_t{1} << (n - 1));
        for (int k = 0; k < n; ++k) Byte(static_cast<uint8_t>(encoded >> (8 * k)));
        return;
      }
    }
    Byte(0);
    for (int k = 0; k < 8; ++k) Byte(static_cast<uint8_t>(v >> (8 * k)));
  }
  void SignedVarInt(int64_t v) {
    uint64_t u;
    std::memcpy(&u, &v, sizeof u);
    VarInt((u << 1) ^ (v < 0 ? ~uint64_t{0} : 0));
  }
  void String(std::string_view s) {
    VarInt(s.size());
    out_.append(s);
  }
  void Raw(const void* data, size_t size) { out_.append(static_cast<const char*>(data), size); }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

void WriteShape(Writer& w, const Shape& s) {
  w.Byte(s.IsTuple() ? 1 : 0);
  if (s.IsTuple()) {
    w.VarInt(s.tuple_elements().size());
    for (const Shape& e : s.tuple_elements()) WriteShape(w, e);
    return;
  }
  w.VarInt(static_cast<uint64_t>(s.element_type()));
  w.VarInt(s.dims().size());
  for (int64_t d : s.dims()) w.VarInt(static_cast<uint64_t>(d));
  w.VarInt(s.dynamic_dims().size());
  for (bool d : s.dynamic_dims()) w.Byte(d ? 1 : 0);
  w.VarInt(s.layout().minor_to_major.size());
  for (int64_t d : s.layout().minor_to_major) w.SignedVarInt(d);
  w.String(s.layout().tail);
}

void WriteLiteral(Writer& w, const Literal& l) {
  WriteShape(w, l.shape());
  if (l.elided()) {
    w.Byte(static_cast<uint8_t>(LiteralKind::kElided));
  } else if (l.shape().IsTuple()) {
    w.Byte(static_cast<uint8_t>(LiteralKind::kTuple));
    w.VarInt(l.tuple_elements().size());
    for (const Literal& e : l.tuple_elements()) WriteLiteral(w, e);
  } else if (l.IsSplat()) {
    w.Byte(static_cast<uint8_t>(LiteralKind::kSplat));
    const size_t element = static_cast<size_t>(Info(l.shape().element_type()).byte_size);
    w.VarInt(element);
    w.Raw(l.data().data(), element);
  } else {
    w.Byte(static_cast<uint8_t>(LiteralKind::kDense));
    w.VarInt(l.data().size());
    w.Raw(l.data().data(), l.data().size());
  }
}

void WriteAttributes(Writer& w, const std::vector<Attribute>& attributes, bool keep_metadata = true) {
  auto kept = [&](const Attribute& a) { return keep_metadata || a.key != "metadata"; };
  w.VarInt(static_cast<uint64_t>(std::count_if(attributes.begin(), attributes.end(), kept)));
  for (const Attribute& a : attributes) {
    if (!kept(a)) continue;
    w.String(a.key);
    w.String(a.value);
  }
}

// Index + 1 of `p` in `index`, or 0 for null (and for a pointer the module
// does not hold, which a verified module never has).
template <typename T>
uint64_t Ref(const std::unordered_map<const T*, uint64_t>& index, const T* p) {
  if (!p) return 0;
  auto it = index.find(p);
  return it == index.end() ? 0 : it->second + 1;
}

class ModuleReader {
 public:
  ModuleReader(std::string_view bytes, const std::string& file)
      : file_(file), r_({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 0}, &file_) {}

  StatusOr<std::unique_ptr<Module>> Read() {
    bytecode::Bytes magic;
    ANVIL_RETURN_IF_ERROR(r_.ReadBytes(sizeof kMagic, magic, "bytes of the binary module's magic"));
    if (std::memcmp(magic.data, kMagic, sizeof kMagic) != 0) {
      return r_.ErrorAtOffset(0, "not a binary module (no ANVILHLO magic)");
    }
    uint8_t version = 0;
    ANVIL_RETURN_IF_ERROR(r_.ReadByte(version, "the binary module's version"));
    if (version != kVersion) {
      return r_.ErrorAtOffset(sizeof kMagic, "binary module version " + std::to_string(version) +
                                                 ", this build reads version " + std::to_string(kVersion));
    }
    auto module = std::make_unique<Module>();
    ANVIL_RETURN_IF_ERROR(ReadString(module->name, "the module's name"));
    ANVIL_RETURN_IF_ERROR(ReadString(module->source_file, "the module's source file"));
    ANVIL_RETURN_IF_ERROR(ReadAttributes(module->attributes));
    uint64_t count = 0;
    ANVIL_RETURN_IF_ERROR(r_.ReadCount(count, "the count of computations"));
    module->computations.reserve(count);
    for (uint64_t c = 0; c < count; ++c) module->computations.push_back(std::make_unique<Computation>());
    for (auto& computation : module->computations) {
      ANVIL_RETURN_IF_ERROR(ReadComputation(*module, *computation));
    }
    ANVIL_RETURN_IF_ERROR(ReadPointer(module->entry, module->computations, "the entry computation"));
    if (!r_.AtEnd()) return r_.Error(std::to_string(r_.remaining()) + " bytes after the module's end");
    return module;
  }

 private:
  Status ReadString(std::string& out, std::string_view what) {
    uint64_t size = 0;
    // `what` is only read on an error: nothing is built on the way.
    ANVIL_RETURN_IF_ERROR(r_.ReadCount(size, what));
    if (size == 0) {  // most: a layout's tail, an async spelling
      out.clear();
      return OkStatus();
    }
    bytecode::Bytes b;
    ANVIL_RETURN_IF_ERROR(r_.ReadBytes(size, b, what));
    out.assign(reinterpret_cast<const char*>(b.data), b.size);
    return OkStatus();
  }

  Status ReadInt(int64_t& out, std::string_view what) {
    uint64_t v = 0;
    const size_t at = r_.offset();
    ANVIL_RETURN_IF_ERROR(r_.ReadVarInt(v, what));
    if (v > static_cast<uint64_t>(INT32_MAX)) return r_.ErrorAtOffset(at, std::string(what) + " is out of range");
    out = static_cast<int64_t>(v);
    return OkStatus();
  }

  // An index + 1 below `count` + 1 (0 is null).
  Status ReadRef(uint64_t& out, uint64_t count, std::string_view what) {
    const size_t at = r_.offset();
    ANVIL_RETURN_IF_ERROR(r_.ReadVarInt(out, what));
    if (out > count) {
      return r_.ErrorAtOffset(at, std::string(what) + " is number " + std::to_string(out) + " of " +
                                      std::to_string(count));
    }
    return OkStatus();
  }

  // A reference into `pool` (ReadRef), resolved: null for 0.
  template <typename T>
  Status ReadPointer(T*& out, const std::vector<std::unique_ptr<T>>& pool, std::string_view what) {
    uint64_t ref = 0;
    ANVIL_RETURN_IF_ERROR(ReadRef(ref, pool.size(), what));
    out = ref ? pool[ref - 1].get() : nullptr;
    return OkStatus();
  }

  // A count, then that many references into `pool`.
  template <typename T>
  Status ReadPointers(std::vector<T*>& out, const std::vector<std::unique_ptr<T>>& pool, std::string_view count_what,
                      std::string_view what) {
    uint64_t count = 0;
    ANVIL_RETURN_IF_ERROR(r_.ReadCount(count, count_what));
    out.resize(count);
    for (T*& p : out) ANVIL_RETURN_IF_ERROR(ReadPointer(p, pool, what));
    return OkStatus();
  }

  Status ReadAttributes(std::vector<Attribute>& out) {
    uint64_t count = 0;
    ANVIL_RETURN_IF_ERROR(r_.ReadCount(count, "the count of attributes", 2));
    out.resize(count);
    for (Attribute& a : out) {
      ANVIL_RETURN_IF_ERROR(ReadString(a.key, "an attribute's key"));
      ANVIL_RETURN_IF_ERROR(ReadString(a.value, "an attribute's value"));
    }
    return OkStatus();
  }

  Status ReadShape(Shape& out, int depth = 0) {
    if (depth > kMaxNesting) return r_.Error("shapes nest deeper than " + std::to_string(kMaxNesting));
    const size_t at = r_.offset();
    uint8_t tuple = 0;
    ANVIL_RETURN_IF_ERROR(r_.ReadByte(tuple, "a shape's kind"));
    if (tuple > 1) return r_.ErrorAtOffset(at, "a shape's kind is " + std::to_string(tuple));
    if (tuple) {
      uint64_t count = 0;
      ANVIL_RETURN_IF_ERROR(r_.ReadCount(count, "the count of a tuple's elements"));
      std::vector<Shape> elements(count);
      for (Shape& e : elements) ANVIL_RETURN_IF_ERROR(ReadShape(e, depth + 1));
      out = Shape::Tuple(std::move(elements));
      return OkStatus();
    }
    uint64_t type = 0;
    ANVIL_RETURN_IF_ERROR(r_.ReadVarInt(type, "an element type"));
    if (type > static_cast<uint64_t>(ElementType::kOpaque)) {
      return r_.ErrorAtOffset(at + 1, "element type " + std::to_string(type) + " does not exist");
    }
    uint64_t rank = 0;
    ANVIL_RETURN_IF_ERROR(r_.ReadCount(rank, "a shape's rank"));
    std::vector<int64_t> dims(rank);
    for (int64_t& d : dims) {
      uint64_t v = 0;
      ANVIL_RETURN_IF_ERROR(r_.ReadVarInt(v, "a dimension"));
      if (v > static_cast<uint64_t>(INT64_MAX)) return r_.Error("a dimension is out of range");
      d = static_cast<int64_t>(v);
    }
    uint64_t dynamic = 0;
    const size_t dynamic_at = r_.offset();
    ANVIL_RETURN_IF_ERROR(r_.ReadCount(dynamic, "the count of dynamic-dimension flags"));
    if (dynamic != 0 && dynamic != rank) {
      return r_.ErrorAtOffset(dynamic_at, std::to_string(dynamic) + " dynamic-dimension flags for rank " +
                                              std::to_string(rank));
    }
    std::vector<bool> dynamic_dims(dynamic);
    for (uint64_t d = 0; d < dynamic; ++d) {
      uint8_t flag = 0;
      ANVIL_RETURN_IF_ERROR(r_.ReadByte(flag, "a dynamic-dimension flag"));
      dynamic_dims[d] = flag != 0;
    }
    uint64_t layout_rank = 0;
    ANVIL_RETURN_IF_ERROR(r_.ReadCount(layout_rank, "a layout's rank"));
    Layout layout;
    layout.minor_to_major.resize(layout_rank);
    for (int64_t& d : layout.minor_to_major) ANVIL_RETURN_IF_ERROR(r_.ReadSignedVarInt(d, "a layout dimension"));
    ANVIL_RETURN_IF_ERROR(ReadString(layout.tail, "a layout's tail"));
    if (Status s = CheckArraySize(static_cast<ElementType>(type), dims); !s.ok()) return r_.ErrorAtOffset(at, s.message());
    // Built once, in place, with its stored layout (no default layout to
    // replace).
    if (type == 0 && rank == 0) {
      out = Shape();
      out.mutable_layout() = std::move(layout);
    } else {
      out = Shape(static_cast<ElementType>(type), std::move(dims), std::move(layout));
    }
    for (uint64_t d = 0; d < dynamic; ++d) {
      if (dynamic_dims[d]) out.SetDynamicDim(static_cast<int>(d), true);
    }
    return OkStatus();
  }

  Status ReadLiteral(Literal& out, int depth = 0) {
    if (depth > kMaxNesting) return r_.Error("literals nest deeper than " + std::to_string(kMaxNesting));
    Shape shape;
    ANVIL_RETURN_IF_ERROR(ReadShape(shape, depth));
    const size_t at = r_.offset();
    uint8_t kind = 0;
    ANVIL_RETURN_IF_ERROR(r_.ReadByte(kind, "a literal's kind"));
    switch (static_cast<LiteralKind>(kind)) {
      case LiteralKind::kElided:
        out = Literal::Elided(std::move(shape));
        return OkStatus();
      case LiteralKind::kTuple: {
        if (!shape.IsTuple()) return r_.ErrorAtOffset(at, "a tuple literal of an array shape");
        uint64_t count = 0;
        ANVIL_RETURN_IF_ERROR(r_.ReadCount(count, "the count of a tuple literal's elements"));
        if (count != shape.tuple_elements().size()) {
          return r_.ErrorAtOffset(at, "a tuple literal of " + std::to_string(count) + " elements for a shape of " +
                                          std::to_string(shape.tuple_elements().size()));
        }
        Literal tuple(std::move(shape));
        for (Literal& e : tuple.mutable_tuple_elements()) ANVIL_RETURN_IF_ERROR(ReadLiteral(e, depth + 1));
        out = std::move(tuple);
        return OkStatus();
      }
      case LiteralKind::kSplat:
      case LiteralKind::kDense: {
        if (shape.IsTuple()) return r_.ErrorAtOffset(at, "an array literal of a tuple shape");
        const bool splat = static_cast<LiteralKind>(kind) == LiteralKind::kSplat;
        const uint64_t expected = !shape.IsArray() ? 0
                                  : splat         ? static_cast<uint64_t>(Info(shape.element_type()).byte_size)
                                                  : static_cast<uint64_t>(shape.ByteSize());
        uint64_t size = 0;
        const size_t size_at = r_.offset();
        ANVIL_RETURN_IF_ERROR(r_.ReadCount(size, "the byte size of a literal"));
        if (size != expected) {
          return r_.ErrorAtOffset(size_at, "a literal of " + shape.ToString() + " holds " + std::to_string(size) +
                                               " bytes, not " + std::to_string(expected));
        }
        bytecode::Bytes data;
        ANVIL_RETURN_IF_ERROR(r_.ReadBytes(size, data, "bytes of a literal"));
        const int64_t full_size = shape.IsArray() ? shape.ByteSize() : 0;
        // The text parsers' budget: a splat must not expand past it either.
        if (full_size > literal_bytes_left_) {
          return r_.ErrorAtOffset(at, "constant of " + shape.ToString() + " is too large: the constants of a module may hold " +
                                          std::to_string(kMaxLiteralBytes >> 20) + " MiB together");
        }
        literal_bytes_left_ -= full_size;
        try {
          Literal literal(std::move(shape));
          if (size) std::memcpy(literal.mutable_data().data(), data.data, size);
          if (splat) literal.BroadcastFirstElement();
          out = std::move(literal);
        } catch (const std::bad_alloc&) {
          return ResourceExhausted(bytecode::OffsetPrefix(file_, at) + "cannot allocate a literal of " +
                                   std::to_string(full_size) + " bytes");
        }
        return OkStatus();
      }
    }
    return r_.ErrorAtOffset(at, "a literal's kind is " + std::to_string(kind));
  }

  Status ReadComputation(Module& module, Computation& c) {
    ANVIL_RETURN_IF_ERROR(ReadString(c.name, "a computation's name"));
    ANVIL_RETURN_IF_ERROR(ReadAttributes(c.attributes));
    uint64_t count = 0;
    ANVIL_RETURN_IF_ERROR(r_.ReadCount(count, "the count of a computation's instructions"));
    c.instructions.reserve(count);
    for (uint64_t k = 0; k < count; ++k) c.instructions.push_back(std::make_unique<Instruction>());
    for (auto& owned : c.instructions) {
      Instruction& i = *owned;
      ANVIL_RETURN_IF_ERROR(ReadString(i.name, "an instruction's name"));
      uint64_t opcode = 0;
      const size_t opcode_at = r_.offset();
      ANVIL_RETURN_IF_ERROR(r_.ReadVarInt(opcode, "an opcode"));
      if (opcode >= kOpcodeCount) return r_.ErrorAtOffset(opcode_at, "opcode " + std::to_string(opcode) + " does not exist");
      i.opcode = static_cast<Opcode>(opcode);
      ANVIL_RETURN_IF_ERROR(ReadString(i.async_spelling, "an async spelling"));
      ANVIL_RETURN_IF_ERROR(ReadShape(i.shape));
      ANVIL_RETURN_IF_ERROR(ReadPointers(i.operands, c.instructions, "the count of an instruction's operands", "an operand"));
      ANVIL_RETURN_IF_ERROR(ReadAttributes(i.attributes));
      ANVIL_RETURN_IF_ERROR(
          ReadPointers(i.called_computations, module.computations, "the count of called computations", "a called computation"));
      uint8_t has_literal = 0;
      ANVIL_RETURN_IF_ERROR(r_.ReadByte(has_literal, "whether a literal follows"));
      if (has_literal) {
        i.literal.emplace();
        ANVIL_RETURN_IF_ERROR(ReadLiteral(*i.literal));
      }
      int64_t parameter = 0, line = 0, column = 0;
      ANVIL_RETURN_IF_ERROR(ReadInt(parameter, "a parameter number"));
      ANVIL_RETURN_IF_ERROR(ReadInt(line, "a line"));
      ANVIL_RETURN_IF_ERROR(ReadInt(column, "a column"));
      i.parameter_number = parameter - 1;
      i.line = static_cast<int>(line);
      i.column = static_cast<int>(column);
    }
    ANVIL_RETURN_IF_ERROR(ReadPointers(c.parameters, c.instructions, "the count of a computation's parameters", "a parameter"));
    ANVIL_RETURN_IF_ERROR(ReadPointer(c.root, c.instructions, "a computation's root"));
    return OkStatus();
  }

  const std::string file_;
  bytecode::Reader r_;
  int64_t literal_bytes_left_ = kMaxLiteralBytes;
};

}  // namespace

std::string WriteBinaryModule(const Module& module, const BinaryModuleOptions& options) {
  Writer w;
  w.Raw(kMagic, sizeof kMagic);
  w.Byte(kVersion);
  w.String(module.name);
  w.String(module.source_file);
  WriteAttributes(w, module.attributes);
  std::unordered_map<const Computation*, uint64_t> computations;
  for (size_t c = 0; c < module.computations.size(); ++c) computations[module.computations[c].get()] = c;
  w.VarInt(module.computations.size());
  for (const auto& c : module.computations) {
    w.String(c->name);
    WriteAttributes(w, c->attributes);
    std::unordered_map<const Instruction*, uint64_t> instructions;
    for (size_t k = 0; k < c->instructions.size(); ++k) instructions[c->instructions[k].get()] = k;
    w.VarInt(c->instructions.size());
    for (const auto& i : c->instructions) {
      w.String(i->name);
      w.VarInt(static_cast<uint64_t>(i->opcode));
      w.String(i->async_spelling);
      WriteShape(w, i->shape);
      w.VarInt(i->operands.size());
      for (const Instruction* o : i->operands) w.VarInt(Ref(instructions, o));
      WriteAttributes(w, i->attributes, options.keep_metadata);
      w.VarInt(i->called_computations.size());
      for (const Computation* callee : i->called_computations) w.VarInt(Ref(computations, callee));
      w.Byte(i->literal ? 1 : 0);
      if (i->literal) WriteLiteral(w, *i->literal);
      w.VarInt(static_cast<uint64_t>(i->parameter_number + 1));
      w.VarInt(static_cast<uint64_t>(i->line < 0 ? 0 : i->line));
      w.VarInt(static_cast<uint64_t>(i->column < 0 ? 0 : i->column));
    }
    w.VarInt(c->parameters.size());
    for (const Instruction* p : c->parameters) w.VarInt(Ref(instructions, p));
    w.VarInt(Ref(instructions, c->root));
  }
  w.VarInt(Ref(computations, module.entry));
  return w.Take();
}

StatusOr<std::unique_ptr<Module>> ReadBinaryModule(std::string_view bytes, const std::string& file) {
  return ModuleReader(bytes, file).Read();
}

bool LooksLikeBinaryModule(std::string_view bytes) {
  return bytes.size() >= sizeof kMagic && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0;
}

}  // namespace anvil::hlo
