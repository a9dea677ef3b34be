// The codes follow StableHLO's VhloBytecode.cpp (attribute and type codes,
// enum values from VhloEnums.td) and MLIR's BuiltinDialectBytecode.td. Each
// attribute becomes the Attr the text parser makes of the same StableHLO
// attribute: enums become words (`EQ`, `DEFAULT`), tensors dense literals,
// strings and numbers the plain kinds; VHLO's flattened dimension numbers are
// regrouped per op in vhlo_ops.cc.
#include "hlo/vhlo_attributes.h"

#include <cstdlib>
#include <cstring>
#include <limits>

#include "hlo/constant_folding.h"

namespace anvil::hlo::vhlo {
namespace {

using bytecode::Reader;
using mlir::Attr;

constexpr int kMaxNesting = 64;
constexpr int64_t kDynamicSize = std::numeric_limits<int64_t>::min();

const char* kComparisonDirections[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
const char* kComparisonTypes[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
const char* kFftTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
const char* kPrecisions[] = {"DEFAULT", "HIGH", "HIGHEST"};
const char* kRngAlgorithms[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
const char* kRngDistributions[] = {nullptr, "UNIFORM", "NORMAL"};
const char* kTransposes[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
const char* kResultAccuracyModes[] = {"DEFAULT", "HIGHEST", "TOLERANCE"};

Attr Word(std::string s) {
  Attr a;
  a.kind = Attr::Kind::kWord;
  a.s = std::move(s);
  return a;
}

Attr Opaque(std::string name, std::vector<mlir::NamedAttr> entries = {}) {
  Attr a;
  a.kind = Attr::Kind::kOpaque;
  a.s = std::move(name);
  a.entries = std::move(entries);
  for (size_t i = 0; i < a.entries.size(); ++i) {
    if (i) a.raw += ", ";
    a.raw += a.entries[i].first + " = ...";
  }
  return a;
}

Attr IntAttr(int64_t v) {
  Attr a;
  a.kind = Attr::Kind::kInt;
  a.i = v;
  a.f = static_cast<double>(v);
  return a;
}

Attr IntList(const std::vector<int64_t>& values) {
  Attr a;
  a.kind = Attr::Kind::kArray;
  for (int64_t v : values) a.list.push_back(IntAttr(v));
  return a;
}

Type Element(ElementType t) {
  Type type;
  type.kind = Type::Kind::kElement;
  type.element = t;
  return type;
}

Type Unsupported(std::string why) {
  Type type;
  type.unsupported = std::move(why);
  return type;
}

// Bits a float of `t` takes in the bytecode (APFloat's size in bits).
int FloatBits(ElementType t) {
  switch (t) {
    case ElementType::kF4E2M1FN: return 4;
    case ElementType::kF6E2M3FN:
    case ElementType::kF6E3M2FN: return 6;
    case ElementType::kBF16:
    case ElementType::kF16: return 16;
    case ElementType::kF32: return 32;
    case ElementType::kF64: return 64;
    default: return 8;
  }
}

double FloatValue(ElementType t, uint64_t bits) {
  if (t == ElementType::kF64) {
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
  }
  if (t == ElementType::kF32) {
    uint32_t b = static_cast<uint32_t>(bits);
    float f;
    memcpy(&f, &b, sizeof(f));
    return f;
  }
  return DecodeFloat(*Info(t).float_format, static_cast<uint32_t>(bits));
}

}  // namespace

Decoder::Decoder(const bytecode::File& file, const std::string* name)
    : file_(file), name_(name), attrs_(file.attributes.size()), types_(file.types.size()) {}

StatusOr<Shape> Decoder::ValueShape(const Type& type) {
  if (!type.unsupported.empty()) return InvalidArgument(type.unsupported);
  switch (type.kind) {
    case Type::Kind::kShape: return type.shape;
    case Type::Kind::kElement: return Shape::Scalar(type.element);
    default: return InvalidArgument("a function type is not a value's type");
  }
}

StatusOr<const mlir::Attr*> Decoder::Attribute(uint64_t index) {
  if (index >= attrs_.size()) {
    return InvalidArgument(bytecode::OffsetPrefix(*name_, 0) + "attribute index " + std::to_string(index) +
                           " out of range");
  }
  AttrSlot& slot = attrs_[index];
  if (slot.attr) return slot.attr.get();
  const Reader at(file_.attributes[index].data, name_);
  if (slot.busy) return at.Error("attribute " + std::to_string(index) + " refers to itself");
  if (depth_ >= kMaxNesting) return at.Error("attributes nested more than " + std::to_string(kMaxNesting) + " deep");
  slot.busy = true;
  ++depth_;
  StatusOr<Attr> decoded = DecodeAttribute(index, slot);
  --depth_;
  slot.busy = false;
  if (!decoded.ok()) return decoded.status();
  slot.attr = std::make_unique<Attr>(std::move(decoded).value());
  return slot.attr.get();
}

StatusOr<const Type*> Decoder::TypeAt(uint64_t index) {
  if (index >= types_.size()) {
    return InvalidArgument(bytecode::OffsetPrefix(*name_, 0) + "type index " + std::to_string(index) + " out of range");
  }
  TypeSlot& slot = types_[index];
  if (slot.type) return slot.type.get();
  const Reader at(file_.types[index].data, name_);
  if (slot.busy) return at.Error("type " + std::to_string(index) + " refers to itself");
  if (depth_ >= kMaxNesting) return at.Error("types nested more than " + std::to_string(kMaxNesting) + " deep");
  slot.busy = true;
  ++depth_;
  StatusOr<Type> decoded = DecodeType(index);
  --depth_;
  slot.busy = false;
  if (!decoded.ok()) return decoded.status();
  slot.type = std::make_unique<Type>(std::move(decoded).value());
  return slot.type.get();
}

StatusOr<const Type*> Decoder::TypeOfAttribute(uint64_t index) {
  ANVIL_ASSIGN_OR_RETURN(const Attr* a, Attribute(index));
  const AttrSlot& slot = attrs_[index];
  if (a->kind != Attr::Kind::kType || !slot.type) {
    return Reader(file_.attributes[index].data, name_).Error("expected a type attribute");
  }
  return TypeAt(*slot.type);
}

StatusOr<std::vector<std::pair<std::string, uint64_t>>> Decoder::DictionaryIndices(uint64_t index) {
  ANVIL_ASSIGN_OR_RETURN(const Attr* dict, Attribute(index));
  const bytecode::AttrTypeEntry& entry = file_.attributes[index];
  Reader r(entry.data, name_);
  if (dict->kind != Attr::Kind::kDict || !entry.custom) return r.Error("expected a dictionary attribute");
  uint64_t code = 0, n = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadVarInt(code));
  ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "a dictionary size", 2));
  std::vector<std::pair<std::string, uint64_t>> out;
  for (uint64_t k = 0; k < n; ++k) {
    uint64_t key = 0, value = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadVarInt(key, "an attribute index"));
    ANVIL_RETURN_IF_ERROR(r.ReadVarInt(value, "an attribute index"));
    if (k >= dict->entries.size() || value >= attrs_.size()) return r.Error("a dictionary entry out of range");
    out.emplace_back(dict->entries[k].first, value);
  }
  return out;
}

StatusOr<Attr> Decoder::NestedAttribute(Reader& r) {
  uint64_t index = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadVarInt(index, "an attribute index"));
  if (index >= attrs_.size()) return r.Error("attribute index " + std::to_string(index) + " out of range");
  ANVIL_ASSIGN_OR_RETURN(const Attr* a, Attribute(index));
  return *a;
}

