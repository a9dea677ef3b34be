#include "hlo/hlo_parser.h"

#include <cctype>
#include <map>
#include <tuple>
#include <unordered_map>

#include "hlo/parse_common.h"
#include "hlo/verifier.h"

namespace anvil::hlo {
namespace {

// Bounds that keep element counts in int64 and constants in memory.
constexpr int64_t kMaxDimension = int64_t{1} << 40;

// An operand or computation reference read before its target may exist.
struct PendingOperand {
  std::string name;
  size_t position;
};

struct PendingInstruction {
  Instruction* instruction;
  std::vector<PendingOperand> operands;
  size_t position;
  bool infer_shape = false;  // written without a shape: XLA infers it
};

class HloTextParser {
 public:
  HloTextParser(std::string_view text, const SourceInfo& source) : c_(text, source, /*allow_block_comments=*/true) {}

  StatusOr<std::unique_ptr<Module>> ParseModule();
  StatusOr<Shape> ParseShape();
  bool AtEnd() { return c_.AtEnd(); }
  Status Expected(std::string_view what) { return c_.Expected(what); }

 private:
  Status ParseComputation(Module& module, bool* is_entry);
  Status ParseInstruction(Computation& computation, std::vector<PendingInstruction>& pending, bool* is_root);
  // Opcode, operands and attributes; `inline_operand` for an instruction
  // written inside another's operand list, which takes no attributes.
  Status ParseInstructionBody(Computation& computation, std::vector<PendingInstruction>& pending,
                              std::unique_ptr<Instruction> instruction, size_t at, bool infer_shape,
                              bool inline_operand);
  Status ParseOperands(Computation& computation, std::vector<PendingInstruction>& pending,
                       PendingInstruction& self);
  bool ShapeFollows();
  Status ParseLiteral(Instruction& instruction);
  Status ParseArrayLiteral(Literal& literal);
  Status ParseAttributes(std::vector<Attribute>& attributes);
  StatusOr<std::string> ReadRawValue();
  StatusOr<std::string> ReadName();
  Status ParseLayout(Shape& shape);
  bool LayoutFollows();
  Status ResolveComputationReferences(Module& module);
  // Fills `called_computations` from the attributes when every named
  // computation exists already; false (and `missing` says which) otherwise.
  bool ResolveCallees(const Module& module, Instruction& instruction, std::string* missing);
  std::vector<Instruction*> unresolved_;

