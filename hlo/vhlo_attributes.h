// Decodes the attribute and type entries of a VHLO portable artifact (VHLO's
// own binary encodings, the builtin dialect's, and the assembly-text
// fallback) into the syntax tree's Attr and into shapes, the forms the
// StableHLO text parser produces, so one lowering serves both. Internal to hlo/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hlo/bytecode_reader.h"
#include "hlo/mlir_syntax.h"

namespace anvil::hlo::vhlo {

// A decoded type. Types Anvil does not run (dynamic or unranked tensors,
// quantized or index elements, ...) decode fine but carry `unsupported`, so
// that only the functions using them are refused.
struct Type {
  enum class Kind { kElement, kShape, kFunction, kOther };
  Kind kind = Kind::kOther;
  ElementType element = ElementType::kInvalid;  // kElement
  bool is_index = false;                        // kElement: `index`, kept as s64
  Shape shape;                                  // kShape: tensor, tuple or token
  std::vector<const Type*> inputs, results;     // kFunction
  std::string unsupported;                      // why Anvil cannot run it; empty if it can
  // A tensor of index elements: unsupported as a value, but an attribute's
  // data of it reads as s64 (`shape`), as MLIR stores index data in 64 bits.
  bool index_tensor = false;
};

// The dialect name of an attribute whose data has a type Anvil does not run;
// its `raw` says why.
inline constexpr const char* kUnsupportedAttribute = "anvil.unsupported";

class Decoder {
 public:
  Decoder(const bytecode::File& file, const std::string* name);

  StatusOr<const mlir::Attr*> Attribute(uint64_t index);
  StatusOr<const Type*> TypeAt(uint64_t index);
  // The type a `#vhlo.type_v1` (or builtin type) attribute holds.
  StatusOr<const Type*> TypeOfAttribute(uint64_t index);
  // The key and value attribute index of each entry of a dictionary
  // attribute (VHLO's or builtin), for ops whose attributes predate
  // properties and live in their attribute dictionary.
  StatusOr<std::vector<std::pair<std::string, uint64_t>>> DictionaryIndices(uint64_t index);
  // The shape of a value's type, or the reason Anvil cannot run it.
  static StatusOr<Shape> ValueShape(const Type& type);

  const bytecode::File& file() const { return file_; }
  const std::string* name() const { return name_; }

 private:
  struct AttrSlot {
    std::unique_ptr<mlir::Attr> attr;
    std::optional<uint64_t> type;  // for type attributes
    bool busy = false;
  };
  struct TypeSlot {
    std::unique_ptr<Type> type;
    bool busy = false;
  };

  StatusOr<mlir::Attr> DecodeAttribute(uint64_t index, AttrSlot& slot);
  StatusOr<mlir::Attr> DecodeVhloAttribute(bytecode::Reader& r, AttrSlot& slot);
  StatusOr<mlir::Attr> DecodeBuiltinAttribute(bytecode::Reader& r, AttrSlot& slot);
  StatusOr<Type> DecodeType(uint64_t index);
  StatusOr<Type> DecodeVhloType(bytecode::Reader& r);
  StatusOr<Type> DecodeBuiltinType(bytecode::Reader& r);

  // Readers of nested references and of the shared pieces.
  StatusOr<mlir::Attr> NestedAttribute(bytecode::Reader& r);
  StatusOr<const Type*> NestedType(bytecode::Reader& r);
  StatusOr<std::vector<const Type*>> NestedTypes(bytecode::Reader& r);
  StatusOr<std::string_view> String(bytecode::Reader& r);
  // An integer of `bits` bits as the bytecode stores it (one byte up to 8
  // bits, else a signed varint), sign- or zero-extended.
  StatusOr<int64_t> KnownWidthInt(bytecode::Reader& r, int bits, bool is_signed);
  StatusOr<mlir::Attr> FloatAttr(bytecode::Reader& r, const Type& type);
  StatusOr<mlir::Attr> IntegerAttr(bytecode::Reader& r, const Type& type);
  StatusOr<mlir::Attr> DenseAttr(bytecode::Reader& r, const Type& type, bool vhlo_bool_packing);
  StatusOr<Type> RankedTensor(bytecode::Reader& r, bool with_encoding);
  StatusOr<Type> TupleType(bytecode::Reader& r);
  StatusOr<std::vector<int64_t>> SignedVarInts(bytecode::Reader& r);

  const bytecode::File& file_;
  const std::string* name_;
  std::vector<AttrSlot> attrs_;
  std::vector<TypeSlot> types_;
  int depth_ = 0;
  int64_t literal_bytes_left_ = kMaxLiteralBytes;
};

}  // namespace anvil::hlo::vhlo