StatusOr<const Type*> Decoder::NestedType(Reader& r) {
  uint64_t index = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadVarInt(index, "a type index"));
  if (index >= types_.size()) return r.Error("type index " + std::to_string(index) + " out of range");
  return TypeAt(index);
}

StatusOr<std::vector<const Type*>> Decoder::NestedTypes(Reader& r) {
  uint64_t n = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "a type count"));
  std::vector<const Type*> out;
  for (uint64_t k = 0; k < n; ++k) {
    ANVIL_ASSIGN_OR_RETURN(const Type* t, NestedType(r));
    out.push_back(t);
  }
  return out;
}

StatusOr<std::string_view> Decoder::String(Reader& r) {
  uint64_t index = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadVarInt(index, "a string index"));
  if (index >= file_.strings.size()) return r.Error("string index " + std::to_string(index) + " out of range");
  return file_.strings[index];
}

StatusOr<std::vector<int64_t>> Decoder::SignedVarInts(Reader& r) {
  uint64_t n = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "a list length"));
  std::vector<int64_t> out;
  for (uint64_t k = 0; k < n; ++k) {
    int64_t v = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadSignedVarInt(v));
    out.push_back(v);
  }
  return out;
}

StatusOr<int64_t> Decoder::KnownWidthInt(Reader& r, int bits, bool is_signed) {
  uint64_t raw = 0;
  if (bits <= 8) {
    uint8_t b = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadByte(b, "an integer byte"));
    raw = b;
  } else if (bits <= 64) {
    int64_t v = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadSignedVarInt(v, "an integer"));
    memcpy(&raw, &v, sizeof(raw));
  } else {
    return r.Error("integers wider than 64 bits are not supported");
  }
  if (bits < 64) {
    const uint64_t mask = (uint64_t{1} << bits) - 1;
    raw &= mask;
    if (is_signed && (raw >> (bits - 1)) & 1) raw |= ~mask;
  }
  int64_t out;
  memcpy(&out, &raw, sizeof(out));
  return out;
}

StatusOr<Attr> Decoder::FloatAttr(Reader& r, const Type& type) {
  if (type.kind != Type::Kind::kElement || !IsFloat(type.element)) return r.Error("expected a float type");
  const int bits = FloatBits(type.element);
  ANVIL_ASSIGN_OR_RETURN(int64_t v, KnownWidthInt(r, bits, false));
  uint64_t raw;
  memcpy(&raw, &v, sizeof(raw));
  Attr a;
  a.kind = Attr::Kind::kFloat;
  // The value the text parser reads from the shortest decimal MLIR prints
  // for it, so that both front doors give the same double.
  const std::string text = FloatBitsToString(type.element, raw);
  const bool special = text.find("nan") != std::string::npos || text.find("inf") != std::string::npos;
  a.f = special ? FloatValue(type.element, raw) : std::strtod(text.c_str(), nullptr);
  a.type = Shape::Scalar(type.element);
  return a;
}

