// Lowers the MLIR syntax tree of a StableHLO program into the IR: each
// func.func becomes a computation, each region a computation of its own, and
// each op the XLA HLO instruction(s) with the same meaning, with attributes in
// XLA's spelling. Values a region uses from outside (StableHLO allows that for
// while, if and case) are passed in explicitly.
#include <functional>
#include <tuple>
#include <map>
#include <set>

#include "hlo/attributes.h"
#include "hlo/constant_folding.h"
#include "hlo/mlir_parser.h"
#include "hlo/parse_common.h"
#include "hlo/stablehlo_lowering.h"
#include "hlo/stablehlo_parser.h"

namespace anvil::hlo {
namespace {

using mlir::Attr;
using mlir::Block;
using mlir::Function;
using mlir::ModuleSyntax;
using mlir::Op;
using mlir::Region;

std::string AttrText(const Attr& a);

std::string AttrListText(const std::vector<Attr>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) out += ", ";
    out += AttrText(list[i]);
  }
  return out + "]";
}

// An MLIR-like rendering of an attribute, for options kept as strings.
std::string AttrText(const Attr& a) {
  switch (a.kind) {
    case Attr::Kind::kUnit: return "unit";
    case Attr::Kind::kBool: return a.b ? "true" : "false";
    case Attr::Kind::kInt: return std::to_string(a.i);
    case Attr::Kind::kFloat: {
      char buf[64];
      snprintf(buf, sizeof(buf), "%.17g", a.f);
      return buf;
    }
    case Attr::Kind::kString: return QuoteString(a.s);
    case Attr::Kind::kSymbol: return "@" + a.s;
    case Attr::Kind::kWord: return a.s;
    case Attr::Kind::kArray: return AttrListText(a.list);
    case Attr::Kind::kDict: {
      std::string out = "{";
      for (size_t i = 0; i < a.entries.size(); ++i) {
        if (i) out += ", ";
        out += a.entries[i].first + " = " + AttrText(a.entries[i].second);
      }
      return out + "}";
    }
    case Attr::Kind::kDense: return "dense<...>";
    case Attr::Kind::kOpaque: return "#" + a.s + "<" + a.raw + ">";
    case Attr::Kind::kType: return a.type ? a.type->ToMlirString() : "?";
  }
  return "";
}

// The enum word of `LT`, `#stablehlo<comparison_direction LT>` or
// `#stablehlo.comparison_direction<LT>`.
std::string EnumWord(const Attr& a) {
  if (a.kind == Attr::Kind::kWord || a.kind == Attr::Kind::kString) return a.s;
  if (a.kind == Attr::Kind::kOpaque) {
    std::string raw = a.raw;
    size_t end = raw.find_last_not_of(" ");
    if (end == std::string::npos) return "";
    size_t start = raw.find_last_of(" ", end);
    return raw.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
  }
  return "";
}

std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

struct Scope {
  std::map<std::string, Instruction*> values;
};

// A string as an HLO attribute value writes it: in quotes, with quotes and
// backslashes escaped.
std::string QuoteForHlo(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

class Lowering {
 public:
  Lowering(mlir::SyntaxSource& source, const ModuleSyntax& syntax, Module& module)
      : source_(source), syntax_(syntax), module_(module) {
    for (const Function& f : syntax_.functions) functions_[f.name] = &f;
  }

  // Lowers every function; the entry is @main, else the first public
  // function nobody calls.
  Status Run();
  // Lowers `f` (and what it calls) as the module's entry.
  Status RunEntry(const Function& f);

 private:
  // --- emission helpers
  Instruction* Emit(Computation& c, Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                    std::vector<Attribute> attributes = {});
  std::string FreshName(std::string_view prefix);
  std::string FreshComputationName(std::string_view prefix);
  std::string ComputationName(const std::string& function);
  Instruction* TupleOf(Computation& c, const std::vector<Instruction*>& values);
  Instruction* GetTupleElement(Computation& c, Instruction* tuple, int64_t index);
  // Binds the op's results to `value` (one result) or to its tuple elements.
  Status BindResults(const Op& op, Scope& scope, Computation& c, Instruction* value, size_t count);

  // --- attribute readers
  StatusOr<std::vector<int64_t>> Ints(const Attr& a, size_t pos);
  StatusOr<std::vector<int64_t>> IntsAttr(const Op& op, std::initializer_list<std::string_view> keys,
                                          bool required = true);
  StatusOr<int64_t> IntAttr(const Op& op, std::initializer_list<std::string_view> keys);
  std::optional<bool> BoolAttr(const Op& op, std::string_view key);
  StatusOr<std::vector<std::vector<int64_t>>> IntMatrix(const Attr& a, size_t pos);

  // --- structure
  Status LowerFunction(const Function& f);
  StatusOr<Computation*> ComputationForFunction(const std::string& name, size_t pos);
  Status LowerBlock(const Block& block, Scope& scope, Computation& c, std::vector<Instruction*>* returned);
  Status LowerOp(const Op& op, Scope& scope, Computation& c);
  StatusOr<Instruction*> Lookup(Scope& scope, const mlir::Value& v);
  // A region with its own parameters (reduce bodies, comparators).
  // A region that takes only its block arguments. Constants of `outer` it
  // uses are copied in (a portable artifact's serializer hoists identical
  // constants out of regions; the IR's computations cannot capture).
  void RecordDonors(const Function& entry);
  StatusOr<Computation*> LowerClosedRegion(const Region& region, std::string_view what, const Scope* outer = nullptr);
  // A region whose block arguments and captured outer values arrive packed
  // in one tuple parameter: the first `block_types.size()` elements are the
  // block arguments, then `captures`.
  StatusOr<Computation*> LowerPackedRegion(const Region& region, std::string_view what,
                                           const std::vector<Shape>& block_types,
                                           const std::vector<std::string>& captures, Scope& outer,
                                           bool pass_captures_through);
  void FreeValues(const Region& region, std::set<std::string>& defined, std::vector<std::string>& free);
  StatusOr<Computation*> ScalarReducer(const std::string& op_name, const std::vector<Shape>& init_shapes,
                                       size_t pos);

  // --- op families
  StatusOr<std::vector<Shape>> ResultTypes(const Op& op);
  // An op without an HLO opcode: a custom call named after it, its options
  // as the backend config and its regions as called computations.
  Status LowerAsCustomCall(const Op& op, Scope& scope, Computation& c, const std::vector<Instruction*>& operands,
                           const std::vector<Shape>& results);
  // chlo.ragged_dot as XLA's ragged-dot, its dimension numbers flattened.
  Status LowerRaggedDot(const Op& op, Scope& scope, Computation& c, const std::vector<Instruction*>& operands);
  StatusOr<std::string> WindowText(const Op& op, const std::vector<int64_t>& window_size);
  StatusOr<std::string> ConvLabels(const Op& op);

  mlir::SyntaxSource& source_;
  const ModuleSyntax& syntax_;
  Module& module_;
  std::map<std::string, const Function*> functions_;
  std::map<std::string, Computation*> lowered_;
  std::set<std::string> in_progress_;
  std::set<std::string> names_;
  std::map<std::string, int> name_counters_;
  int counter_ = 0;
  size_t current_pos_ = 0;  // the op being lowered, for source locations
  const Op* current_op_ = nullptr;  // and its framework source location, if known
  std::vector<const Op*> caller_stack_;  // the calls being lowered that have one
  std::set<std::string> computation_names_;  // handed out by FreshComputationName
};

std::string Lowering::FreshName(std::string_view prefix) {
  std::string name;
  do {
    name = std::string(prefix) + "." + std::to_string(++counter_);
  } while (names_.count(name));
  names_.insert(name);
  return name;
}

std::string Lowering::ComputationName(const std::string& function) {
  // MLIR symbols may be quoted strings (`@"<lambda>"`); HLO names may not.
  std::string name;
  for (char ch : function) name += IsIdentifierChar(ch) && ch != '$' ? ch : '_';
  if (name.empty() || !IsIdentifierStart(name[0])) name = "f_" + name;
  if (name == function) return name;
  return FreshComputationName(name);
}

std::string Lowering::FreshComputationName(std::string_view prefix) {
  // A region's computation joins the module only once its body is lowered,
  // so the names handed out are remembered too: a loop nested in a loop's
  // body must not take the outer body's name.
  std::string name(prefix);
  while (module_.FindComputation(name) || functions_.count(name) || computation_names_.count(name)) {
    name = std::string(prefix) + "." + std::to_string(++name_counters_[std::string(prefix)]);
  }
  computation_names_.insert(name);
  return name;
}

Instruction* Lowering::Emit(Computation& c, Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                            std::vector<Attribute> attributes) {
  auto i = std::make_unique<Instruction>();
  i->opcode = opcode;
  i->name = FreshName(OpcodeName(opcode));
  i->shape = std::move(shape);
  i->operands = std::move(operands);
  i->attributes = std::move(attributes);
  std::tie(i->line, i->column) = source_.LineColumn(current_pos_);
  const Op* located = current_op_;
  if ((located == nullptr || located->source_file.empty()) && !caller_stack_.empty()) located = caller_stack_.back();
  if (located != nullptr && !located->source_file.empty() && !i->FindAttribute("metadata")) {
    // XLA's spelling, so that plugins' messages can say where an
    // instruction came from in the framework's source.
    const std::string& name = current_op_ != nullptr && !current_op_->source_name.empty() ? current_op_->source_name
                                                                                         : located->source_name;
    std::string metadata = "{";
    if (!name.empty()) metadata += "op_name=" + QuoteForHlo(name) + " ";
    metadata += "source_file=" + QuoteForHlo(located->source_file);
    if (located->source_line > 0) metadata += " source_line=" + std::to_string(located->source_line);
    i->SetAttribute("metadata", metadata + "}");
  }
  return c.AddInstruction(std::move(i));
}

Instruction* Lowering::TupleOf(Computation& c, const std::vector<Instruction*>& values) {
  std::vector<Shape> shapes;
  for (Instruction* v : values) shapes.push_back(v->shape);
  return Emit(c, Opcode::kTuple, Shape::Tuple(std::move(shapes)), values);
}

Instruction* Lowering::GetTupleElement(Computation& c, Instruction* tuple, int64_t index) {
  return Emit(c, Opcode::kGetTupleElement, tuple->shape.tuple_elements()[index], {tuple},
              {{"index", std::to_string(index)}});
}

Status Lowering::BindResults(const Op& op, Scope& scope, Computation& c, Instruction* value, size_t count) {
  if (op.results.size() != count) {
    return source_.ErrorAt(op.pos, op.name + " defines " + std::to_string(op.results.size()) +
                                       " results but has " + std::to_string(count));
  }
  if (count == 1) {
    scope.values[op.results[0]] = value;
    return OkStatus();
  }
  if (!value->shape.IsTuple() || value->shape.tuple_elements().size() != count) {
    return source_.ErrorAt(op.pos, op.name + " defines " + std::to_string(count) + " results but produces " +
                                       value->shape.ToMlirString());
  }
  for (size_t i = 0; i < count; ++i) scope.values[op.results[i]] = GetTupleElement(c, value, static_cast<int64_t>(i));
  return OkStatus();
}

StatusOr<std::vector<int64_t>> Lowering::Ints(const Attr& a, size_t pos) {
  std::vector<int64_t> out;
  switch (a.kind) {
    case Attr::Kind::kInt: out.push_back(a.i); return out;
    case Attr::Kind::kBool: out.push_back(a.b); return out;
    case Attr::Kind::kArray:
      for (const Attr& e : a.list) {
        if (e.kind != Attr::Kind::kInt && e.kind != Attr::Kind::kBool) {
          return source_.ErrorAt(pos, "expected a list of integers, found " + AttrText(a));
        }
        out.push_back(e.i);
      }
      return out;
    case Attr::Kind::kDense: {
      if (!a.type) return source_.ErrorAt(a.body_pos, "dense attribute without a type");
      ANVIL_ASSIGN_OR_RETURN(Literal l, source_.DenseValue(a, *a.type));
      for (int64_t i = 0; i < l.element_count(); ++i) out.push_back(l.GetInt(i));
      return out;
    }
    default: return source_.ErrorAt(pos, "expected a list of integers, found " + AttrText(a));
  }
}

StatusOr<std::vector<std::vector<int64_t>>> Lowering::IntMatrix(const Attr& a, size_t pos) {
  std::vector<std::vector<int64_t>> rows;
  if (a.kind == Attr::Kind::kDense) {
    if (!a.type) return source_.ErrorAt(a.body_pos, "dense attribute without a type");
    ANVIL_ASSIGN_OR_RETURN(Literal l, source_.DenseValue(a, *a.type));
    const Shape& s = l.shape();
    int64_t n_rows = s.rank() >= 1 ? s.dim(0) : 1;
    int64_t n_cols = s.rank() >= 2 ? s.dim(1) : (s.rank() == 1 ? s.dim(0) : 1);
    if (s.rank() == 1) n_rows = 1;
    for (int64_t r = 0; r < n_rows; ++r) {
      std::vector<int64_t> row;
      for (int64_t col = 0; col < n_cols; ++col) row.push_back(l.GetInt(r * n_cols + col));
      rows.push_back(std::move(row));
    }
    return rows;
  }
  if (a.kind == Attr::Kind::kArray) {
    for (const Attr& row : a.list) {
      ANVIL_ASSIGN_OR_RETURN(auto ints, Ints(row, pos));
      rows.push_back(std::move(ints));
    }
    return rows;
  }
  return source_.ErrorAt(pos, "expected a matrix of integers, found " + AttrText(a));
}

StatusOr<std::vector<int64_t>> Lowering::IntsAttr(const Op& op, std::initializer_list<std::string_view> keys,
                                                  bool required) {
  for (std::string_view key : keys) {
    if (const Attr* a = op.FindAttr(key)) return Ints(*a, op.pos);
  }
  if (!required) return std::vector<int64_t>{};
  return source_.ErrorAt(op.pos, op.name + " needs the attribute '" + std::string(*keys.begin()) + "'");
}

StatusOr<int64_t> Lowering::IntAttr(const Op& op, std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    if (const Attr* a = op.FindAttr(key)) {
      if (a->kind == Attr::Kind::kInt) return a->i;
      return source_.ErrorAt(op.pos, "attribute '" + std::string(key) + "' of " + op.name + " must be an integer");
    }
  }
  return source_.ErrorAt(op.pos, op.name + " needs the attribute '" + std::string(*keys.begin()) + "'");
}

