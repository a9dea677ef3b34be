// Front door 3: a VHLO portable artifact, read into the StableHLO syntax tree
// (bytecode_reader, vhlo_attributes, vhlo_ops) and lowered like text.
#include "hlo/bytecode_reader.h"
#include "hlo/stablehlo_lowering.h"
#include "hlo/stablehlo_parser.h"
#include "hlo/vhlo_ops.h"

namespace anvil::hlo {
namespace {

// Positions in a tree read from bytecode are byte offsets; dense values come
// decoded, so there is never text to parse.
class BytecodeSource : public mlir::SyntaxSource {
 public:
  explicit BytecodeSource(const std::string* file) : file_(file) {}
  Status ErrorAt(size_t pos, std::string_view message) const override {
    return InvalidArgument(bytecode::OffsetPrefix(*file_, pos) + std::string(message));
  }
  std::pair<int, int> LineColumn(size_t) const override { return {0, 0}; }
  StatusOr<Literal> DenseValue(const mlir::Attr& dense, const Shape& shape) override {
    if (!dense.literal) return ErrorAt(dense.body_pos, "a dense attribute without decoded values");
    const Shape& have = dense.splat && dense.type ? *dense.type : dense.literal->shape();
    if (have.element_type() != shape.element_type() || have.dims() != shape.dims()) {
      return ErrorAt(dense.body_pos,
                     "dense value of " + have.ToMlirString() + " where " + shape.ToMlirString() + " is expected");
    }
    const int64_t bytes = shape.ByteSize();
    if (bytes > literal_bytes_left_) {
      return ErrorAt(dense.body_pos, "the program's constants exceed " + std::to_string(kMaxLiteralBytes) + " bytes");
    }
    literal_bytes_left_ -= bytes;
    if (!dense.splat) return *dense.literal;
    Literal all(shape);
    std::copy(dense.literal->data().begin(), dense.literal->data().end(), all.mutable_data().begin());
    all.BroadcastFirstElement();
    return all;
  }
  std::optional<Literal> DenseSplat(const mlir::Attr& dense, const Shape& shape) override {
    if (!dense.splat || !dense.literal || !dense.type || dense.type->element_type() != shape.element_type() ||
        dense.type->dims() != shape.dims()) {
      return std::nullopt;
    }
    return *dense.literal;
  }

 private:
  const std::string* file_;
  int64_t literal_bytes_left_ = kMaxLiteralBytes;
};

StatusOr<mlir::ModuleSyntax> ReadSyntax(std::string_view bytes, const std::string* file) {
  bytecode::Bytes all{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 0};
  ANVIL_ASSIGN_OR_RETURN(bytecode::File f, bytecode::ReadFile(all, file));
  return vhlo::ReadModule(f, file);
}

}  // namespace

StatusOr<std::vector<std::unique_ptr<Module>>> ParseStableHloBytecode(std::string_view bytes,
                                                                      const SourceInfo& source) {
  ANVIL_ASSIGN_OR_RETURN(mlir::ModuleSyntax syntax, ReadSyntax(bytes, &source.file));
  BytecodeSource src(&source.file);
  ANVIL_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, LowerModule(src, syntax, source.file));
  std::vector<std::unique_ptr<Module>> modules;
  modules.push_back(std::move(module));
  return modules;
}

StatusOr<std::vector<FunctionModule>> ParseStableHloBytecodeFunctions(std::string_view bytes,
                                                                      const SourceInfo& source) {
  ANVIL_ASSIGN_OR_RETURN(mlir::ModuleSyntax syntax, ReadSyntax(bytes, &source.file));
  BytecodeSource src(&source.file);
  return LowerFunctions(src, syntax, source.file);
}

}  // namespace anvil::hlo