StatusOr<Attr> Decoder::IntegerAttr(Reader& r, const Type& type) {
  if (type.kind != Type::Kind::kElement) return r.Error("expected an integer type");
  int bits = 64;
  bool is_signed = true;
  if (!type.is_index) {
    if (!IsInteger(type.element) && !IsPred(type.element)) return r.Error("expected an integer type");
    bits = Info(type.element).bit_width;
    is_signed = !IsUnsignedInt(type.element) && !IsPred(type.element);
  }
  ANVIL_ASSIGN_OR_RETURN(int64_t v, KnownWidthInt(r, bits, is_signed));
  Attr a = IntAttr(v);
  if (IsPred(type.element)) {
    a.kind = Attr::Kind::kBool;
    a.b = v != 0;
  }
  a.type = Shape::Scalar(type.element);
  return a;
}

StatusOr<Attr> Decoder::DenseAttr(Reader& r, const Type& type, bool vhlo_bool_packing) {
  if (type.index_tensor) {
    Type as_s64 = type;
    as_s64.unsupported.clear();
    as_s64.index_tensor = false;
    return DenseAttr(r, as_s64, vhlo_bool_packing);
  }
  if (!type.unsupported.empty()) {
    // Data of a type Anvil does not run (an index tensor, say): only the
    // functions that use it are refused.
    uint64_t size = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadVarInt(size, "a blob size"));
    bytecode::Bytes ignored;
    ANVIL_RETURN_IF_ERROR(r.ReadBytes(size, ignored, "bytes of dense data"));
    Attr a = Opaque(kUnsupportedAttribute);
    a.raw = type.unsupported;
    return a;
  }
  if (type.kind != Type::Kind::kShape || !type.shape.IsArray()) return r.Error("expected a tensor type for dense data");
  const Shape& shape = type.shape;
  uint64_t size = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadVarInt(size, "a blob size"));
  bytecode::Bytes blob;
  ANVIL_RETURN_IF_ERROR(r.ReadBytes(size, blob, "bytes of dense data"));
  const int64_t count = shape.ElementCount();
  const int64_t element_bytes = Info(shape.element_type()).byte_size;
  const int64_t total = count * element_bytes;
  if (total > literal_bytes_left_) {
    return r.ErrorAtOffset(blob.offset, "dense data of " + shape.ToMlirString() + " exceeds the " +
                                            std::to_string(kMaxLiteralBytes) + " bytes constants may hold");
  }
  literal_bytes_left_ -= total;
  const bool is_bool = shape.element_type() == ElementType::kPred;
  // A splat of many elements stays its one value (Attr::splat): a constant
  // made of it becomes a broadcast of the value, and the array is built
  // only where a reader asks for it (DenseValue).
  const bool true_splat = is_bool && vhlo_bool_packing && blob.size == 1 && blob.data[0] == 0xFF;
  if (count > kMaxSplatConstantElements && (true_splat || static_cast<int64_t>(blob.size) == element_bytes)) {
    auto one = std::make_shared<Literal>(Shape::Scalar(shape.element_type()));
    std::memcpy(one->mutable_data().data(), blob.data, static_cast<size_t>(element_bytes));
    if (is_bool) one->mutable_data()[0] = one->mutable_data()[0] != 0;
    Attr a;
    a.kind = Attr::Kind::kDense;
    a.type = shape;
    a.literal = std::move(one);
    a.splat = true;
    a.body_pos = blob.offset;
    return a;
  }
  auto literal = std::make_shared<Literal>(shape);
  std::vector<uint8_t>& data = literal->mutable_data();
  if (is_bool && vhlo_bool_packing && blob.size == 1 && blob.data[0] == 0xFF) {
    // VHLO writes a true splat as 0xFF, apart from the packed form.
    for (auto& b : data) b = 1;
  } else if (is_bool && vhlo_bool_packing && static_cast<int64_t>(blob.size) == (count + 7) / 8 &&
             static_cast<int64_t>(blob.size) != count) {
    // Booleans packed eight to a byte, least significant bit first.
    for (int64_t i = 0; i < count; ++i) data[i] = (blob.data[i / 8] >> (i % 8)) & 1;
  } else if (static_cast<int64_t>(blob.size) == total) {
    if (total > 0) memcpy(data.data(), blob.data, blob.size);
  } else if (static_cast<int64_t>(blob.size) == element_bytes && count > 0) {
    // A splat: one element's bytes for all of them.
    memcpy(data.data(), blob.data, blob.size);
    literal->BroadcastFirstElement();
  } else {
    return r.ErrorAtOffset(blob.offset, "dense data of " + shape.ToMlirString() + " has " + std::to_string(blob.size) +
                                            " bytes, expected " + std::to_string(total));
  }
  if (is_bool) {
    for (auto& b : data) b = b != 0;
  }
  Attr a;
  a.kind = Attr::Kind::kDense;
  a.type = shape;
  a.literal = std::move(literal);
  a.body_pos = blob.offset;  // where the data is, for messages
  return a;
}