std::optional<bool> Lowering::BoolAttr(const Op& op, std::string_view key) {
  const Attr* a = op.FindAttr(key);
  if (!a) return std::nullopt;
  if (a->kind == Attr::Kind::kUnit) return true;
  return a->b;
}

StatusOr<Instruction*> Lowering::Lookup(Scope& scope, const mlir::Value& v) {
  auto it = scope.values.find(v.name);
  if (it != scope.values.end()) return it->second;
  return source_.ErrorAt(v.pos, "use of undefined value '" + v.name + "'");
}

StatusOr<std::vector<Shape>> Lowering::ResultTypes(const Op& op) {
  if (!op.shorthand_types) return op.result_types;
  const size_t n = op.results.size();
  if (op.result_types.size() < n) {
    return source_.ErrorAt(op.pos, op.name + " has " + std::to_string(n) + " results but its types name " +
                                       std::to_string(op.result_types.size()));
  }
  return std::vector<Shape>(op.result_types.end() - static_cast<ptrdiff_t>(n), op.result_types.end());
}

void Lowering::FreeValues(const Region& region, std::set<std::string>& defined, std::vector<std::string>& free) {
  for (const Block& block : region.blocks) {
    for (const auto& [name, type] : block.arguments) defined.insert(name);
    for (const auto& op : block.ops) {
      for (const mlir::Value& v : op->operands) {
        if (!defined.count(v.name) && std::find(free.begin(), free.end(), v.name) == free.end()) {
          free.push_back(v.name);
        }
      }
      for (const Region& inner : op->regions) FreeValues(inner, defined, free);
      for (const std::string& r : op->results) defined.insert(r);
    }
  }
}

Status Lowering::LowerBlock(const Block& block, Scope& scope, Computation& c, std::vector<Instruction*>* returned) {
  for (const auto& op : block.ops) {
    if (op->name == "func.return" || op->name == "stablehlo.return") {
      if (!returned) return source_.ErrorAt(op->pos, "unexpected " + op->name);
      for (const mlir::Value& v : op->operands) {
        ANVIL_ASSIGN_OR_RETURN(Instruction * value, Lookup(scope, v));
        returned->push_back(value);
      }
      return OkStatus();
    }
    Status lowered = LowerOp(*op, scope, c);
    if (!lowered.ok() && !op->location.empty() && lowered.message().find(op->location) == std::string::npos) {
      // Say where in the framework's source the op came from too.
      return Status(lowered.code(), lowered.message() + " (" + op->name + " at " + op->location + ")");
    }
    ANVIL_RETURN_IF_ERROR(lowered);
  }
  if (returned) return source_.ErrorAt(block.ops.empty() ? 0 : block.ops.back()->pos, "block has no return");
  return OkStatus();
}

StatusOr<Computation*> Lowering::LowerClosedRegion(const Region& region, std::string_view what, const Scope* outer) {
  if (region.blocks.empty()) return source_.ErrorAt(region.pos, "empty region");
  const Block& block = region.blocks.front();
  std::set<std::string> defined;
  std::vector<std::string> free;
  FreeValues(region, defined, free);
  auto comp = std::make_unique<Computation>();
  comp->name = FreshComputationName(std::string(what));
  Scope scope;
  for (const std::string& name : free) {
    const Instruction* constant = nullptr;
    if (outer != nullptr) {
      auto it = outer->values.find(name);
      if (it != outer->values.end() && it->second->opcode == Opcode::kConstant) constant = it->second;
    }
    if (constant == nullptr) {
      return source_.ErrorAt(region.pos, std::string(what) + " region uses '" + name +
                                             "' from outside; only while, if and case regions may (or constants)");
    }
    auto copy = std::make_unique<Instruction>(*constant);
    copy->name = FreshName(constant->name);
    copy->operands.clear();
    scope.values[name] = comp->AddInstruction(std::move(copy));
  }
  int64_t number = 0;
  for (const auto& [name, type] : block.arguments) {
    auto p = std::make_unique<Instruction>();
    p->opcode = Opcode::kParameter;
    p->name = FreshName("Arg_" + std::to_string(number));
    p->shape = type;
    p->parameter_number = number++;
    Instruction* param = comp->AddInstruction(std::move(p));
    comp->parameters.push_back(param);
    scope.values[name] = param;
  }
  std::vector<Instruction*> returned;
  ANVIL_RETURN_IF_ERROR(LowerBlock(block, scope, *comp, &returned));
  if (returned.size() == 1) {
    comp->root = returned[0];
  } else {
    comp->root = TupleOf(*comp, returned);
  }
  return module_.AddComputation(std::move(comp));
}

StatusOr<Computation*> Lowering::LowerPackedRegion(const Region& region, std::string_view what,
                                                   const std::vector<Shape>& block_types,
                                                   const std::vector<std::string>& captures, Scope& outer,
                                                   bool pass_captures_through) {
  if (region.blocks.empty()) return source_.ErrorAt(region.pos, "empty region");
  const Block& block = region.blocks.front();
  if (block.arguments.size() != block_types.size()) {
    return source_.ErrorAt(region.pos, std::string(what) + " region takes " + std::to_string(block.arguments.size()) +
                                           " arguments but gets " + std::to_string(block_types.size()));
  }
  std::vector<Shape> packed = block_types;
  for (const std::string& name : captures) packed.push_back(outer.values.at(name)->shape);
  auto comp = std::make_unique<Computation>();
  comp->name = FreshComputationName(std::string(what));
  auto p = std::make_unique<Instruction>();
  p->opcode = Opcode::kParameter;
  p->name = FreshName("Arg_0");
  p->shape = Shape::Tuple(packed);
  p->parameter_number = 0;
  Instruction* param = comp->AddInstruction(std::move(p));
  comp->parameters.push_back(param);
  Scope scope;
  for (size_t i = 0; i < block.arguments.size(); ++i) {
    scope.values[block.arguments[i].first] = GetTupleElement(*comp, param, static_cast<int64_t>(i));
  }
  std::vector<Instruction*> passed;
  for (size_t j = 0; j < captures.size(); ++j) {
    Instruction* v = GetTupleElement(*comp, param, static_cast<int64_t>(block_types.size() + j));
    scope.values[captures[j]] = v;
    passed.push_back(v);
  }
  std::vector<Instruction*> returned;
  ANVIL_RETURN_IF_ERROR(LowerBlock(block, scope, *comp, &returned));
  if (pass_captures_through) {
    returned.insert(returned.end(), passed.begin(), passed.end());
    comp->root = TupleOf(*comp, returned);
  } else if (returned.size() == 1) {
    comp->root = returned[0];
  } else {
    comp->root = TupleOf(*comp, returned);
  }
  return module_.AddComputation(std::move(comp));
}

StatusOr<Computation*> Lowering::ScalarReducer(const std::string& op_name, const std::vector<Shape>& init_shapes,
                                               size_t pos) {
  // `applies stablehlo.add`: a body of one binary op on scalars.
  std::string opcode_name = op_name.substr(op_name.find('.') + 1);
  for (char& ch : opcode_name) {
    if (ch == '_') ch = '-';
  }
  auto opcode = OpcodeFromName(opcode_name);
  if (!opcode || !IsElementwiseBinary(*opcode) || init_shapes.size() != 1) {
    return source_.ErrorAt(pos, "'applies " + op_name + "' needs one binary elementwise op and one input");
  }
  auto comp = std::make_unique<Computation>();
  comp->name = FreshComputationName(opcode_name + "_reducer");
  Shape scalar = Shape::Scalar(init_shapes[0].element_type());
  for (int64_t n = 0; n < 2; ++n) {
    auto p = std::make_unique<Instruction>();
    p->opcode = Opcode::kParameter;
    p->name = FreshName("Arg_" + std::to_string(n));
    p->shape = scalar;
    p->parameter_number = n;
    comp->parameters.push_back(comp->AddInstruction(std::move(p)));
  }
  comp->root = Emit(*comp, *opcode, scalar, {comp->parameters[0], comp->parameters[1]});
  return module_.AddComputation(std::move(comp));
}