  TextCursor c_;
  int64_t literal_bytes_left_ = kMaxLiteralBytes;
  int inline_counter_ = 0;
  // The current computation's instructions by name.
  std::unordered_map<std::string, Instruction*> names_;
  // Where each instruction's attributes start, for errors found at the end.
  std::unordered_map<Instruction*, size_t> instruction_positions_;
};

StatusOr<std::string> HloTextParser::ReadName() {
  c_.SkipBlanks();
  c_.TryConsume("%");
  std::string_view name = c_.ReadIdentifier();
  if (name.empty()) return c_.Expected("a name");
  return std::string(name);
}

bool HloTextParser::LayoutFollows() {
  // `{` opens a layout only when what it encloses reads like one; after a
  // signature's scalar result it opens the computation body instead.
  size_t save = c_.pos();
  c_.SkipBlanks();
  std::string_view t = c_.text();
  size_t p = c_.pos();
  c_.set_pos(save);
  if (p >= t.size() || t[p] != '{') return false;
  for (size_t i = p + 1; i < t.size(); ++i) {
    char ch = t[i];
    if (ch == '}' || ch == ':') return true;
    if (!(std::isdigit(static_cast<unsigned char>(ch)) || ch == ',' || ch == ' ')) return false;
  }
  return false;
}

Status HloTextParser::ParseLayout(Shape& shape) {
  ANVIL_RETURN_IF_ERROR(c_.Expect("{"));
  Layout layout;
  while (c_.Peek() != '}' && c_.Peek() != ':') {
    ANVIL_ASSIGN_OR_RETURN(int64_t d, c_.ReadInt());
    layout.minor_to_major.push_back(d);
    if (!c_.TryConsume(",")) break;
  }
  if (c_.TryConsume(":")) {
    // The tail runs to the matching brace.
    size_t start = c_.pos();
    int depth = 0;
    std::string_view t = c_.text();
    size_t p = start;
    for (; p < t.size(); ++p) {
      if (t[p] == '(' || t[p] == '{') ++depth;
      if (t[p] == ')' || t[p] == '}') {
        if (depth == 0) break;
        --depth;
      }
    }
    layout.tail = std::string(t.substr(start, p - start));
    c_.set_pos(p);
  }
  ANVIL_RETURN_IF_ERROR(c_.Expect("}"));
  if (!layout.minor_to_major.empty() && static_cast<int>(layout.minor_to_major.size()) != shape.rank()) {
    return c_.Error("layout has " + std::to_string(layout.minor_to_major.size()) + " dimensions but the shape has " +
                    std::to_string(shape.rank()));
  }
  if (layout.minor_to_major.empty() && shape.rank() > 0) {
    Layout filled = shape.layout();
    filled.tail = layout.tail;
    layout = filled;
  }
  shape.mutable_layout() = layout;
  return OkStatus();
}

StatusOr<Shape> HloTextParser::ParseShape() {
  NestingGuard nesting(c_);
  ANVIL_RETURN_IF_ERROR(nesting.Check());
  c_.SkipBlanks();
  if (c_.TryConsume("(")) {
    std::vector<Shape> elements;
    if (!c_.TryConsume(")")) {
      while (true) {
        ANVIL_ASSIGN_OR_RETURN(Shape e, ParseShape());
        elements.push_back(std::move(e));
        if (c_.TryConsume(")")) break;
        ANVIL_RETURN_IF_ERROR(c_.Expect(","));
      }
    }
    return Shape::Tuple(std::move(elements));
  }
  size_t at = c_.pos();
  std::string_view type_name = c_.ReadIdentifier(false);
  auto type = ElementTypeFromHloName(type_name);
  if (!type) {
    c_.set_pos(at);
    return c_.Expected("a shape");
  }
  ANVIL_RETURN_IF_ERROR(c_.Expect("["));
  std::vector<int64_t> dims;
  std::vector<int> dynamic;
  if (!c_.TryConsume("]")) {
    while (true) {
      if (c_.TryConsume("<=")) {
        dynamic.push_back(static_cast<int>(dims.size()));
      } else if (c_.TryConsume("?")) {
        return c_.Error("unbounded dynamic dimension '?' is not supported: Anvil runs static shapes");
      }
      size_t dim_at = c_.pos();
      ANVIL_ASSIGN_OR_RETURN(int64_t d, c_.ReadInt());
      if (d < 0) return c_.ErrorAt(dim_at, "negative dimension size " + std::to_string(d));
      if (d > kMaxDimension) return c_.ErrorAt(dim_at, "dimension size " + std::to_string(d) + " is too large");
      dims.push_back(d);
      if (c_.TryConsume("]")) break;
      ANVIL_RETURN_IF_ERROR(c_.Expect(","));
    }
  }
  if (Status size = CheckArraySize(*type, dims); !size.ok()) return c_.ErrorAt(at, size.message());
  Shape shape(*type, std::move(dims));
  for (int d : dynamic) shape.SetDynamicDim(d, true);
  if (LayoutFollows()) ANVIL_RETURN_IF_ERROR(ParseLayout(shape));
  return shape;
}

StatusOr<std::string> HloTextParser::ReadRawValue() {
  // A value runs to a top-level comma or the end of the line; whitespace
  // outside strings is collapsed so equal values compare equal.
  c_.SkipBlanks();
  std::string_view t = c_.text();
  size_t p = c_.pos();
  size_t start = p;
  int depth = 0;
  std::string out;
  bool pending_space = false;
  while (p < t.size()) {
    char ch = t[p];
    if (ch == '"') {
      size_t q = p + 1;
      while (q < t.size() && t[q] != '"') q += (t[q] == '\\') ? 2 : 1;
      if (q >= t.size()) return c_.ErrorAt(p, "unterminated string");
      if (pending_space && !out.empty()) out += ' ';
      pending_space = false;
      out.append(t.substr(p, q + 1 - p));
      p = q + 1;
      continue;
    }
    if (ch == '/' && p + 1 < t.size() && (t[p + 1] == '/' || t[p + 1] == '*')) {
      if (t[p + 1] == '/') {
        if (depth == 0) break;
        while (p < t.size() && t[p] != '\n') ++p;
      } else {
        size_t end = t.find("*/", p + 2);
        p = end == std::string_view::npos ? t.size() : end + 2;
      }
      pending_space = true;
      continue;
    }
    if (depth == 0 && (ch == ',' || ch == '\n')) break;
    if (ch == '{' || ch == '(' || ch == '[') ++depth;
    if (ch == '}' || ch == ')' || ch == ']') {
      if (depth == 0) break;
      --depth;
    }
    if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') {
      pending_space = true;
      ++p;
      continue;
    }
    if (pending_space && !out.empty()) out += ' ';
    pending_space = false;
    out += ch;
    ++p;
  }
  if (depth != 0) return c_.ErrorAt(start, "unbalanced brackets in attribute value");
  if (out.empty()) return c_.ErrorAt(start, "expected an attribute value, found " + c_.DescribeHere());
  c_.set_pos(p);
  return out;
}

Status HloTextParser::ParseAttributes(std::vector<Attribute>& attributes) {
  while (c_.Peek() == ',') {
    c_.TryConsume(",");
    size_t at = c_.pos();
    c_.SkipBlanks();
    std::string_view key = c_.ReadIdentifier();
    if (key.empty()) return c_.Expected("an attribute name");
    ANVIL_RETURN_IF_ERROR(c_.Expect("="));
    ANVIL_ASSIGN_OR_RETURN(std::string value, ReadRawValue());
    for (const Attribute& a : attributes) {
      if (a.key == key) return c_.ErrorAt(at, "attribute '" + std::string(key) + "' given twice");
    }
    attributes.push_back({std::string(key), std::move(value)});
  }
  return OkStatus();
}

Status HloTextParser::ParseArrayLiteral(Literal& literal) {
  const Shape& shape = literal.shape();
  const int rank = shape.rank();
  const auto& dims = shape.dims();
  int64_t count = shape.ElementCount();
  if (rank == 0) {
    // A scalar may be written bare or inside one pair of braces.
    bool braced = c_.TryConsume("{");
    ANVIL_RETURN_IF_ERROR(ParseLiteralElement(c_, literal, 0));
    if (braced) ANVIL_RETURN_IF_ERROR(c_.Expect("}"));
    return OkStatus();
  }
  if (c_.Peek() != '{') {
    // XLA reads a lone scalar as that value in every element.
    if (count == 0) {
      Literal scratch(Shape(shape.element_type(), {}));
      return ParseLiteralElement(c_, scratch, 0);
    }
    ANVIL_RETURN_IF_ERROR(ParseLiteralElement(c_, literal, 0));
    literal.BroadcastFirstElement();
    return OkStatus();
  }
  // Nested braces, one level per dimension; check each level's length.
  std::vector<int64_t> seen(rank, 0);
  int64_t linear = 0;
  int depth = 0;
  size_t start = c_.pos();
  ANVIL_RETURN_IF_ERROR(c_.Expect("{"));
  depth = 1;
  // A `}` closes the current level, which must hold its dimension's count.
  auto close_level = [&]() -> Status {
    if (seen[depth - 1] != dims[depth - 1]) {
      return c_.Error("literal has " + std::to_string(seen[depth - 1]) + " elements in dimension " +
                      std::to_string(depth - 1) + " but the shape " + shape.ToString() + " needs " +
                      std::to_string(dims[depth - 1]));
    }
    --depth;
    if (depth > 0) {
      ++seen[depth - 1];
      if (!c_.TryConsume(",") && c_.Peek() != '}') return c_.Expected("',' or '}'");
    }
    return OkStatus();
  };
  while (depth > 0) {
    if (c_.TryConsume("}")) {
      ANVIL_RETURN_IF_ERROR(close_level());
      continue;
    }
    if (depth < rank) {
      ANVIL_RETURN_IF_ERROR(c_.Expect("{"));
      seen[depth] = 0;
      ++depth;
      continue;
    }
    // Innermost level: values.
    if (linear >= count || seen[depth - 1] >= dims[depth - 1]) {
      return c_.Error("literal has more elements than the shape " + shape.ToString() + " holds");
    }
    ANVIL_RETURN_IF_ERROR(ParseLiteralElement(c_, literal, linear));
    ++linear;
    ++seen[depth - 1];
    if (!c_.TryConsume(",") && c_.Peek() != '}') return c_.Expected("',' or '}'");
  }
  if (linear != count) {
    return c_.ErrorAt(start, "literal has " + std::to_string(linear) + " elements but the shape " +
                                 shape.ToString() + " holds " + std::to_string(count));
  }
  return OkStatus();
}

Status HloTextParser::ParseLiteral(Instruction& instruction) {
  const Shape& shape = instruction.shape;
  if (c_.LookingAt("{...}")) {
    c_.TryConsume("{...}");
    instruction.literal = Literal::Elided(shape);
    return OkStatus();
  }
  if (shape.IsTuple()) {
    return c_.Error("tuple-shaped constants are not supported; build the tuple from array constants");
  }
  if (!shape.IsArray()) return c_.Error("a constant needs an array shape, got " + shape.ToString());
  if (shape.ByteSize() > literal_bytes_left_) {
    return c_.Error("constant of " + shape.ToString() + " is too large: the constants of a program text may hold " +
                    std::to_string(kMaxLiteralBytes >> 20) + " MiB together");
  }
  literal_bytes_left_ -= shape.ByteSize();
  Literal literal(shape);
  ANVIL_RETURN_IF_ERROR(ParseArrayLiteral(literal));
  instruction.literal = std::move(literal);
  return OkStatus();
}

bool HloTextParser::ShapeFollows() {
  c_.SkipBlanks();
  if (c_.PeekRaw() == '(') return true;
  if (c_.PeekRaw() == '%') return false;
  size_t save = c_.pos();
  std::string_view word = c_.ReadIdentifier(false);
  bool shape = ElementTypeFromHloName(word).has_value() && c_.PeekRaw() == '[';
  c_.set_pos(save);
  return shape;
}

Status HloTextParser::ParseOperands(Computation& computation, std::vector<PendingInstruction>& pending,
                                    PendingInstruction& self) {
  ANVIL_RETURN_IF_ERROR(c_.Expect("("));
  if (c_.TryConsume(")")) return OkStatus();
  while (true) {
    c_.SkipBlanks();
    size_t at = c_.pos();
    // An operand may carry its shape (`f32[2]{0} %x`), or be a whole
    // instruction written in place (`f32[2] parameter(0)`).
    if (ShapeFollows()) {
      ANVIL_ASSIGN_OR_RETURN(Shape shape, ParseShape());
      c_.SkipBlanks();
      size_t save = c_.pos();
      std::string_view word = c_.ReadIdentifier();
      bool is_inline = !word.empty() && c_.PeekRaw() == '(';
      c_.set_pos(save);
      if (is_inline) {
        auto inner = std::make_unique<Instruction>();
        inner->shape = std::move(shape);
        inner->name = std::string(word) + ".inline." + std::to_string(++inline_counter_);
        std::string name = inner->name;
        ANVIL_RETURN_IF_ERROR(ParseInstructionBody(computation, pending, std::move(inner), at, false, true));
        self.operands.push_back({name, at});
        if (c_.TryConsume(")")) break;
        ANVIL_RETURN_IF_ERROR(c_.Expect(","));
        continue;
      }
    }
    ANVIL_ASSIGN_OR_RETURN(std::string name, ReadName());
    self.operands.push_back({std::move(name), at});
    if (c_.TryConsume(")")) break;
    ANVIL_RETURN_IF_ERROR(c_.Expect(","));
  }
  return OkStatus();
}

Status HloTextParser::ParseInstruction(Computation& computation, std::vector<PendingInstruction>& pending,
                                       bool* is_root) {
  size_t at = c_.pos();
  *is_root = c_.TryConsumeWord("ROOT");
  auto instruction = std::make_unique<Instruction>();
  ANVIL_ASSIGN_OR_RETURN(instruction->name, ReadName());
  ANVIL_RETURN_IF_ERROR(c_.Expect("="));
  bool infer_shape = !ShapeFollows();
  if (infer_shape) {
    // `f33[2]`: a shape with an unknown element type, not a missing shape.
    size_t save = c_.pos();
    std::string_view word = c_.ReadIdentifier(false);
    bool bracket = c_.PeekRaw() == '[';
    c_.set_pos(save);
    if (bracket) return c_.Error("unknown element type '" + std::string(word) + "'");
  }
  if (!infer_shape) {
    ANVIL_ASSIGN_OR_RETURN(instruction->shape, ParseShape());
  }
  return ParseInstructionBody(computation, pending, std::move(instruction), at, infer_shape, false);
}

Status HloTextParser::ParseInstructionBody(Computation& computation, std::vector<PendingInstruction>& pending,
                                           std::unique_ptr<Instruction> instruction, size_t at, bool infer_shape,
                                           bool inline_operand) {
  NestingGuard nesting(c_);
  ANVIL_RETURN_IF_ERROR(nesting.Check());
  c_.SkipBlanks();
  size_t opcode_at = c_.pos();
  std::string_view opcode_name = c_.ReadIdentifier();
  if (opcode_name.empty()) return c_.Expected(infer_shape ? "a shape or an opcode" : "an opcode");
  if (auto op = OpcodeFromName(opcode_name)) {
    instruction->opcode = *op;
  } else {
    auto ends_with = [&](std::string_view suffix) {
      return opcode_name.size() > suffix.size() &&
             opcode_name.substr(opcode_name.size() - suffix.size()) == suffix &&
             OpcodeFromName(opcode_name.substr(0, opcode_name.size() - suffix.size())).has_value();
    };
    if (ends_with("-start")) {
      instruction->opcode = Opcode::kAsyncStart;
    } else if (ends_with("-update")) {
      instruction->opcode = Opcode::kAsyncUpdate;
    } else if (ends_with("-done")) {
      instruction->opcode = Opcode::kAsyncDone;
    } else {
      return c_.ErrorAt(opcode_at, "unknown opcode '" + std::string(opcode_name) + "'");
    }
    instruction->async_spelling = std::string(opcode_name);
  }
  if (infer_shape && (instruction->opcode == Opcode::kConstant || instruction->opcode == Opcode::kParameter)) {
    return c_.ErrorAt(opcode_at, std::string(opcode_name) + " needs a shape before its opcode");
  }
  PendingInstruction p{instruction.get(), {}, at, infer_shape};
  if (instruction->opcode == Opcode::kConstant) {
    ANVIL_RETURN_IF_ERROR(c_.Expect("("));
    ANVIL_RETURN_IF_ERROR(ParseLiteral(*instruction));
    ANVIL_RETURN_IF_ERROR(c_.Expect(")"));
  } else if (instruction->opcode == Opcode::kParameter) {
    ANVIL_RETURN_IF_ERROR(c_.Expect("("));
    size_t number_at = c_.pos();
    ANVIL_ASSIGN_OR_RETURN(instruction->parameter_number, c_.ReadInt());
    if (instruction->parameter_number < 0) return c_.ErrorAt(number_at, "negative parameter number");
    ANVIL_RETURN_IF_ERROR(c_.Expect(")"));
  } else {
    ANVIL_RETURN_IF_ERROR(ParseOperands(computation, pending, p));
  }
  if (!inline_operand) ANVIL_RETURN_IF_ERROR(ParseAttributes(instruction->attributes));
  if (!names_.emplace(instruction->name, instruction.get()).second) {
    return c_.ErrorAt(at, "instruction name '" + instruction->name + "' is defined twice");
  }
  instruction_positions_[instruction.get()] = at;
  std::tie(instruction->line, instruction->column) = c_.LineColumn(at);
  pending.push_back(std::move(p));
  computation.AddInstruction(std::move(instruction));
  return OkStatus();
}

Status HloTextParser::ParseComputation(Module& module, bool* is_entry) {
  size_t at = c_.pos();
  *is_entry = c_.TryConsumeWord("ENTRY");
  auto computation = std::make_unique<Computation>();
  ANVIL_ASSIGN_OR_RETURN(computation->name, ReadName());
  if (module.FindComputation(computation->name)) {
    return c_.ErrorAt(at, "computation '" + computation->name + "' is defined twice");
  }
  // Optional signature `(a: f32[], b: s32[]) -> f32[]`: the parameters
  // themselves say the same, so it is read and checked for form only.
  if (c_.TryConsume("(")) {
    if (!c_.TryConsume(")")) {
      while (true) {
        ANVIL_ASSIGN_OR_RETURN(std::string param, ReadName());
        ANVIL_RETURN_IF_ERROR(c_.Expect(":"));
        auto shape = ParseShape();
        if (!shape.ok()) return shape.status();
        if (c_.TryConsume(")")) break;
        ANVIL_RETURN_IF_ERROR(c_.Expect(","));
      }
    }
    ANVIL_RETURN_IF_ERROR(c_.Expect("->"));
    auto result = ParseShape();
    if (!result.ok()) return result.status();
  }
  ANVIL_RETURN_IF_ERROR(c_.Expect("{"));
  names_.clear();
  std::vector<PendingInstruction> pending;
  Instruction* root = nullptr;
  while (!c_.TryConsume("}")) {
    if (c_.AtEnd()) return c_.Expected("'}' to close computation " + computation->name);
    bool is_root = false;
    ANVIL_RETURN_IF_ERROR(ParseInstruction(*computation, pending, &is_root));
    if (is_root) {
      if (root) return c_.ErrorAt(pending.back().position, "computation " + computation->name + " has two ROOTs");
      root = computation->instructions.back().get();
    }
  }
  if (computation->instructions.empty()) return c_.ErrorAt(at, "computation " + computation->name + " is empty");
  ANVIL_RETURN_IF_ERROR(ParseAttributes(computation->attributes));
  computation->root = root ? root : computation->instructions.back().get();
  // Operands may name instructions that come later in the text; the verifier
  // rejects such uses, the parser only needs them to exist.
  for (PendingInstruction& p : pending) {
    for (PendingOperand& o : p.operands) {
      auto found = names_.find(o.name);
      Instruction* operand = found == names_.end() ? nullptr : found->second;
      if (!operand) {
        return c_.ErrorAt(o.position, "use of undefined value '%" + o.name + "' in computation " + computation->name);
      }
      p.instruction->operands.push_back(operand);
    }
    if (!ResolveCallees(module, *p.instruction, nullptr)) unresolved_.push_back(p.instruction);
    if (p.infer_shape) {
      // Operands come first in the text, so their shapes are known by now.
      auto shape = InferShape(*p.instruction);
      if (!shape.ok() || (!shape->IsTuple() && !shape->IsArray() && !shape->IsToken())) {
        return c_.ErrorAt(p.position, "cannot infer the shape of '" + p.instruction->name + "'" +
                                          (shape.ok() ? std::string("; write it before the opcode")
                                                      : ": " + shape.status().message()));
      }
      if (Status size = CheckShapeSize(*shape); !size.ok()) return c_.ErrorAt(p.position, size.message());
      p.instruction->shape = *shape;
    }
  }
  std::map<int64_t, Instruction*> params;
  for (const auto& i : computation->instructions) {
    if (i->opcode != Opcode::kParameter) continue;
    if (!params.emplace(i->parameter_number, i.get()).second) {
      return c_.ErrorAt(instruction_positions_[i.get()],
                        "parameter number " + std::to_string(i->parameter_number) + " is used twice");
    }
  }
  int64_t expected = 0;
  for (auto& [number, instruction] : params) {
    if (number != expected) {
      return c_.ErrorAt(instruction_positions_[instruction],
                        "parameter numbers of " + computation->name + " skip " + std::to_string(expected));
    }
    computation->parameters.push_back(instruction);
    ++expected;
  }
  Computation* added = module.AddComputation(std::move(computation));
  if (*is_entry) {
    if (module.entry) return c_.ErrorAt(at, "module has two ENTRY computations");
    module.entry = added;
  }
  return OkStatus();
}

// Reads `%a`, `a`, or `{%a, %b}` into names.
std::vector<std::string> ComputationNames(std::string_view value) {
  std::vector<std::string> names;
  std::string current;
  for (char ch : value) {
    if (ch == '{' || ch == '}' || ch == ',' || ch == ' ' || ch == '%') {
      if (!current.empty()) names.push_back(std::move(current));
      current.clear();
      continue;
    }
    current += ch;
  }
  if (!current.empty()) names.push_back(std::move(current));
  return names;
}

bool HloTextParser::ResolveCallees(const Module& module, Instruction& instruction, std::string* missing) {
  std::vector<Computation*> callees;
  for (const Attribute& a : instruction.attributes) {
    if (!IsComputationAttribute(a.key)) continue;
    for (const std::string& name : ComputationNames(a.value)) {
      Computation* callee = module.FindComputation(name);
      if (!callee) {
        if (missing) *missing = "attribute " + a.key + " of '" + instruction.name + "' names unknown computation '" + name + "'";
        return false;
      }
      callees.push_back(callee);
    }
  }
  instruction.called_computations = std::move(callees);
  return true;
}

Status HloTextParser::ResolveComputationReferences(Module& module) {
  // Callees defined after their callers are found here, once all exist.
  for (Instruction* instruction : unresolved_) {
    std::string missing;
    if (!ResolveCallees(module, *instruction, &missing)) {
      return c_.ErrorAt(instruction_positions_[instruction], missing);
    }
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<Module>> HloTextParser::ParseModule() {
  auto module = std::make_unique<Module>();
  module->source_file = c_.source().file;
  if (c_.TryConsumeWord("HloModule")) {
    ANVIL_ASSIGN_OR_RETURN(module->name, ReadName());
    c_.TryConsume(":");  // older XLA wrote `HloModule name:`
    ANVIL_RETURN_IF_ERROR(ParseAttributes(module->attributes));
  } else {
    // XLA accepts bare computations (as its fusion tests write them); the
    // module then takes a placeholder name and the last computation is entry.
    module->name = "_";
  }
  while (!c_.AtEnd()) {
    bool is_entry = false;
    ANVIL_RETURN_IF_ERROR(ParseComputation(*module, &is_entry));
  }
  if (module->computations.empty()) return c_.Expected("a computation");
  if (!module->entry) module->entry = module->computations.back().get();
  ANVIL_RETURN_IF_ERROR(ResolveComputationReferences(*module));
  return module;
}

}  // namespace

StatusOr<std::unique_ptr<Module>> ParseHloModule(std::string_view text, const SourceInfo& source) {
  HloTextParser parser(text, source);
  return parser.ParseModule();
}

StatusOr<std::vector<std::unique_ptr<Module>>> ParseHloText(std::string_view text, const SourceInfo& source) {
  std::vector<std::unique_ptr<Module>> modules;
  for (const TextChunk& chunk : SplitInputFile(text)) {
    SourceInfo chunk_source = source;
    chunk_source.first_line = source.first_line + chunk.first_line - 1;
    // A chunk of only comments (a file's trailing CHECK lines) holds no module.
    TextCursor probe(chunk.text, chunk_source, true);
    if (probe.AtEnd() && !modules.empty()) continue;
    ANVIL_ASSIGN_OR_RETURN(auto module, ParseHloModule(chunk.text, chunk_source));
    modules.push_back(std::move(module));
  }
  return modules;
}

StatusOr<Shape> ParseHloShape(std::string_view text) {
  HloTextParser parser(text, SourceInfo{"<shape>", 1});
  ANVIL_ASSIGN_OR_RETURN(Shape shape, parser.ParseShape());
  if (!parser.AtEnd()) return parser.Expected("end of shape");
  return shape;
}

}  // namespace anvil::hlo