// A tuple of element types (VHLO's tuple_v1 and builtin's are encoded alike).
StatusOr<Type> Decoder::TupleType(Reader& r) {
  ANVIL_ASSIGN_OR_RETURN(auto elements, NestedTypes(r));
  std::vector<Shape> shapes;
  for (const Type* e : elements) {
    if (!e->unsupported.empty()) return Unsupported(e->unsupported);
    ANVIL_ASSIGN_OR_RETURN(Shape s, ValueShape(*e));
    shapes.push_back(std::move(s));
  }
  Type t;
  t.kind = Type::Kind::kShape;
  t.shape = Shape::Tuple(std::move(shapes));
  return t;
}

StatusOr<Type> Decoder::RankedTensor(Reader& r, bool with_encoding) {
  if (with_encoding) ANVIL_RETURN_IF_ERROR(NestedAttribute(r).status());
  ANVIL_ASSIGN_OR_RETURN(std::vector<int64_t> dims, SignedVarInts(r));
  ANVIL_ASSIGN_OR_RETURN(const Type* element, NestedType(r));
  if (!element->unsupported.empty()) return Unsupported(element->unsupported);
  for (int64_t d : dims) {
    if (d == kDynamicSize) return Unsupported("dynamic dimension '?' is not supported: Anvil runs static shapes");
    if (d < 0) return r.Error("negative dimension size " + std::to_string(d));
  }
  if (element->kind != Type::Kind::kElement) return r.Error("expected an element type in a tensor type");
  if (Status size = CheckArraySize(element->element, dims); !size.ok()) return r.Error(size.message());
  Type t;
  t.kind = Type::Kind::kShape;
  t.shape = Shape(element->element, std::move(dims));
  if (element->is_index) {
    t.index_tensor = true;
    t.unsupported = "index element types are not supported";
  }
  return t;
}

StatusOr<Attr> Decoder::DecodeAttribute(uint64_t index, AttrSlot& slot) {
  const bytecode::AttrTypeEntry& entry = file_.attributes[index];
  Reader r(entry.data, name_);
  const std::string_view dialect = file_.dialects[entry.dialect].name;
  if (!entry.custom) {
    // Assembly text: kept as an opaque attribute of its dialect.
    std::string_view text;
    ANVIL_RETURN_IF_ERROR(r.ReadNullTerminated(text));
    Attr a = Opaque(std::string(dialect));
    a.raw = std::string(text);
    return a;
  }
  if (dialect != "vhlo" && dialect != "builtin") {
    // Another dialect's own encoding (a sharding annotation, say): kept by
    // name only; the lowering reads no such attribute.
    return Opaque(std::string(dialect));
  }
  StatusOr<Attr> a = dialect == "vhlo" ? DecodeVhloAttribute(r, slot) : DecodeBuiltinAttribute(r, slot);
  if (!a.ok()) return a;
  if (!r.AtEnd()) return r.Error("unexpected bytes after an attribute");
  return a;
}

StatusOr<Attr> Decoder::DecodeVhloAttribute(Reader& r, AttrSlot& slot) {
  const size_t at = r.offset();
  uint64_t code = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadVarInt(code, "a VHLO attribute code"));
  auto enum_word = [&](const char* const* names, size_t n, const char* what) -> StatusOr<Attr> {
    uint64_t v = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadVarInt(v, what));
    if (v >= n || !names[v]) return r.Error(std::string("unknown ") + what + " " + std::to_string(v));
    return Word(names[v]);
  };
  auto list = [&]() -> StatusOr<std::vector<Attr>> {
    uint64_t n = 0;
    ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "a list length"));
    std::vector<Attr> out;
    for (uint64_t k = 0; k < n; ++k) {
      ANVIL_ASSIGN_OR_RETURN(Attr e, NestedAttribute(r));
      out.push_back(std::move(e));
    }
    return out;
  };