StatusOr<Computation*> Lowering::ComputationForFunction(const std::string& name, size_t pos) {
  auto done = lowered_.find(name);
  if (done != lowered_.end()) return done->second;
  auto f = functions_.find(name);
  if (f == functions_.end()) return source_.ErrorAt(pos, "call to undefined function @" + name);
  if (!f->second->error.ok()) return f->second->error;
  if (in_progress_.count(name)) return source_.ErrorAt(pos, "recursive call to @" + name + " is not supported");
  // The callee's ops without a source file of their own take the caller's
  // (JAX names the ops of library functions but gives them no file).
  const Op* caller = current_op_;
  if (caller != nullptr && !caller->source_file.empty()) caller_stack_.push_back(caller);
  const size_t saved_pos = current_pos_;
  Status lowered = LowerFunction(*f->second);
  if (caller != nullptr && !caller->source_file.empty()) caller_stack_.pop_back();
  current_op_ = caller;
  current_pos_ = saved_pos;
  ANVIL_RETURN_IF_ERROR(lowered);
  return lowered_.at(name);
}

Status Lowering::LowerFunction(const Function& f) {
  in_progress_.insert(f.name);
  auto comp = std::make_unique<Computation>();
  Computation& c = *comp;
  c.name = ComputationName(f.name);
  Scope scope;
  int64_t number = 0;
  for (const auto& [name, type] : f.arguments) {
    auto p = std::make_unique<Instruction>();
    p->opcode = Opcode::kParameter;
    p->name = FreshName("Arg_" + std::to_string(number));
    p->shape = type;
    p->parameter_number = number++;
    Instruction* param = c.AddInstruction(std::move(p));
    c.parameters.push_back(param);
    scope.values[name] = param;
  }
  if (f.body.blocks.empty()) return source_.ErrorAt(f.pos, "function @" + f.name + " has no body");
  std::vector<Instruction*> returned;
  ANVIL_RETURN_IF_ERROR(LowerBlock(f.body.blocks.front(), scope, c, &returned));
  if (returned.size() != f.result_types.size()) {
    return source_.ErrorAt(f.pos, "function @" + f.name + " declares " + std::to_string(f.result_types.size()) +
                                      " results but returns " + std::to_string(returned.size()));
  }
  for (size_t i = 0; i < returned.size(); ++i) {
    if (!returned[i]->shape.Compatible(f.result_types[i])) {
      return source_.ErrorAt(f.pos, "function @" + f.name + " declares result " + std::to_string(i) + " as " +
                                        f.result_types[i].ToMlirString() + " but returns " +
                                        returned[i]->shape.ToMlirString());
    }
  }
  c.root = returned.size() == 1 ? returned[0] : TupleOf(c, returned);
  in_progress_.erase(f.name);
  lowered_[f.name] = module_.AddComputation(std::move(comp));
  return OkStatus();
}

Status Lowering::RunEntry(const Function& f) {
  if (!f.error.ok()) return f.error;
  ANVIL_ASSIGN_OR_RETURN(Computation * entry, ComputationForFunction(f.name, f.pos));
  module_.entry = entry;
  RecordDonors(f);
  return OkStatus();
}

// JAX marks the entry's donated arguments: `tf.aliasing_output = N` (result
// N may take its memory) or `jax.buffer_donor = true`. HLO says the same in
// its input_output_alias and buffer_donor header attributes, which is where
// the runtime looks.
void Lowering::RecordDonors(const Function& f) {
  std::string aliases, donors;
  const bool tuple_result = f.result_types.size() != 1;
  for (size_t i = 0; i < f.argument_attributes.size(); ++i) {
    for (const auto& [key, value] : f.argument_attributes[i]) {
      const std::string parameter = std::to_string(i);
      if (key == "tf.aliasing_output" && value.kind == Attr::Kind::kInt) {
        std::string output = tuple_result ? std::to_string(value.i) : "";
        aliases += (aliases.empty() ? "" : ", ") + ("{" + output + "}: (" + parameter + ", {}, may-alias)");
      } else if (key == "jax.buffer_donor" && value.kind == Attr::Kind::kBool && value.b) {
        donors += (donors.empty() ? "" : ", ") + ("(" + parameter + ", {})");
      }
    }
  }
  if (!aliases.empty()) module_.attributes.push_back({"input_output_alias", "{ " + aliases + " }"});
  if (!donors.empty()) module_.attributes.push_back({"buffer_donor", "{ " + donors + " }"});
}

Status Lowering::Run() {
  for (const Function& f : syntax_.functions) {
    if (!f.error.ok()) return Status(f.error.code(), f.error.message() + " (in function @" + f.name + ")");
  }
  for (const Function& f : syntax_.functions) {
    // Private declarations are lowered only when called (which fails: no body).
    const bool declaration = !f.is_public && f.body.blocks.empty();
    if (!lowered_.count(f.name) && !declaration) ANVIL_RETURN_IF_ERROR(LowerFunction(f));
  }
  // Entry: @main, else the first public function nobody calls.
  std::set<std::string> called;
  for (const auto& comp : module_.computations) {
    for (const auto& i : comp->instructions) {
      for (Computation* callee : i->called_computations) called.insert(callee->name);
    }
  }
  if (lowered_.count("main")) {
    module_.entry = lowered_.at("main");
  } else {
    for (const Function& f : syntax_.functions) {
      if (f.is_public && !called.count(f.name) && lowered_.count(f.name)) {
        module_.entry = lowered_.at(f.name);
        break;
      }
    }
    if (!module_.entry && lowered_.count(syntax_.functions.front().name)) {
      module_.entry = lowered_.at(syntax_.functions.front().name);
    }
    if (!module_.entry) return source_.ErrorAt(syntax_.functions.front().pos, "the module has no function to run");
  }
  for (const Function& f : syntax_.functions) {
    if (lowered_.count(f.name) && lowered_.at(f.name) == module_.entry) RecordDonors(f);
  }
  return OkStatus();
}

}  // namespace

namespace {

// stablehlo op names whose HLO opcode is the name with '-' for '_', and that
// take no attributes.
std::optional<Opcode> PlainOpcode(std::string_view name) {
  static const std::map<std::string_view, Opcode> kRenamed = {
      {"optimization_barrier", Opcode::kOptimizationBarrier},
      {"count_leading_zeros", Opcode::kClz},
      {"top_k", Opcode::kTopK},
  };
  auto renamed = kRenamed.find(name);
  if (renamed != kRenamed.end()) return renamed->second;
  std::string hlo(name);
  for (char& ch : hlo) {
    if (ch == '_') ch = '-';
  }
  auto op = OpcodeFromName(hlo);
  if (op && (IsElementwiseUnary(*op) || IsElementwiseBinary(*op) || *op == Opcode::kConvert ||
             *op == Opcode::kBitcastConvert || *op == Opcode::kReshape || *op == Opcode::kTuple ||
             *op == Opcode::kAfterAll || *op == Opcode::kReplicaId || *op == Opcode::kPartitionId ||
             *op == Opcode::kClamp || *op == Opcode::kDynamicUpdateSlice)) {
    if (*op == Opcode::kCompare || *op == Opcode::kReducePrecision) return std::nullopt;
    return op;
  }
  return std::nullopt;
}

// chlo ops with an HLO opcode of their own.
std::optional<Opcode> ChloOpcode(std::string_view name) {
  static const std::map<std::string_view, Opcode> kChlo = {
      {"acos", Opcode::kAcos}, {"acosh", Opcode::kAcosh}, {"asin", Opcode::kAsin}, {"asinh", Opcode::kAsinh},
      {"atan", Opcode::kAtan}, {"atanh", Opcode::kAtanh}, {"cosh", Opcode::kCosh}, {"sinh", Opcode::kSinh},
      {"tan", Opcode::kTan},   {"erf", Opcode::kErf},
  };
  auto it = kChlo.find(name);
  if (it == kChlo.end()) return std::nullopt;
  return it->second;
}

std::string Quoted(std::string_view s) { return QuoteString(s); }

}  // namespace

StatusOr<std::string> Lowering::WindowText(const Op& op, const std::vector<int64_t>& window_size) {
  const size_t n = window_size.size();
  std::vector<WindowDim> dims(n);
  for (size_t i = 0; i < n; ++i) dims[i].size = window_size[i];
  // Pretty convolutions group their window fields in `window = {...}`.
  const Attr* window = op.FindAttr("window");
  auto find = [&](std::initializer_list<std::string_view> keys) -> const Attr* {
    for (std::string_view key : keys) {
      if (window) {
        if (const Attr* a = window->Find(key)) return a;
      }
      if (const Attr* a = op.FindAttr(key)) return a;
    }
    return nullptr;
  };
  auto fill = [&](std::initializer_list<std::string_view> keys, auto setter) -> Status {
    const Attr* a = find(keys);
    if (!a) return OkStatus();
    ANVIL_ASSIGN_OR_RETURN(auto values, Ints(*a, op.pos));
    if (values.size() != n) {
      return source_.ErrorAt(op.pos, "window attribute '" + std::string(*keys.begin()) + "' has " +
                                         std::to_string(values.size()) + " entries, expected " + std::to_string(n));
    }
    for (size_t i = 0; i < n; ++i) setter(dims[i], values[i]);
    return OkStatus();
  };
  ANVIL_RETURN_IF_ERROR(fill({"stride", "window_strides"}, [](WindowDim& d, int64_t v) { d.stride = v; }));
  ANVIL_RETURN_IF_ERROR(fill({"lhs_dilate", "lhs_dilation", "base_dilations"},
                             [](WindowDim& d, int64_t v) { d.base_dilation = v; }));
  ANVIL_RETURN_IF_ERROR(fill({"rhs_dilate", "rhs_dilation", "window_dilations"},
                             [](WindowDim& d, int64_t v) { d.window_dilation = v; }));
  ANVIL_RETURN_IF_ERROR(fill({"reverse", "window_reversal"}, [](WindowDim& d, int64_t v) { d.reversal = v != 0; }));
  if (const Attr* pad = find({"pad", "padding"})) {
    ANVIL_ASSIGN_OR_RETURN(auto rows, IntMatrix(*pad, op.pos));
    if (rows.size() == 1 && rows[0].size() == 2 * n && n != 1) {
      // A flat list of pairs.
      std::vector<std::vector<int64_t>> pairs;
      for (size_t i = 0; i < n; ++i) pairs.push_back({rows[0][2 * i], rows[0][2 * i + 1]});
      rows = pairs;
    }
    if (rows.size() != n) {
      return source_.ErrorAt(op.pos, "padding has " + std::to_string(rows.size()) + " rows, expected " +
                                         std::to_string(n));
    }
    for (size_t i = 0; i < n; ++i) {
      if (rows[i].size() != 2) return source_.ErrorAt(op.pos, "each padding row holds two values");
      dims[i].pad_low = rows[i][0];
      dims[i].pad_high = rows[i][1];
    }
  }
  return FormatWindow(dims);
}