#define ANVIL_ENUM(table, what) enum_word(table, sizeof(table) / sizeof(table[0]), what)
  switch (code) {
    case 1: {  // array_v1
      Attr a;
      a.kind = Attr::Kind::kArray;
      ANVIL_ASSIGN_OR_RETURN(a.list, list());
      return a;
    }
    case 2: {  // bool_v1
      uint64_t v = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(v, "a boolean"));
      if (v > 1) return r.Error("boolean value " + std::to_string(v) + " is neither 0 nor 1");
      Attr a;
      a.kind = Attr::Kind::kBool;
      a.b = v == 1;
      a.i = static_cast<int64_t>(v);
      return a;
    }
    case 3: return ANVIL_ENUM(kComparisonDirections, "comparison direction");
    case 4: return ANVIL_ENUM(kComparisonTypes, "comparison type");
    case 5: {  // api_version_v1: the text form is a plain integer
      uint64_t v = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(v, "a custom call API version"));
      if (v > 4) return r.Error("unknown custom call API version " + std::to_string(v));
      return IntAttr(static_cast<int64_t>(v));
    }
    case 6: {  // dict_v1
      uint64_t n = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "a dictionary size", 2));
      Attr a;
      a.kind = Attr::Kind::kDict;
      for (uint64_t k = 0; k < n; ++k) {
        ANVIL_ASSIGN_OR_RETURN(Attr key, NestedAttribute(r));
        ANVIL_ASSIGN_OR_RETURN(Attr value, NestedAttribute(r));
        if (key.kind != Attr::Kind::kString) return r.Error("expected a string as a dictionary key");
        a.entries.push_back(mlir::NamedAttr{key.s, std::move(value)});
      }
      return a;
    }
    case 7: return ANVIL_ENUM(kFftTypes, "FFT type");
    case 8: {  // float_v1
      ANVIL_ASSIGN_OR_RETURN(const Type* type, NestedType(r));
      return FloatAttr(r, *type);
    }
    case 9: {  // integer_v1
      ANVIL_ASSIGN_OR_RETURN(const Type* type, NestedType(r));
      return IntegerAttr(r, *type);
    }
    case 10: {  // output_operand_alias_v1
      ANVIL_ASSIGN_OR_RETURN(auto outputs, SignedVarInts(r));
      int64_t operand = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadSignedVarInt(operand));
      ANVIL_ASSIGN_OR_RETURN(auto operand_indices, SignedVarInts(r));
      return Opaque("stablehlo.output_operand_alias", {{"output_tuple_indices", IntList(outputs)},
                                                       {"operand_index", IntAttr(operand)},
                                                       {"operand_tuple_indices", IntList(operand_indices)}});
    }
    case 11: return ANVIL_ENUM(kPrecisions, "precision");
    case 12: return ANVIL_ENUM(kRngAlgorithms, "RNG algorithm");
    case 13: return ANVIL_ENUM(kRngDistributions, "RNG distribution");
    case 14: {  // string_v1
      Attr a;
      a.kind = Attr::Kind::kString;
      ANVIL_ASSIGN_OR_RETURN(std::string_view s, String(r));
      a.s = std::string(s);
      return a;
    }
    case 15: {  // tensor_v1
      ANVIL_ASSIGN_OR_RETURN(const Type* type, NestedType(r));
      return DenseAttr(r, *type, /*vhlo_bool_packing=*/true);
    }
    case 16: return ANVIL_ENUM(kTransposes, "transpose kind");
    case 17: {  // type_v1
      uint64_t index = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(index, "a type index"));
      if (index >= types_.size()) return r.Error("type index " + std::to_string(index) + " out of range");
      ANVIL_ASSIGN_OR_RETURN(const Type* type, TypeAt(index));
      Attr a;
      a.kind = Attr::Kind::kType;
      if (type->kind == Type::Kind::kShape && type->unsupported.empty()) a.type = type->shape;
      slot.type = index;
      return a;
    }
    case 18: {  // type_extensions_v1: the bounds of bounded dynamic dimensions
      ANVIL_ASSIGN_OR_RETURN(auto bounds, SignedVarInts(r));
      return Opaque("stablehlo.bounds", {{"bounds", IntList(bounds)}});
    }
    case 19: return ANVIL_ENUM(kResultAccuracyModes, "result accuracy mode");
    case 20: {  // result_accuracy_v1
      ANVIL_ASSIGN_OR_RETURN(int64_t atol_bits, KnownWidthInt(r, 64, false));
      ANVIL_ASSIGN_OR_RETURN(int64_t rtol_bits, KnownWidthInt(r, 64, false));
      int64_t ulps = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadSignedVarInt(ulps));
      ANVIL_ASSIGN_OR_RETURN(Attr mode, NestedAttribute(r));
      Attr atol, rtol;
      atol.kind = rtol.kind = Attr::Kind::kFloat;
      memcpy(&atol.f, &atol_bits, sizeof(double));
      memcpy(&rtol.f, &rtol_bits, sizeof(double));
      return Opaque("stablehlo.result_accuracy",
                    {{"atol", atol}, {"rtol", rtol}, {"ulps", IntAttr(ulps)}, {"mode", std::move(mode)}});
    }
    case 21: {  // sub_axis_info_v1
      int64_t pre = 0, size = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadSignedVarInt(pre));
      ANVIL_RETURN_IF_ERROR(r.ReadSignedVarInt(size));
      return Opaque("sdy.sub_axis_info", {{"pre_size", IntAttr(pre)}, {"size", IntAttr(size)}});
    }
    case 22: {  // axis_ref_v1
      ANVIL_ASSIGN_OR_RETURN(Attr name, NestedAttribute(r));
      uint64_t has_sub = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(has_sub, "the sub-axis flag"));
      std::vector<mlir::NamedAttr> entries = {{"name", std::move(name)}};
      if (has_sub) {
        ANVIL_ASSIGN_OR_RETURN(Attr sub, NestedAttribute(r));
        entries.push_back({"sub_axis_info", std::move(sub)});
      }
      return Opaque("sdy.axis_ref", std::move(entries));
    }
    case 23: {  // replica_group_mesh_axes_v1
      ANVIL_ASSIGN_OR_RETURN(Attr mesh, NestedAttribute(r));
      ANVIL_ASSIGN_OR_RETURN(Attr axes, NestedAttribute(r));
      return Opaque("stablehlo.replica_group_mesh_axes", {{"mesh", std::move(mesh)}, {"axes", std::move(axes)}});
    }
    case 24: {  // mesh_axis_v1
      ANVIL_ASSIGN_OR_RETURN(Attr name, NestedAttribute(r));
      int64_t size = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadSignedVarInt(size));
      return Opaque("sdy.mesh_axis", {{"name", std::move(name)}, {"size", IntAttr(size)}});
    }
    case 25: {  // mesh_v1
      ANVIL_ASSIGN_OR_RETURN(Attr axes, NestedAttribute(r));
      std::vector<mlir::NamedAttr> entries = {{"axes", std::move(axes)}};
      uint64_t device_ids = 0;
      bool present = false;
      ANVIL_RETURN_IF_ERROR(r.ReadVarIntWithFlag(device_ids, present, "an optional attribute"));
      if (present) {
        if (device_ids >= attrs_.size()) return r.Error("attribute index out of range");
        ANVIL_ASSIGN_OR_RETURN(const Attr* ids, Attribute(device_ids));
        entries.push_back({"device_ids", *ids});
      }
      return Opaque("sdy.mesh", std::move(entries));
    }
    default: return r.ErrorAtOffset(at, "unknown VHLO attribute code " + std::to_string(code));
  }
#undef ANVIL_ENUM
}

StatusOr<Attr> Decoder::DecodeBuiltinAttribute(Reader& r, AttrSlot& slot) {
  const size_t at = r.offset();
  uint64_t code = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadVarInt(code, "a builtin attribute code"));
  auto string_attr = [&]() -> StatusOr<std::string> {
    ANVIL_ASSIGN_OR_RETURN(Attr s, NestedAttribute(r));
    if (s.kind != Attr::Kind::kString) return r.Error("expected a string attribute");
    return s.s;
  };
  switch (code) {
    case 0: {  // ArrayAttr
      uint64_t n = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "an array length"));
      Attr a;
      a.kind = Attr::Kind::kArray;
      for (uint64_t k = 0; k < n; ++k) {
        ANVIL_ASSIGN_OR_RETURN(Attr e, NestedAttribute(r));
        a.list.push_back(std::move(e));
      }
      return a;
    }
    case 1: {  // DictionaryAttr
      uint64_t n = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "a dictionary size", 2));
      Attr a;
      a.kind = Attr::Kind::kDict;
      for (uint64_t k = 0; k < n; ++k) {
        ANVIL_ASSIGN_OR_RETURN(std::string key, string_attr());
        ANVIL_ASSIGN_OR_RETURN(Attr value, NestedAttribute(r));
        a.entries.push_back(mlir::NamedAttr{std::move(key), std::move(value)});
      }
      return a;
    }
    case 2:
    case 3: {  // StringAttr, with a type for code 3
      Attr a;
      a.kind = Attr::Kind::kString;
      ANVIL_ASSIGN_OR_RETURN(std::string_view s, String(r));
      a.s = std::string(s);
      if (code == 3) ANVIL_RETURN_IF_ERROR(NestedType(r).status());
      return a;
    }
    case 4:
    case 5: {  // FlatSymbolRefAttr, SymbolRefAttr (nested references joined with ::)
      Attr a;
      a.kind = Attr::Kind::kSymbol;
      ANVIL_ASSIGN_OR_RETURN(a.s, string_attr());
      if (code == 5) {
        uint64_t n = 0;
        ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "a symbol path length"));
        for (uint64_t k = 0; k < n; ++k) {
          ANVIL_ASSIGN_OR_RETURN(Attr nested, NestedAttribute(r));
          a.s += "::" + nested.s;
        }
      }
      return a;
    }
    case 6: {  // TypeAttr
      uint64_t index = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(index, "a type index"));
      if (index >= types_.size()) return r.Error("type index " + std::to_string(index) + " out of range");
      ANVIL_ASSIGN_OR_RETURN(const Type* type, TypeAt(index));
      Attr a;
      a.kind = Attr::Kind::kType;
      if (type->kind == Type::Kind::kShape && type->unsupported.empty()) a.type = type->shape;
      slot.type = index;
      return a;
    }
    case 7: return Attr{};  // UnitAttr
    case 8: {
      ANVIL_ASSIGN_OR_RETURN(const Type* type, NestedType(r));
      return IntegerAttr(r, *type);
    }
    case 9: {
      ANVIL_ASSIGN_OR_RETURN(const Type* type, NestedType(r));
      return FloatAttr(r, *type);
    }
    case 10: case 11: case 12: case 13: case 14: case 15: case 22: {
      // Locations: Anvil keeps none from bytecode. Their bytes are not
      // read; nothing refers into them.
      while (!r.AtEnd()) {
        uint8_t ignored;
        ANVIL_RETURN_IF_ERROR(r.ReadByte(ignored));
      }
      return Opaque("loc");
    }
    case 17: {  // DenseArrayAttr: element type, count, raw data
      ANVIL_ASSIGN_OR_RETURN(const Type* element, NestedType(r));
      uint64_t n = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(n, "a dense array size"));
      if (element->kind != Type::Kind::kElement || !element->unsupported.empty()) {
        return r.Error("expected a scalar element type for a dense array");
      }
      Type tensor;
      tensor.kind = Type::Kind::kShape;
      if (n > r.remaining()) return r.Error("dense array longer than the data left");
      tensor.shape = Shape(element->element, {static_cast<int64_t>(n)});
      ANVIL_ASSIGN_OR_RETURN(Attr dense, DenseAttr(r, tensor, false));
      // `array<i64: 1, 2>` reads as a list of numbers.
      Attr a;
      a.kind = Attr::Kind::kArray;
      a.type = Shape::Scalar(element->element);
      for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) {
        if (IsFloat(element->element)) {
          Attr e;
          e.kind = Attr::Kind::kFloat;
          e.f = dense.literal->GetDouble(dense.splat ? 0 : k);
          a.list.push_back(e);
        } else {
          a.list.push_back(IntAttr(dense.literal->GetInt(dense.splat ? 0 : k)));
        }
      }
      return a;
    }
    case 18: {  // DenseIntOrFPElementsAttr
      ANVIL_ASSIGN_OR_RETURN(const Type* type, NestedType(r));
      return DenseAttr(r, *type, false);
    }
    default: return r.ErrorAtOffset(at, "unsupported builtin attribute code " + std::to_string(code));
  }
}