StatusOr<std::string> Lowering::ConvLabels(const Op& op) {
  const Attr* a = op.FindAttr("dim_numbers");
  if (!a) a = op.FindAttr("dimension_numbers");
  if (!a) return source_.ErrorAt(op.pos, op.name + " needs dimension numbers");
  std::string text;
  if (a->kind == Attr::Kind::kWord) {
    text = a->s;
  } else if (a->kind == Attr::Kind::kOpaque) {
    if (!a->entries.empty()) {
      // #stablehlo.conv<raw input_batch_dimension = 0, ...> or keyed fields.
      ConvDimensionNumbers d;
      auto one = [&](std::string_view key, int64_t& out) -> Status {
        const Attr* v = a->Find(key);
        if (!v) return OkStatus();
        ANVIL_ASSIGN_OR_RETURN(auto ints, Ints(*v, op.pos));
        if (ints.size() == 1) out = ints[0];
        return OkStatus();
      };
      auto list = [&](std::string_view key, std::vector<int64_t>& out) -> Status {
        const Attr* v = a->Find(key);
        if (!v) return OkStatus();
        ANVIL_ASSIGN_OR_RETURN(out, Ints(*v, op.pos));
        return OkStatus();
      };
      ANVIL_RETURN_IF_ERROR(one("input_batch_dimension", d.input_batch));
      ANVIL_RETURN_IF_ERROR(one("input_feature_dimension", d.input_feature));
      ANVIL_RETURN_IF_ERROR(list("input_spatial_dimensions", d.input_spatial));
      ANVIL_RETURN_IF_ERROR(one("kernel_input_feature_dimension", d.kernel_input_feature));
      ANVIL_RETURN_IF_ERROR(one("kernel_output_feature_dimension", d.kernel_output_feature));
      ANVIL_RETURN_IF_ERROR(list("kernel_spatial_dimensions", d.kernel_spatial));
      ANVIL_RETURN_IF_ERROR(one("output_batch_dimension", d.output_batch));
      ANVIL_RETURN_IF_ERROR(one("output_feature_dimension", d.output_feature));
      ANVIL_RETURN_IF_ERROR(list("output_spatial_dimensions", d.output_spatial));
      return FormatDimLabels(d, static_cast<int>(d.input_spatial.size() + 2));
    }
    text = a->raw;
    if (text.rfind("raw", 0) == 0) return source_.ErrorAt(op.pos, "unreadable convolution dimension numbers");
  } else {
    return source_.ErrorAt(op.pos, "unreadable convolution dimension numbers");
  }
  // `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`: each list names dimension i's role.
  std::string labels;
  for (char ch : text) {
    if (ch == ' ' || ch == ',' || ch == '[') continue;
    if (ch == ']') continue;
    if (ch == 'x' && !labels.empty() && labels.find('_') == std::string::npos) {
      labels += '_';
      continue;
    }
    labels += ch;
  }
  auto check = ParseDimLabels(labels);
  if (!check.ok()) return source_.ErrorAt(op.pos, check.status().message());
  return labels;
}

Status Lowering::LowerAsCustomCall(const Op& op, Scope& scope, Computation& c,
                                  const std::vector<Instruction*>& operands, const std::vector<Shape>& results) {
  std::string options;
  for (const auto& [key, attr] : op.attributes) {
    if (!options.empty()) options += ", ";
    options += key + " = " + AttrText(attr);
  }
  std::vector<Attribute> attrs = {{"custom_call_target", QuoteString(op.name)}};
  if (!options.empty()) attrs.push_back({"backend_config", QuoteString("{" + options + "}")});
  std::vector<Computation*> bodies;
  for (const Region& region : op.regions) {
    ANVIL_ASSIGN_OR_RETURN(Computation * body, LowerClosedRegion(region, "custom_call_body", &scope));
    bodies.push_back(body);
  }
  if (!bodies.empty()) {
    std::string names = "{";
    for (size_t i = 0; i < bodies.size(); ++i) names += (i ? ", %" : "%") + bodies[i]->name;
    attrs.push_back({"called_computations", names + "}"});
  }
  Shape shape = results.size() == 1 ? results[0] : Shape::Tuple(results);
  Instruction* call = Emit(c, Opcode::kCustomCall, shape, operands, attrs);
  call->called_computations = bodies;
  if (op.results.empty()) return OkStatus();
  return BindResults(op, scope, c, call, op.results.size());
}

Status Lowering::LowerRaggedDot(const Op& op, Scope& scope, Computation& c,
                                const std::vector<Instruction*>& operands) {
  if (operands.size() != 3) return source_.ErrorAt(op.pos, "ragged_dot takes lhs, rhs and group_sizes");
  ANVIL_ASSIGN_OR_RETURN(std::vector<Shape> results, ResultTypes(op));
  if (results.size() != 1) return source_.ErrorAt(op.pos, "ragged_dot has one result");
  const Attr* numbers = op.FindAttr("ragged_dot_dimension_numbers");
  if (!numbers) return source_.ErrorAt(op.pos, "ragged_dot needs ragged_dot_dimension_numbers");
  // The mhlo spelling nests the dot's own numbers one level down.
  const Attr* dot = numbers->Find("dot_dimension_numbers");
  std::vector<Attribute> attrs;
  auto add = [&](const Attr* from, std::string_view key, std::string hlo_key) -> Status {
    const Attr* value = from ? from->Find(key) : nullptr;
    if (!value) return OkStatus();
    ANVIL_ASSIGN_OR_RETURN(std::vector<int64_t> dims, Ints(*value, op.pos));
    if (!dims.empty()) attrs.push_back({std::move(hlo_key), FormatIntList(dims)});
    return OkStatus();
  };
  ANVIL_RETURN_IF_ERROR(add(dot ? dot : numbers, "lhs_batching_dimensions", "lhs_batch_dims"));
  ANVIL_RETURN_IF_ERROR(add(dot ? dot : numbers, "rhs_batching_dimensions", "rhs_batch_dims"));
  ANVIL_RETURN_IF_ERROR(add(dot ? dot : numbers, "lhs_contracting_dimensions", "lhs_contracting_dims"));
  ANVIL_RETURN_IF_ERROR(add(dot ? dot : numbers, "rhs_contracting_dimensions", "rhs_contracting_dims"));
  ANVIL_RETURN_IF_ERROR(add(numbers, "lhs_ragged_dimensions", "lhs_ragged_dims"));
  ANVIL_RETURN_IF_ERROR(add(numbers, "rhs_group_dimensions", "rhs_group_dims"));
  return BindResults(op, scope, c, Emit(c, Opcode::kRaggedDot, results[0], operands, attrs), 1);
}