StatusOr<Type> Decoder::DecodeType(uint64_t index) {
  const bytecode::AttrTypeEntry& entry = file_.types[index];
  Reader r(entry.data, name_);
  const std::string_view dialect = file_.dialects[entry.dialect].name;
  if (!entry.custom) {
    std::string_view text;
    ANVIL_RETURN_IF_ERROR(r.ReadNullTerminated(text));
    return Unsupported("type '" + std::string(text) + "' is not supported");
  }
  StatusOr<Type> t = dialect == "vhlo"      ? DecodeVhloType(r)
                     : dialect == "builtin" ? DecodeBuiltinType(r)
                                            : StatusOr<Type>(Unsupported("types of the dialect '" +
                                                                         std::string(dialect) + "' are not supported"));
  if (!t.ok()) return t;
  if (entry.custom && (dialect == "vhlo" || dialect == "builtin") && !r.AtEnd()) {
    return r.Error("unexpected bytes after a type");
  }
  return t;
}

StatusOr<Type> Decoder::DecodeVhloType(Reader& r) {
  const size_t at = r.offset();
  uint64_t code = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadVarInt(code, "a VHLO type code"));
  switch (code) {
    case 0: return Element(ElementType::kPred);
    case 1: {  // complex_v1
      ANVIL_ASSIGN_OR_RETURN(const Type* component, NestedType(r));
      const ElementType c =
          component->kind == Type::Kind::kElement ? ComplexOf(component->element) : ElementType::kInvalid;
      if (c == ElementType::kInvalid) return Unsupported("unsupported complex component type");
      return Element(c);
    }
    case 2: return Element(ElementType::kBF16);
    case 3: return Element(ElementType::kF16);
    case 4: return Element(ElementType::kF32);
    case 5: return Element(ElementType::kF64);
    case 6: return Element(ElementType::kF8E4M3FN);
    case 7: return Element(ElementType::kF8E5M2);
    case 8: {  // func_v1
      Type t;
      t.kind = Type::Kind::kFunction;
      ANVIL_ASSIGN_OR_RETURN(t.inputs, NestedTypes(r));
      ANVIL_ASSIGN_OR_RETURN(t.results, NestedTypes(r));
      return t;
    }
    case 9: {  // index_v1: a scalar index reads as s64, as in the text parser
      Type t = Element(ElementType::kS64);
      t.is_index = true;
      return t;
    }
    case 10: return Element(ElementType::kS4);
    case 11: return Element(ElementType::kS8);
    case 12: return Element(ElementType::kS16);
    case 13: return Element(ElementType::kS32);
    case 14: return Element(ElementType::kS64);
    case 15: return Element(ElementType::kU4);
    case 16: return Element(ElementType::kU8);
    case 17: return Element(ElementType::kU16);
    case 18: return Element(ElementType::kU32);
    case 19: return Element(ElementType::kU64);
    case 20: return RankedTensor(r, false);
    case 21: return RankedTensor(r, true);
    case 22: {
      Type t;
      t.kind = Type::Kind::kShape;
      t.shape = Shape::Token();
      return t;
    }
    case 23: return TupleType(r);  // tuple_v1
    case 24: {  // quant_v1: flags, storage, expressed, scale, zero point, min, max
      uint64_t flags = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(flags, "quantization flags"));
      ANVIL_RETURN_IF_ERROR(NestedType(r).status());
      ANVIL_RETURN_IF_ERROR(NestedType(r).status());
      ANVIL_RETURN_IF_ERROR(KnownWidthInt(r, 64, false).status());
      for (int k = 0; k < 3; ++k) {
        int64_t v = 0;
        ANVIL_RETURN_IF_ERROR(r.ReadSignedVarInt(v));
      }
      return Unsupported("quantized element types (!quant.uniform) are not supported");
    }
    case 25: {  // unranked_tensor_v1
      ANVIL_RETURN_IF_ERROR(NestedType(r).status());
      return Unsupported("unranked tensors are not supported: Anvil runs static shapes");
    }
    case 26: return Unsupported("!shape.witness types are not supported");
    case 27: return Element(ElementType::kF8E4M3FNUZ);
    case 28: return Element(ElementType::kF8E5M2FNUZ);
    case 29: return Element(ElementType::kF8E4M3B11FNUZ);
    case 30: {  // quant_per_axis_v1
      uint64_t flags = 0, dim = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(flags, "quantization flags"));
      ANVIL_RETURN_IF_ERROR(NestedType(r).status());
      ANVIL_RETURN_IF_ERROR(NestedType(r).status());
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(dim, "a quantized dimension"));
      int64_t v = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadSignedVarInt(v));
      ANVIL_RETURN_IF_ERROR(r.ReadSignedVarInt(v));
      uint64_t n = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "a scale count"));
      for (uint64_t k = 0; k < n; ++k) ANVIL_RETURN_IF_ERROR(KnownWidthInt(r, 64, false).status());
      ANVIL_RETURN_IF_ERROR(r.ReadCount(n, "a zero point count"));
      for (uint64_t k = 0; k < n; ++k) ANVIL_RETURN_IF_ERROR(r.ReadSignedVarInt(v));
      return Unsupported("quantized element types (!quant.uniform) are not supported");
    }
    case 31: return Element(ElementType::kS2);
    case 32: return Element(ElementType::kU2);
    case 33: return Unsupported("the none type is not supported");
    case 34: return Unsupported("element type tf32 is not supported");
    case 35: return Element(ElementType::kF8E4M3);
    case 36: return Element(ElementType::kF8E3M4);
    case 37: return Element(ElementType::kF4E2M1FN);
    case 38: return Element(ElementType::kF6E2M3FN);
    case 39: return Element(ElementType::kF6E3M2FN);
    case 40: return Element(ElementType::kF8E8M0FNU);
    case 41: {  // buffer_v1
      ANVIL_RETURN_IF_ERROR(SignedVarInts(r).status());
      ANVIL_RETURN_IF_ERROR(NestedType(r).status());
      return Unsupported("buffer types are not supported");
    }
    case 42: {  // future_v1
      ANVIL_RETURN_IF_ERROR(NestedTypes(r).status());
      return Unsupported("future types (async values) are not supported");
    }
    default: return r.ErrorAtOffset(at, "unknown VHLO type code " + std::to_string(code));
  }
}