Status Lowering::LowerOp(const Op& op, Scope& scope, Computation& c) {
  current_pos_ = op.pos;
  current_op_ = &op;
  if (op.name == "builtin.unrealized_conversion_cast") {
    // Read only from bytecode, one operand and one result: the value passes
    // through (a cast to a PRNG key type and back is the identity).
    if (op.operands.size() != 1 || op.results.size() != 1) {
      return source_.ErrorAt(op.pos, "unrealized_conversion_cast takes one operand and gives one result");
    }
    ANVIL_ASSIGN_OR_RETURN(Instruction * value, Lookup(scope, op.operands[0]));
    scope.values[op.results[0]] = value;
    return OkStatus();
  }
  std::vector<Instruction*> operands;
  for (const mlir::Value& v : op.operands) {
    ANVIL_ASSIGN_OR_RETURN(Instruction * value, Lookup(scope, v));
    operands.push_back(value);
  }
  ANVIL_ASSIGN_OR_RETURN(std::vector<Shape> results, ResultTypes(op));
  const std::string& full = op.name;
  const size_t dot = full.find('.');
  const std::string dialect = dot == std::string::npos ? "" : full.substr(0, dot);
  const std::string name = dot == std::string::npos ? full : full.substr(dot + 1);
  auto need_operands = [&](size_t n) -> Status {
    if (operands.size() != n) {
      return source_.ErrorAt(op.pos, full + " takes " + std::to_string(n) + " operands, got " +
                                         std::to_string(operands.size()));
    }
    return OkStatus();
  };
  auto single_result = [&]() -> StatusOr<Shape> {
    if (results.size() != 1 || op.results.size() != 1) {
      return source_.ErrorAt(op.pos, full + " must have exactly one result");
    }
    return results[0];
  };
  auto bind = [&](Instruction* value) -> Status { return BindResults(op, scope, c, value, op.results.size()); };
  // Emits `opcode` producing all results: one value, or a tuple split by gte.
  auto emit_multi = [&](Opcode opcode, std::vector<Instruction*> ops, std::vector<Attribute> attrs) -> Instruction* {
    Shape shape = results.size() == 1 ? results[0] : Shape::Tuple(results);
    return Emit(c, opcode, shape, std::move(ops), std::move(attrs));
  };
  auto with_computations = [&](Instruction* i, std::initializer_list<Computation*> callees) {
    for (Computation* callee : callees) i->called_computations.push_back(callee);
    return i;
  };

  if (dialect == "check") {
    // Checks become side-effecting custom calls the conformance runner reads.
    std::vector<Instruction*> args = operands;
    if (const Attr* value = op.FindAttr("value")) {
      if (operands.empty()) return source_.ErrorAt(op.pos, full + " needs an operand");
      Shape type = value->type ? *value->type : operands[0]->shape;
      ANVIL_ASSIGN_OR_RETURN(Literal literal, source_.DenseValue(*value, type));
      Instruction* constant = Emit(c, Opcode::kConstant, type, {});
      constant->literal = std::move(literal);
      args.push_back(constant);
    }
    std::string options;
    for (const auto& [key, attr] : op.attributes) {
      if (key == "value") continue;
      if (!options.empty()) options += ", ";
      options += key + " = " + AttrText(attr);
    }
    Shape result = op.results.empty() ? Shape::Tuple({}) : results.at(0);
    std::vector<Attribute> attrs = {{"custom_call_target", Quoted(full)}, {"custom_call_has_side_effect", "true"}};
    if (!options.empty()) attrs.push_back({"backend_config", Quoted("{" + options + "}")});
    Instruction* call = Emit(c, Opcode::kCustomCall, result, args, attrs);
    if (!op.results.empty()) return bind(call);
    return OkStatus();
  }

  if (full == "func.call") {
    const Attr* callee = op.FindAttr("callee");
    if (!callee || callee->kind != Attr::Kind::kSymbol) return source_.ErrorAt(op.pos, "func.call needs @callee");
    ANVIL_ASSIGN_OR_RETURN(Computation * target, ComputationForFunction(callee->s, op.pos));
    Instruction* call = Emit(c, Opcode::kCall, target->ResultShape(), operands, {{"to_apply", "%" + target->name}});
    call->called_computations.push_back(target);
    return bind(call);
  }

  if (dialect == "interpreter") {
    std::vector<Attribute> attrs = {{"custom_call_target", Quoted(full)}, {"custom_call_has_side_effect", "true"}};
    std::vector<Computation*> callees;
    std::string config;
    for (const auto& [key, attr] : op.attributes) {
      if (!config.empty()) config += ", ";
      config += key + " = " + AttrText(attr);
      std::function<Status(const Attr&)> collect = [&](const Attr& a) -> Status {
        if (a.kind == Attr::Kind::kSymbol) {
          ANVIL_ASSIGN_OR_RETURN(Computation * callee, ComputationForFunction(a.s, op.pos));
          if (std::find(callees.begin(), callees.end(), callee) == callees.end()) callees.push_back(callee);
        }
        for (const Attr& e : a.list) ANVIL_RETURN_IF_ERROR(collect(e));
        return OkStatus();
      };
      ANVIL_RETURN_IF_ERROR(collect(attr));
    }
    if (!config.empty()) attrs.push_back({"backend_config", Quoted("{" + config + "}")});
    if (!callees.empty()) {
      std::string names = "{";
      for (size_t i = 0; i < callees.size(); ++i) names += (i ? ", %" : "%") + callees[i]->name;
      attrs.push_back({"called_computations", names + "}"});
    }
    Instruction* call = emit_multi(Opcode::kCustomCall, operands, attrs);
    for (Computation* callee : callees) call->called_computations.push_back(callee);
    if (op.results.empty()) return OkStatus();
    return bind(call);
  }

  if (dialect == "chlo") {
    if (auto opcode = ChloOpcode(name)) {
      ANVIL_RETURN_IF_ERROR(need_operands(1));
      ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
      return bind(Emit(c, *opcode, shape, operands));
    }
    if (name == "ragged_dot") return LowerRaggedDot(op, scope, c, operands);
    if (name == "top_k") {
      ANVIL_ASSIGN_OR_RETURN(int64_t k, IntAttr(op, {"k"}));
      return bind(emit_multi(Opcode::kTopK, operands, {{"k", std::to_string(k)}, {"largest", "true"}}));
    }
    // The rest of chlo (lgamma, digamma, erf_inv, mulhi, ...) has no HLO
    // opcode: a custom call names it, as XLA's own lowering would before
    // decomposing it.
    return LowerAsCustomCall(op, scope, c, operands, results);
  }

  if (full == "stablehlo.collective_reduce") {
    // Newer than XLA's opcodes: kept as a named custom call with its body.
    return LowerAsCustomCall(op, scope, c, operands, results);
  }

  if (dialect != "stablehlo" && dialect != "mhlo") {
    return source_.ErrorAt(op.pos, "unknown operation '" + full + "'");
  }

  if (name == "constant") {
    const Attr* value = op.FindAttr("value");
    if (!value || value->kind != Attr::Kind::kDense) return source_.ErrorAt(op.pos, "constant needs a dense value");
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    Shape type = value->type ? *value->type : shape;
    if (shape.IsArray() && shape.ElementCount() > kMaxSplatConstantElements && type.dims() == shape.dims()) {
      // A large splat is a broadcast of its value, as canonical form has it
      // (BroadcastLargeSplats), without building the array first.
      if (std::optional<Literal> one = source_.DenseSplat(*value, type)) {
        Instruction* scalar = Emit(c, Opcode::kConstant, one->shape(), {});
        scalar->literal = std::move(*one);
        return bind(Emit(c, Opcode::kBroadcast, shape, {scalar}, {{"dimensions", "{}"}}));
      }
    }
    ANVIL_ASSIGN_OR_RETURN(Literal literal, source_.DenseValue(*value, type));
    Instruction* constant = Emit(c, Opcode::kConstant, shape, {});
    constant->literal = std::move(literal);
    return bind(constant);
  }

  if (name == "select" && operands.size() == 3 && operands[0]->shape.rank() == 0 && results.size() == 1 &&
      results[0].rank() > 0) {
    // HLO's select takes a predicate of the result's shape.
    Shape pred_shape(ElementType::kPred, results[0].dims());
    Instruction* pred = Emit(c, Opcode::kBroadcast, pred_shape, {operands[0]}, {{"dimensions", "{}"}});
    return bind(Emit(c, Opcode::kSelect, results[0], {pred, operands[1], operands[2]}));
  }
  if (name == "select") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    return bind(Emit(c, Opcode::kSelect, shape, operands));
  }

  if (name == "optimization_barrier") {
    Instruction* tuple = TupleOf(c, operands);
    Instruction* barrier = Emit(c, Opcode::kOptimizationBarrier, tuple->shape, {tuple});
    // The barrier yields a tuple even of one value; each result is an element.
    if (op.results.size() == 1 && operands.size() == 1) return bind(GetTupleElement(c, barrier, 0));
    return BindResults(op, scope, c, barrier, op.results.size());
  }

  if (name == "create_token") return bind(Emit(c, Opcode::kAfterAll, Shape::Token(), operands));

  if (auto opcode = PlainOpcode(name)) {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    return bind(Emit(c, *opcode, shape, operands));
  }

  if (name == "compare") {
    ANVIL_RETURN_IF_ERROR(need_operands(2));
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    std::string direction, type;
    if (const Attr* words = op.FindAttr("_words")) {
      if (!words->list.empty()) direction = words->list[0].s;
      if (words->list.size() > 1) type = words->list[1].s;
    }
    if (const Attr* a = op.FindAttr("comparison_direction")) direction = EnumWord(*a);
    if (const Attr* a = op.FindAttr("compare_type")) type = EnumWord(*a);
    static const std::set<std::string> kDirections = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    if (!kDirections.count(direction)) {
      return source_.ErrorAt(op.pos, "compare needs a direction (EQ, NE, LT, LE, GT, GE), got '" + direction + "'");
    }
    std::vector<Attribute> attrs = {{"direction", direction}};
    if (!type.empty() && type != "NOTYPE") attrs.push_back({"type", type});
    return bind(Emit(c, Opcode::kCompare, shape, operands, attrs));
  }

  if (name == "iota") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    ANVIL_ASSIGN_OR_RETURN(int64_t dim, IntAttr(op, {"dim", "iota_dimension"}));
    return bind(Emit(c, Opcode::kIota, shape, {}, {{"iota_dimension", std::to_string(dim)}}));
  }
  if (name == "dynamic_iota") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    ANVIL_ASSIGN_OR_RETURN(int64_t dim, IntAttr(op, {"iota_dimension", "dim"}));
    return bind(Emit(c, Opcode::kIota, shape, {}, {{"iota_dimension", std::to_string(dim)}}));
  }

  if (name == "broadcast_in_dim" || name == "dynamic_broadcast_in_dim") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    ANVIL_ASSIGN_OR_RETURN(auto dims, IntsAttr(op, {"dims", "broadcast_dimensions"}));
    return bind(Emit(c, Opcode::kBroadcast, shape, {operands.at(0)}, {{"dimensions", FormatIntList(dims)}}));
  }
  if (name == "broadcast") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    ANVIL_RETURN_IF_ERROR(need_operands(1));
    std::vector<int64_t> dims;
    int64_t added = shape.rank() - operands[0]->shape.rank();
    for (int64_t i = 0; i < operands[0]->shape.rank(); ++i) dims.push_back(added + i);
    return bind(Emit(c, Opcode::kBroadcast, shape, operands, {{"dimensions", FormatIntList(dims)}}));
  }
  if (name == "dynamic_reshape") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    return bind(Emit(c, Opcode::kReshape, shape, {operands.at(0)}));
  }

  if (name == "transpose") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    ANVIL_ASSIGN_OR_RETURN(auto dims, IntsAttr(op, {"dims", "permutation"}));
    return bind(Emit(c, Opcode::kTranspose, shape, operands, {{"dimensions", FormatIntList(dims)}}));
  }

  if (name == "reverse") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    ANVIL_ASSIGN_OR_RETURN(auto dims, IntsAttr(op, {"dims", "dimensions"}));
    return bind(Emit(c, Opcode::kReverse, shape, operands, {{"dimensions", FormatIntList(dims)}}));
  }

  if (name == "slice") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    std::vector<SliceDim> dims;
    if (const Attr* slice = op.FindAttr("slice")) {
      for (const Attr& bound : slice->list) {
        SliceDim d;
        d.start = bound.list.at(0).i;
        d.limit = bound.list.size() > 1 ? bound.list[1].i : 0;
        d.stride = bound.list.size() > 2 ? bound.list[2].i : 1;
        dims.push_back(d);
      }
    } else {
      ANVIL_ASSIGN_OR_RETURN(auto starts, IntsAttr(op, {"start_indices"}));
      ANVIL_ASSIGN_OR_RETURN(auto limits, IntsAttr(op, {"limit_indices"}));
      ANVIL_ASSIGN_OR_RETURN(auto strides, IntsAttr(op, {"strides"}, false));
      if (limits.size() != starts.size()) return source_.ErrorAt(op.pos, "slice bounds differ in length");
      for (size_t i = 0; i < starts.size(); ++i) {
        dims.push_back({starts[i], limits[i], i < strides.size() ? strides[i] : 1});
      }
    }
    return bind(Emit(c, Opcode::kSlice, shape, operands, {{"slice", FormatSlice(dims)}}));
  }

  if (name == "real_dynamic_slice") {
    // Static shapes: the bounds must be constants, and it is a slice.
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    ANVIL_RETURN_IF_ERROR(need_operands(4));
    std::vector<int64_t> bounds[3];
    for (int k = 0; k < 3; ++k) {
      Instruction* b = operands[1 + k];
      if (b->opcode != Opcode::kConstant || !b->literal || b->literal->elided()) {
        return source_.ErrorAt(op.pos, "real_dynamic_slice needs constant start, limit and stride operands");
      }
      for (int64_t i = 0; i < b->literal->element_count(); ++i) bounds[k].push_back(b->literal->GetInt(i));
    }
    std::vector<SliceDim> dims;
    for (size_t i = 0; i < bounds[0].size() && i < bounds[1].size() && i < bounds[2].size(); ++i) {
      dims.push_back({bounds[0][i], bounds[1][i], bounds[2][i]});
    }
    return bind(Emit(c, Opcode::kSlice, shape, {operands[0]}, {{"slice", FormatSlice(dims)}}));
  }

  if (name == "concatenate") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    ANVIL_ASSIGN_OR_RETURN(int64_t dim, IntAttr(op, {"dim", "dimension"}));
    return bind(Emit(c, Opcode::kConcatenate, shape, operands, {{"dimensions", FormatIntList({dim})}}));
  }

  if (name == "pad" || name == "dynamic_pad") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    std::vector<int64_t> low, high, interior;
    if (name == "dynamic_pad") {
      // The amounts come as constant operands.
      ANVIL_RETURN_IF_ERROR(need_operands(5));
      std::vector<int64_t>* outs[] = {&low, &high, &interior};
      for (int k = 0; k < 3; ++k) {
        Instruction* amount = operands[2 + k];
        if (amount->opcode != Opcode::kConstant || !amount->literal || amount->literal->elided()) {
          return source_.ErrorAt(op.pos, "dynamic_pad needs constant padding amounts");
        }
        for (int64_t i = 0; i < amount->literal->element_count(); ++i) outs[k]->push_back(amount->literal->GetInt(i));
      }
      operands.resize(2);
    } else {
      ANVIL_ASSIGN_OR_RETURN(low, IntsAttr(op, {"low", "edge_padding_low"}));
      ANVIL_ASSIGN_OR_RETURN(high, IntsAttr(op, {"high", "edge_padding_high"}));
      ANVIL_ASSIGN_OR_RETURN(interior, IntsAttr(op, {"interior", "interior_padding"}));
    }
    if (low.size() != high.size() || low.size() != interior.size()) {
      return source_.ErrorAt(op.pos, "pad amounts differ in length");
    }
    std::vector<PadDim> dims;
    for (size_t i = 0; i < low.size(); ++i) dims.push_back({low[i], high[i], interior[i]});
    return bind(Emit(c, Opcode::kPad, shape, operands, {{"padding", FormatPadding(dims)}}));
  }

  if (name == "dynamic_slice") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    ANVIL_ASSIGN_OR_RETURN(auto sizes, IntsAttr(op, {"sizes", "slice_sizes"}));
    return bind(Emit(c, Opcode::kDynamicSlice, shape, operands, {{"dynamic_slice_sizes", FormatIntList(sizes)}}));
  }

  if (name == "get_tuple_element") {
    ANVIL_ASSIGN_OR_RETURN(int64_t index, IntAttr(op, {"index"}));
    ANVIL_RETURN_IF_ERROR(need_operands(1));
    if (!operands[0]->shape.IsTuple() || index < 0 ||
        index >= static_cast<int64_t>(operands[0]->shape.tuple_elements().size())) {
      return source_.ErrorAt(op.pos, "get_tuple_element index " + std::to_string(index) + " is out of range");
    }
    return bind(GetTupleElement(c, operands[0], index));
  }

  if (name == "reduce_precision") {
    int64_t exponent = 0, mantissa = 0;
    if (const Attr* format = op.FindAttr("format")) {
      // e5m10
      if (sscanf(format->s.c_str(), "e%ldm%ld", &exponent, &mantissa) != 2) {
        return source_.ErrorAt(op.pos, "reduce_precision format must read eNmM, got '" + format->s + "'");
      }
    } else {
      ANVIL_ASSIGN_OR_RETURN(exponent, IntAttr(op, {"exponent_bits"}));
      ANVIL_ASSIGN_OR_RETURN(mantissa, IntAttr(op, {"mantissa_bits"}));
    }
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    return bind(Emit(c, Opcode::kReducePrecision, shape, operands,
                     {{"exponent_bits", std::to_string(exponent)}, {"mantissa_bits", std::to_string(mantissa)}}));
  }

  if (name == "dot_general" || name == "dot") {
    ANVIL_RETURN_IF_ERROR(need_operands(2));
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    std::vector<int64_t> lb, rb, lc, rc;
    if (name == "dot") {
      lc = {operands[0]->shape.rank() - 1};
      if (operands[1]->shape.rank() > 0) rc = {0};
    } else if (const Attr* d = op.FindAttr("dot_dimension_numbers")) {
      auto get = [&](std::string_view key, std::vector<int64_t>& out) -> Status {
        if (const Attr* v = d->Find(key)) {
        ANVIL_ASSIGN_OR_RETURN(out, Ints(*v, op.pos));
      }
        return OkStatus();
      };
      ANVIL_RETURN_IF_ERROR(get("lhs_batching_dimensions", lb));
      ANVIL_RETURN_IF_ERROR(get("rhs_batching_dimensions", rb));
      ANVIL_RETURN_IF_ERROR(get("lhs_contracting_dimensions", lc));
      ANVIL_RETURN_IF_ERROR(get("rhs_contracting_dimensions", rc));
    } else {
      if (const Attr* b = op.FindAttr("batching_dims")) {
        if (b->list.size() != 2) return source_.ErrorAt(op.pos, "batching_dims must read [..] x [..]");
        ANVIL_ASSIGN_OR_RETURN(lb, Ints(b->list[0], op.pos));
        ANVIL_ASSIGN_OR_RETURN(rb, Ints(b->list[1], op.pos));
      }
      if (const Attr* k = op.FindAttr("contracting_dims")) {
        if (k->list.size() != 2) return source_.ErrorAt(op.pos, "contracting_dims must read [..] x [..]");
        ANVIL_ASSIGN_OR_RETURN(lc, Ints(k->list[0], op.pos));
        ANVIL_ASSIGN_OR_RETURN(rc, Ints(k->list[1], op.pos));
      }
    }
    std::vector<Attribute> attrs;
    if (!lb.empty()) attrs.push_back({"lhs_batch_dims", FormatIntList(lb)});
    attrs.push_back({"lhs_contracting_dims", FormatIntList(lc)});
    if (!rb.empty()) attrs.push_back({"rhs_batch_dims", FormatIntList(rb)});
    attrs.push_back({"rhs_contracting_dims", FormatIntList(rc)});
    const Attr* precision = op.FindAttr("precision");
    if (!precision) precision = op.FindAttr("precision_config");
    if (precision && precision->kind == Attr::Kind::kArray && !precision->list.empty()) {
      std::string p = "{";
      bool all_default = true;
      for (size_t i = 0; i < precision->list.size(); ++i) {
        std::string word = Lower(EnumWord(precision->list[i]));
        all_default &= word == "default";
        p += (i ? "," : "") + word;
      }
      if (!all_default) attrs.push_back({"operand_precision", p + "}"});
    }
    return bind(Emit(c, Opcode::kDot, shape, operands, attrs));
  }

  if (name == "convolution" || name == "dynamic_conv") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    std::vector<int64_t> dynamic_padding;  // dynamic_conv: [spatial, 2] from a constant operand
    if (name == "dynamic_conv") {
      ANVIL_RETURN_IF_ERROR(need_operands(3));
      Instruction* padding = operands[2];
      if (padding->opcode != Opcode::kConstant || !padding->literal || padding->literal->elided()) {
        return source_.ErrorAt(op.pos, "dynamic_conv needs a constant padding operand");
      }
      for (int64_t k = 0, k_end = padding->literal->element_count(); k < k_end; ++k) {
        dynamic_padding.push_back(padding->literal->GetInt(k));
      }
      operands.resize(2);
    }
    ANVIL_RETURN_IF_ERROR(need_operands(2));
    ANVIL_ASSIGN_OR_RETURN(std::string labels, ConvLabels(op));
    ANVIL_ASSIGN_OR_RETURN(ConvDimensionNumbers dnums, ParseDimLabels(labels));
    std::vector<int64_t> size;
    const Shape& kernel = operands[1]->shape;
    for (int64_t d : dnums.kernel_spatial) {
      if (d >= kernel.rank()) return source_.ErrorAt(op.pos, "kernel spatial dimension out of range");
      size.push_back(kernel.dim(static_cast<int>(d)));
    }
    ANVIL_ASSIGN_OR_RETURN(std::string window, WindowText(op, size));
    if (!dynamic_padding.empty()) {
      auto dims = ParseWindow(window);
      if (!dims.ok() || dynamic_padding.size() != 2 * dims->size()) {
        return source_.ErrorAt(op.pos, "dynamic_conv padding needs two values per spatial dimension");
      }
      for (size_t d = 0; d < dims->size(); ++d) {
        (*dims)[d].pad_low = dynamic_padding[2 * d];
        (*dims)[d].pad_high = dynamic_padding[2 * d + 1];
      }
      window = FormatWindow(*dims);
    }
    std::vector<Attribute> attrs;
    if (!size.empty()) attrs.push_back({"window", window});
    attrs.push_back({"dim_labels", labels});
    int64_t feature_groups = 1, batch_groups = 1;
    if (const Attr* a = op.FindAttr("feature_group_count")) feature_groups = a->i;
    if (const Attr* a = op.FindAttr("batch_group_count")) batch_groups = a->i;
    if (feature_groups != 1) attrs.push_back({"feature_group_count", std::to_string(feature_groups)});
    if (batch_groups != 1) attrs.push_back({"batch_group_count", std::to_string(batch_groups)});
    return bind(Emit(c, Opcode::kConvolution, shape, operands, attrs));
  }

  if (name == "fft") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    const Attr* type = op.FindAttr("type");
    if (!type) type = op.FindAttr("fft_type");
    if (!type) return source_.ErrorAt(op.pos, "fft needs a type");
    ANVIL_ASSIGN_OR_RETURN(auto length, IntsAttr(op, {"length", "fft_length"}));
    return bind(Emit(c, Opcode::kFft, shape, operands,
                     {{"fft_type", EnumWord(*type)}, {"fft_length", FormatIntList(length)}}));
  }

  if (name == "rng_bit_generator") {
    // The pretty form's `algorithm = THREE_FRY`; bytecode (VHLO) and the
    // generic form name it rng_algorithm.
    const Attr* algorithm = op.FindAttr("algorithm");
    if (!algorithm) algorithm = op.FindAttr("rng_algorithm");
    std::string word = algorithm ? Lower(EnumWord(*algorithm)) : "default";
    return bind(emit_multi(Opcode::kRngBitGenerator, operands, {{"algorithm", "rng_" + word}}));
  }
  if (name == "rng") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    const Attr* distribution = op.FindAttr("rng_distribution");
    if (!distribution) distribution = op.FindAttr("distribution");
    std::string word = distribution ? Lower(EnumWord(*distribution)) : "uniform";
    operands.resize(std::min<size_t>(operands.size(), 2));
    return bind(Emit(c, Opcode::kRng, shape, operands, {{"distribution", "rng_" + word}}));
  }

  if (name == "get_dimension_size") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    ANVIL_ASSIGN_OR_RETURN(int64_t dim, IntAttr(op, {"dimension", "dim"}));
    return bind(Emit(c, Opcode::kGetDimensionSize, shape, operands, {{"dimensions", FormatIntList({dim})}}));
  }

  if (name == "cholesky") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    bool lower = BoolAttr(op, "lower").value_or(false);
    return bind(Emit(c, Opcode::kCholesky, shape, operands, {{"lower", lower ? "true" : "false"}}));
  }

  if (name == "triangular_solve") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    const Attr* transpose = op.FindAttr("transpose_a");
    std::vector<Attribute> attrs = {
        {"left_side", BoolAttr(op, "left_side").value_or(false) ? "true" : "false"},
        {"lower", BoolAttr(op, "lower").value_or(false) ? "true" : "false"},
        {"unit_diagonal", BoolAttr(op, "unit_diagonal").value_or(false) ? "true" : "false"},
        {"transpose_a", transpose ? EnumWord(*transpose) : "NO_TRANSPOSE"}};
    return bind(Emit(c, Opcode::kTriangularSolve, shape, operands, attrs));
  }

  if (name == "custom_call") {
    const Attr* target = op.FindAttr("callee");
    if (!target) target = op.FindAttr("call_target_name");
    if (!target) return source_.ErrorAt(op.pos, "custom_call needs a target");
    std::vector<Attribute> attrs = {{"custom_call_target", Quoted(target->s)}};
    if (BoolAttr(op, "has_side_effect").value_or(false)) attrs.push_back({"custom_call_has_side_effect", "true"});
    if (const Attr* config = op.FindAttr("backend_config")) {
      attrs.push_back({"backend_config", Quoted(config->kind == Attr::Kind::kString ? config->s : AttrText(*config))});
    }
    // API_VERSION_1 (original) is the default, written or not.
    if (const Attr* version = op.FindAttr("api_version"); version && version->i != 1) {
      attrs.push_back({"api_version", "API_VERSION_" + std::to_string(version->i)});
    }
    Shape shape = results.size() == 1 ? results[0] : Shape::Tuple(results);
    Instruction* call = Emit(c, Opcode::kCustomCall, shape, operands, attrs);
    if (op.results.empty()) return OkStatus();
    return bind(call);
  }

  if (name == "composite") {
    const Attr* decomposition = op.FindAttr("decomposition");
    if (!decomposition || decomposition->kind != Attr::Kind::kSymbol) {
      return source_.ErrorAt(op.pos, "composite needs decomposition = @function");
    }
    ANVIL_ASSIGN_OR_RETURN(Computation * target, ComputationForFunction(decomposition->s, op.pos));
    const Attr* composite_name = op.FindAttr("name");
    std::string fa = "{composite.name=" + Quoted(composite_name ? composite_name->s : "") + "}";
    Instruction* call = Emit(c, Opcode::kCall, target->ResultShape(), operands,
                             {{"to_apply", "%" + target->name}, {"is_composite", "true"}, {"frontend_attributes", fa}});
    call->called_computations.push_back(target);
    return bind(call);
  }

  // --- ops with regions
  if (name == "reduce") {
    if (operands.size() % 2 != 0) return source_.ErrorAt(op.pos, "reduce takes inputs and as many init values");
    ANVIL_ASSIGN_OR_RETURN(auto dims, IntsAttr(op, {"dimensions"}));
    size_t n = operands.size() / 2;
    Computation* body;
    if (const Attr* applies = op.FindAttr("applies")) {
      std::vector<Shape> inits;
      for (size_t i = n; i < operands.size(); ++i) inits.push_back(operands[i]->shape);
      ANVIL_ASSIGN_OR_RETURN(body, ScalarReducer(applies->s, inits, op.pos));
    } else {
      if (op.regions.size() != 1) return source_.ErrorAt(op.pos, "reduce needs a body");
      ANVIL_ASSIGN_OR_RETURN(body, LowerClosedRegion(op.regions[0], "reduce_body", &scope));
    }
    Instruction* reduce =
        emit_multi(Opcode::kReduce, operands, {{"dimensions", FormatIntList(dims)}, {"to_apply", "%" + body->name}});
    return bind(with_computations(reduce, {body}));
  }

  if (name == "reduce_window") {
    if (op.regions.size() != 1) return source_.ErrorAt(op.pos, "reduce_window needs a body");
    ANVIL_ASSIGN_OR_RETURN(auto size, IntsAttr(op, {"window_dimensions"}));
    ANVIL_ASSIGN_OR_RETURN(std::string window, WindowText(op, size));
    ANVIL_ASSIGN_OR_RETURN(Computation * body, LowerClosedRegion(op.regions[0], "reduce_window_body", &scope));
    Instruction* rw = emit_multi(Opcode::kReduceWindow, operands, {{"window", window}, {"to_apply", "%" + body->name}});
    return bind(with_computations(rw, {body}));
  }

  if (name == "select_and_scatter") {
    if (op.regions.size() != 2) return source_.ErrorAt(op.pos, "select_and_scatter needs select and scatter bodies");
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    std::vector<int64_t> size;
    if (op.FindAttr("window_dimensions")) {
      ANVIL_ASSIGN_OR_RETURN(size, IntsAttr(op, {"window_dimensions"}));
    } else {
      size.assign(static_cast<size_t>(operands.at(0)->shape.rank()), 1);
    }
    ANVIL_ASSIGN_OR_RETURN(std::string window, WindowText(op, size));
    ANVIL_ASSIGN_OR_RETURN(Computation * select, LowerClosedRegion(op.regions[0], "select", &scope));
    ANVIL_ASSIGN_OR_RETURN(Computation * scatter, LowerClosedRegion(op.regions[1], "scatter", &scope));
    Instruction* sas = Emit(c, Opcode::kSelectAndScatter, shape, operands,
                            {{"window", window}, {"select", "%" + select->name}, {"scatter", "%" + scatter->name}});
    return bind(with_computations(sas, {select, scatter}));
  }

  if (name == "scatter") {
    if (op.regions.size() != 1) return source_.ErrorAt(op.pos, "scatter needs a body");
    const Attr* d = op.FindAttr("scatter_dimension_numbers");
    if (!d) return source_.ErrorAt(op.pos, "scatter needs scatter_dimension_numbers");
    std::vector<Attribute> attrs;
    auto add_list = [&](std::string_view key, std::string hlo_key, bool always) -> Status {
      std::vector<int64_t> values;
      if (const Attr* v = d->Find(key)) {
        ANVIL_ASSIGN_OR_RETURN(values, Ints(*v, op.pos));
      }
      if (always || !values.empty()) attrs.push_back({std::move(hlo_key), FormatIntList(values)});
      return OkStatus();
    };
    ANVIL_RETURN_IF_ERROR(add_list("update_window_dims", "update_window_dims", true));
    ANVIL_RETURN_IF_ERROR(add_list("inserted_window_dims", "inserted_window_dims", true));
    ANVIL_RETURN_IF_ERROR(add_list("input_batching_dims", "input_batching_dims", false));
    ANVIL_RETURN_IF_ERROR(add_list("scatter_indices_batching_dims", "scatter_indices_batching_dims", false));
    ANVIL_RETURN_IF_ERROR(add_list("scatter_dims_to_operand_dims", "scatter_dims_to_operand_dims", true));
    int64_t index_vector_dim = 0;
    if (const Attr* v = d->Find("index_vector_dim")) index_vector_dim = v->i;
    attrs.push_back({"index_vector_dim", std::to_string(index_vector_dim)});
    if (BoolAttr(op, "indices_are_sorted").value_or(false)) attrs.push_back({"indices_are_sorted", "true"});
    if (BoolAttr(op, "unique_indices").value_or(false)) attrs.push_back({"unique_indices", "true"});
    ANVIL_ASSIGN_OR_RETURN(Computation * body, LowerClosedRegion(op.regions[0], "scatter_body", &scope));
    attrs.push_back({"to_apply", "%" + body->name});
    return bind(with_computations(emit_multi(Opcode::kScatter, operands, attrs), {body}));
  }

  if (name == "gather" || name == "dynamic_gather") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    const Attr* d = op.FindAttr("dimension_numbers");
    if (!d) return source_.ErrorAt(op.pos, "gather needs dimension_numbers");
    std::vector<Attribute> attrs;
    auto add_list = [&](std::string_view key, bool always) -> Status {
      std::vector<int64_t> values;
      if (const Attr* v = d->Find(key)) {
        ANVIL_ASSIGN_OR_RETURN(values, Ints(*v, op.pos));
      }
      if (always || !values.empty()) attrs.push_back({std::string(key), FormatIntList(values)});
      return OkStatus();
    };
    ANVIL_RETURN_IF_ERROR(add_list("offset_dims", true));
    ANVIL_RETURN_IF_ERROR(add_list("collapsed_slice_dims", true));
    ANVIL_RETURN_IF_ERROR(add_list("operand_batching_dims", false));
    ANVIL_RETURN_IF_ERROR(add_list("start_indices_batching_dims", false));
    ANVIL_RETURN_IF_ERROR(add_list("start_index_map", true));
    int64_t index_vector_dim = 0;
    if (const Attr* v = d->Find("index_vector_dim")) index_vector_dim = v->i;
    attrs.push_back({"index_vector_dim", std::to_string(index_vector_dim)});
    std::vector<int64_t> slice_sizes;
    if (name == "dynamic_gather") {
      ANVIL_RETURN_IF_ERROR(need_operands(3));
      Instruction* sizes = operands[2];
      if (sizes->opcode != Opcode::kConstant || !sizes->literal || sizes->literal->elided()) {
        return source_.ErrorAt(op.pos, "dynamic_gather needs constant slice sizes");
      }
      for (int64_t i = 0; i < sizes->literal->element_count(); ++i) slice_sizes.push_back(sizes->literal->GetInt(i));
      operands.resize(2);
    } else {
      ANVIL_ASSIGN_OR_RETURN(slice_sizes, IntsAttr(op, {"slice_sizes"}));
    }
    attrs.push_back({"slice_sizes", FormatIntList(slice_sizes)});
    if (BoolAttr(op, "indices_are_sorted").value_or(false)) attrs.push_back({"indices_are_sorted", "true"});
    return bind(Emit(c, Opcode::kGather, shape, operands, attrs));
  }

  if (name == "sort") {
    if (op.regions.size() != 1) return source_.ErrorAt(op.pos, "sort needs a comparator");
    int64_t dim = -1;
    if (const Attr* a = op.FindAttr("dimension")) dim = a->i;
    if (dim < 0 && !operands.empty()) dim += operands[0]->shape.rank();
    ANVIL_ASSIGN_OR_RETURN(Computation * comparator, LowerClosedRegion(op.regions[0], "sort_comparator", &scope));
    std::vector<Attribute> attrs = {{"dimensions", FormatIntList({dim})}};
    if (BoolAttr(op, "is_stable").value_or(false)) attrs.push_back({"is_stable", "true"});
    attrs.push_back({"to_apply", "%" + comparator->name});
    return bind(with_computations(emit_multi(Opcode::kSort, operands, attrs), {comparator}));
  }

  if (name == "map") {
    if (op.regions.size() != 1) return source_.ErrorAt(op.pos, "map needs a body");
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    ANVIL_ASSIGN_OR_RETURN(auto dims, IntsAttr(op, {"dimensions"}));
    ANVIL_ASSIGN_OR_RETURN(Computation * body, LowerClosedRegion(op.regions[0], "map_body", &scope));
    Instruction* map = Emit(c, Opcode::kMap, shape, operands,
                            {{"dimensions", FormatIntList(dims)}, {"to_apply", "%" + body->name}});
    return bind(with_computations(map, {body}));
  }

  if (name == "while") {
    if (op.regions.size() != 2) return source_.ErrorAt(op.pos, "while needs cond and body regions");
    std::vector<Shape> loop_types;
    for (Instruction* o : operands) loop_types.push_back(o->shape);
    std::set<std::string> defined;
    std::vector<std::string> captures;
    for (const Region& r : op.regions) FreeValues(r, defined, captures);
    for (const std::string& name_used : captures) {
      if (!scope.values.count(name_used)) return source_.ErrorAt(op.pos, "use of undefined value '" + name_used + "'");
    }
    ANVIL_ASSIGN_OR_RETURN(Computation * cond,
                           LowerPackedRegion(op.regions[0], "while_cond", loop_types, captures, scope, false));
    ANVIL_ASSIGN_OR_RETURN(Computation * body,
                           LowerPackedRegion(op.regions[1], "while_body", loop_types, captures, scope, true));
    std::vector<Instruction*> packed = operands;
    for (const std::string& name_used : captures) packed.push_back(scope.values.at(name_used));
    Instruction* init = TupleOf(c, packed);
    Instruction* loop = Emit(c, Opcode::kWhile, init->shape, {init},
                             {{"condition", "%" + cond->name}, {"body", "%" + body->name}});
    with_computations(loop, {cond, body});
    if (op.results.size() != operands.size()) {
      return source_.ErrorAt(op.pos, "while has " + std::to_string(operands.size()) + " values but " +
                                         std::to_string(op.results.size()) + " results");
    }
    for (size_t i = 0; i < op.results.size(); ++i) {
      scope.values[op.results[i]] = GetTupleElement(c, loop, static_cast<int64_t>(i));
    }
    return OkStatus();
  }

  if (name == "if" || name == "case") {
    if (op.regions.empty()) return source_.ErrorAt(op.pos, name + " needs branches");
    ANVIL_RETURN_IF_ERROR(need_operands(1));
    std::vector<Computation*> branches;
    std::vector<Instruction*> branch_operands = {operands[0]};
    for (size_t b = 0; b < op.regions.size(); ++b) {
      std::set<std::string> defined;
      std::vector<std::string> captures;
      FreeValues(op.regions[b], defined, captures);
      for (const std::string& name_used : captures) {
        if (!scope.values.count(name_used)) {
          return source_.ErrorAt(op.pos, "use of undefined value '" + name_used + "'");
        }
      }
      ANVIL_ASSIGN_OR_RETURN(Computation * branch,
                             LowerPackedRegion(op.regions[b], name + "_branch", {}, captures, scope, false));
      branches.push_back(branch);
      std::vector<Instruction*> packed;
      for (const std::string& name_used : captures) packed.push_back(scope.values.at(name_used));
      branch_operands.push_back(TupleOf(c, packed));
    }
    Shape shape = branches[0]->ResultShape();
    std::vector<Attribute> attrs;
    if (name == "if") {
      if (branches.size() != 2) return source_.ErrorAt(op.pos, "if needs two branches");
      attrs = {{"true_computation", "%" + branches[0]->name}, {"false_computation", "%" + branches[1]->name}};
    } else {
      std::string list = "{";
      for (size_t b = 0; b < branches.size(); ++b) list += (b ? ", %" : "%") + branches[b]->name;
      attrs = {{"branch_computations", list + "}"}};
    }
    Instruction* conditional = Emit(c, Opcode::kConditional, shape, branch_operands, attrs);
    for (Computation* b : branches) conditional->called_computations.push_back(b);
    if (op.results.empty()) return OkStatus();
    return bind(conditional);
  }

  // --- collectives, with one replica and one partition by default
  auto replica_groups = [&](std::vector<Attribute>& attrs) -> Status {
    if (const Attr* groups = op.FindAttr("replica_groups")) {
      ANVIL_ASSIGN_OR_RETURN(auto rows, IntMatrix(*groups, op.pos));
      attrs.push_back({"replica_groups", FormatIntMatrix(rows)});
    }
    if (const Attr* channel = op.FindAttr("channel_handle")) {
      if (const Attr* handle = channel->Find("handle")) attrs.push_back({"channel_id", std::to_string(handle->i)});
    }
    if (BoolAttr(op, "use_global_device_ids").value_or(false)) attrs.push_back({"use_global_device_ids", "true"});
    return OkStatus();
  };
  if (name == "all_reduce" || name == "reduce_scatter") {
    if (op.regions.size() != 1) return source_.ErrorAt(op.pos, name + " needs a body");
    std::vector<Attribute> attrs;
    ANVIL_RETURN_IF_ERROR(replica_groups(attrs));
    if (name == "reduce_scatter") {
      ANVIL_ASSIGN_OR_RETURN(int64_t dim, IntAttr(op, {"scatter_dimension"}));
      attrs.push_back({"dimensions", FormatIntList({dim})});
    }
    ANVIL_ASSIGN_OR_RETURN(Computation * body, LowerClosedRegion(op.regions[0], name + "_body", &scope));
    attrs.push_back({"to_apply", "%" + body->name});
    Opcode opcode = name == "all_reduce" ? Opcode::kAllReduce : Opcode::kReduceScatter;
    return bind(with_computations(emit_multi(opcode, operands, attrs), {body}));
  }
  if (name == "all_gather") {
    std::vector<Attribute> attrs;
    ANVIL_ASSIGN_OR_RETURN(int64_t dim, IntAttr(op, {"all_gather_dim"}));
    attrs.push_back({"dimensions", FormatIntList({dim})});
    ANVIL_RETURN_IF_ERROR(replica_groups(attrs));
    return bind(emit_multi(Opcode::kAllGather, operands, attrs));
  }
  if (name == "all_to_all") {
    std::vector<Attribute> attrs;
    ANVIL_ASSIGN_OR_RETURN(int64_t split, IntAttr(op, {"split_dimension"}));
    ANVIL_ASSIGN_OR_RETURN(int64_t concat, IntAttr(op, {"concat_dimension"}));
    ANVIL_ASSIGN_OR_RETURN(int64_t count, IntAttr(op, {"split_count"}));
    attrs.push_back({"dimensions", FormatIntList({split})});
    attrs.push_back({"concat_dimension", std::to_string(concat)});
    attrs.push_back({"split_count", std::to_string(count)});
    ANVIL_RETURN_IF_ERROR(replica_groups(attrs));
    return bind(emit_multi(Opcode::kAllToAll, operands, attrs));
  }
  if (name == "collective_permute") {
    ANVIL_ASSIGN_OR_RETURN(Shape shape, single_result());
    std::vector<Attribute> attrs;
    if (const Attr* pairs = op.FindAttr("source_target_pairs")) {
      ANVIL_ASSIGN_OR_RETURN(auto rows, IntMatrix(*pairs, op.pos));
      attrs.push_back({"source_target_pairs", FormatIntMatrix(rows)});
    }
    ANVIL_RETURN_IF_ERROR(replica_groups(attrs));
    return bind(Emit(c, Opcode::kCollectivePermute, shape, operands, attrs));
  }
  if (name == "collective_broadcast") {
    std::vector<Attribute> attrs;
    ANVIL_RETURN_IF_ERROR(replica_groups(attrs));
    return bind(emit_multi(Opcode::kCollectiveBroadcast, operands, attrs));
  }

  // --- host transfers: the IR follows XLA's tuple-shaped forms
  auto config = [&](std::string_view key, std::string hlo_key, std::vector<Attribute>& attrs) {
    // An empty config is the default, written or not.
    if (const Attr* a = op.FindAttr(key); a && !a->s.empty()) attrs.push_back({std::move(hlo_key), Quoted(a->s)});
  };
  if (name == "infeed") {
    if (results.empty() || !results.back().IsToken()) return source_.ErrorAt(op.pos, "infeed must return a token last");
    std::vector<Shape> data(results.begin(), results.end() - 1);
    std::vector<Attribute> attrs;
    config("infeed_config", "infeed_config", attrs);
    Instruction* infeed =
        Emit(c, Opcode::kInfeed, Shape::Tuple({Shape::Tuple(data), Shape::Token()}), operands, attrs);
    Instruction* values = GetTupleElement(c, infeed, 0);
    for (size_t i = 0; i < data.size(); ++i) {
      scope.values[op.results.at(i)] = GetTupleElement(c, values, static_cast<int64_t>(i));
    }
    scope.values[op.results.at(data.size())] = GetTupleElement(c, infeed, 1);
    return OkStatus();
  }
  if (name == "outfeed") {
    if (operands.empty()) return source_.ErrorAt(op.pos, "outfeed needs a token");
    std::vector<Instruction*> data(operands.begin(), operands.end() - 1);
    std::vector<Attribute> attrs;
    config("outfeed_config", "outfeed_config", attrs);
    Instruction* tuple = TupleOf(c, data);
    return bind(Emit(c, Opcode::kOutfeed, Shape::Token(), {tuple, operands.back()}, attrs));
  }
  if (name == "send" || name == "recv") {
    std::vector<Attribute> attrs;
    int64_t channel = 0;
    if (const Attr* handle = op.FindAttr("channel_handle")) {
      if (const Attr* h = handle->Find("handle")) channel = h->i;
    }
    attrs.push_back({"channel_id", std::to_string(channel)});
    if (BoolAttr(op, "is_host_transfer").value_or(false)) attrs.push_back({"is_host_transfer", "true"});
    Shape u32 = Shape::Scalar(ElementType::kU32);
    if (name == "send") {
      if (operands.empty()) return source_.ErrorAt(op.pos, "send needs a token");
      std::vector<Instruction*> data(operands.begin(), operands.end() - 1);
      Instruction* payload = data.size() == 1 ? data[0] : TupleOf(c, data);
      Instruction* send =
          Emit(c, Opcode::kSend, Shape::Tuple({payload->shape, u32, Shape::Token()}), {payload, operands.back()}, attrs);
      return bind(Emit(c, Opcode::kSendDone, Shape::Token(), {send}, {attrs[0]}));
    }
    if (results.empty() || !results.back().IsToken()) return source_.ErrorAt(op.pos, "recv must return a token last");
    std::vector<Shape> data(results.begin(), results.end() - 1);
    Shape payload = data.size() == 1 ? data[0] : Shape::Tuple(data);
    ANVIL_RETURN_IF_ERROR(need_operands(1));
    Instruction* recv = Emit(c, Opcode::kRecv, Shape::Tuple({payload, u32, Shape::Token()}), operands, attrs);
    Instruction* done = Emit(c, Opcode::kRecvDone, Shape::Tuple({payload, Shape::Token()}), {recv}, {attrs[0]});
    Instruction* values = GetTupleElement(c, done, 0);
    if (data.size() == 1) {
      scope.values[op.results.at(0)] = values;
    } else {
      for (size_t i = 0; i < data.size(); ++i) {
        scope.values[op.results.at(i)] = GetTupleElement(c, values, static_cast<int64_t>(i));
      }
    }
    scope.values[op.results.at(data.size())] = GetTupleElement(c, done, 1);
    return OkStatus();
  }

  if (name == "batch_norm_training" || name == "batch_norm_inference" || name == "batch_norm_grad") {
    const Attr* epsilon = op.FindAttr("epsilon");
    ANVIL_ASSIGN_OR_RETURN(int64_t feature, IntAttr(op, {"feature_index"}));
    char eps[64];
    snprintf(eps, sizeof(eps), "%.9g", epsilon ? epsilon->f : 0.0);
    Opcode opcode = name == "batch_norm_training"    ? Opcode::kBatchNormTraining
                    : name == "batch_norm_inference" ? Opcode::kBatchNormInference
                                                     : Opcode::kBatchNormGrad;
    return bind(emit_multi(opcode, operands, {{"epsilon", eps}, {"feature_index", std::to_string(feature)}}));
  }

  return source_.ErrorAt(op.pos, "operation '" + full + "' is not supported");
}


StatusOr<std::unique_ptr<Module>> LowerModule(mlir::SyntaxSource& source, const mlir::ModuleSyntax& syntax,
                                              const std::string& file) {
  auto module = std::make_unique<Module>();
  module->name = syntax.name.empty() ? "module" : syntax.name;
  module->source_file = file;
  Lowering lowering(source, syntax, *module);
  ANVIL_RETURN_IF_ERROR(lowering.Run());
  return module;
}

std::vector<FunctionModule> LowerFunctions(mlir::SyntaxSource& source, const mlir::ModuleSyntax& syntax,
                                           const std::string& file) {
  std::vector<FunctionModule> out;
  for (const Function& f : syntax.functions) {
    if (!f.is_public) continue;
    auto module = std::make_unique<Module>();
    module->name = f.name;
    module->source_file = file;
    Lowering lowering(source, syntax, *module);
    Status status = lowering.RunEntry(f);
    if (status.ok()) {
      out.push_back({f.name, std::move(module)});
    } else {
      out.push_back({f.name, Status(status.code(), status.message() + " (in function @" + f.name + ")")});
    }
  }
  return out;
}

StatusOr<std::vector<FunctionModule>> ParseStableHloFunctions(std::string_view text, const SourceInfo& source) {
  std::vector<FunctionModule> out;
  for (const TextChunk& chunk : SplitInputFile(text)) {
    SourceInfo chunk_source = source;
    chunk_source.first_line = source.first_line + chunk.first_line - 1;
    TextCursor probe(chunk.text, chunk_source, false);
    if (probe.AtEnd()) continue;
    mlir::Parser parser(chunk.text, chunk_source);
    ANVIL_ASSIGN_OR_RETURN(mlir::ModuleSyntax syntax, parser.ParseModule(/*recover_functions=*/true));
    for (FunctionModule& f : LowerFunctions(parser, syntax, source.file)) out.push_back(std::move(f));
  }
  return out;
}

StatusOr<std::vector<std::unique_ptr<Module>>> ParseStableHloText(std::string_view text, const SourceInfo& source) {
  std::vector<std::unique_ptr<Module>> modules;
  for (const TextChunk& chunk : SplitInputFile(text)) {
    SourceInfo chunk_source = source;
    chunk_source.first_line = source.first_line + chunk.first_line - 1;
    TextCursor probe(chunk.text, chunk_source, false);
    if (probe.AtEnd()) continue;  // a chunk of comments only
    mlir::Parser parser(chunk.text, chunk_source);
    ANVIL_ASSIGN_OR_RETURN(mlir::ModuleSyntax syntax, parser.ParseModule());
    ANVIL_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, LowerModule(parser, syntax, source.file));
    modules.push_back(std::move(module));
  }
  if (modules.empty()) return InvalidArgument(source.file + ":1:1: error: no module in the input");
  return modules;
}

}  // namespace anvil::hlo