StatusOr<Type> Decoder::DecodeBuiltinType(Reader& r) {
  const size_t at = r.offset();
  uint64_t code = 0;
  ANVIL_RETURN_IF_ERROR(r.ReadVarInt(code, "a builtin type code"));
  switch (code) {
    case 0: {  // IntegerType: width << 2 | signedness (0 signless, 1 signed, 2 unsigned)
      uint64_t v = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(v, "an integer width"));
      const uint64_t width = v >> 2;
      const bool is_unsigned = (v & 3) == 2;
      if (width == 1) return Element(ElementType::kPred);
      const char* names[] = {"s2", "s4", "s8", "s16", "s32", "s64"};
      const uint64_t widths[] = {2, 4, 8, 16, 32, 64};
      for (int k = 0; k < 6; ++k) {
        if (widths[k] != width) continue;
        std::string name = names[k];
        if (is_unsigned) name[0] = 'u';
        if (auto t = ElementTypeFromHloName(name)) return Element(*t);
      }
      return Unsupported("integer type of " + std::to_string(width) + " bits is not supported");
    }
    case 1: {
      Type t = Element(ElementType::kS64);
      t.is_index = true;
      return t;
    }
    case 2: {
      Type t;
      t.kind = Type::Kind::kFunction;
      ANVIL_ASSIGN_OR_RETURN(t.inputs, NestedTypes(r));
      ANVIL_ASSIGN_OR_RETURN(t.results, NestedTypes(r));
      return t;
    }
    case 3: return Element(ElementType::kBF16);
    case 4: return Element(ElementType::kF16);
    case 5: return Element(ElementType::kF32);
    case 6: return Element(ElementType::kF64);
    case 9: {
      ANVIL_ASSIGN_OR_RETURN(const Type* component, NestedType(r));
      const ElementType c =
          component->kind == Type::Kind::kElement ? ComplexOf(component->element) : ElementType::kInvalid;
      if (c == ElementType::kInvalid) return Unsupported("unsupported complex component type");
      return Element(c);
    }
    case 12: return Unsupported("the none type is not supported");
    case 13: return RankedTensor(r, false);
    case 14: return RankedTensor(r, true);
    case 15: return TupleType(r);  // TupleType
    case 18: {
      ANVIL_RETURN_IF_ERROR(NestedType(r).status());
      return Unsupported("unranked tensors are not supported: Anvil runs static shapes");
    }
    default: {
      // Other builtin types (memrefs, vectors, f80, ...) never describe a
      // StableHLO value; their bytes are not needed.
      while (!r.AtEnd()) {
        uint8_t ignored;
        ANVIL_RETURN_IF_ERROR(r.ReadByte(ignored));
      }
      (void)at;
      return Unsupported("builtin type code " + std::to_string(code) + " is not supported");
    }
  }
}

}  // namespace anvil::hlo::vhlo
