#include "hlo/mlir_parser.h"

#include <cctype>
#include <cstring>

#include "hlo/parse_common.h"

namespace anvil::hlo::mlir {
namespace {

bool IsReturnOp(std::string_view name) {
  return name == "func.return" || name == "stablehlo.return" || name == "return";
}

int HexDigit(char h) {
  if (h >= '0' && h <= '9') return h - '0';
  if (h >= 'a' && h <= 'f') return h - 'a' + 10;
  if (h >= 'A' && h <= 'F') return h - 'A' + 10;
  return -1;
}

}  // namespace

StatusOr<std::string> Parser::ScanBalanced(char open, char close) {
  // The cursor is just past `open`; returns the text up to the matching close
  // and leaves the cursor after it.
  std::string_view t = c_.text();
  size_t start = c_.pos();
  int depth = 0;
  for (size_t p = start; p < t.size(); ++p) {
    char ch = t[p];
    if (ch == '"') {
      ++p;
      while (p < t.size() && t[p] != '"') p += (t[p] == '\\') ? 2 : 1;
      continue;
    }
    if (ch == '-' && p + 1 < t.size() && t[p + 1] == '>') {
      ++p;  // an arrow inside is not a closing '>'
      continue;
    }
    if (ch == open) ++depth;
    if (ch == close) {
      if (depth == 0) {
        c_.set_pos(p + 1);
        return std::string(t.substr(start, p - start));
      }
      --depth;
    }
  }
  return c_.ErrorAt(start, std::string("unbalanced '") + open + "'");
}

StatusOr<std::string> Parser::ParseValueName() {
  c_.SkipBlanks();
  size_t at = c_.pos();
  if (!c_.TryConsume("%")) return c_.Expected("a value name (%...)");
  std::string_view t = c_.text();
  size_t p = c_.pos();
  while (p < t.size() && (std::isalnum(static_cast<unsigned char>(t[p])) || t[p] == '_' || t[p] == '$' ||
                          t[p] == '.' || t[p] == '-')) {
    ++p;
  }
  if (p == c_.pos()) return c_.ErrorAt(at, "empty value name");
  std::string name = "%" + std::string(t.substr(c_.pos(), p - c_.pos()));
  c_.set_pos(p);
  return name;
}

StatusOr<Value> Parser::ParseValue() {
  c_.SkipBlanks();
  Value v;
  v.pos = c_.pos();
  ANVIL_ASSIGN_OR_RETURN(v.name, ParseValueName());
  if (c_.PeekRaw() == '#') {
    c_.set_pos(c_.pos() + 1);
    ANVIL_ASSIGN_OR_RETURN(int64_t index, c_.ReadInt());
    v.name += "#" + std::to_string(index);
  }
  return v;
}

StatusOr<Shape> Parser::ParseType() {
  NestingGuard nesting(c_);
  ANVIL_RETURN_IF_ERROR(nesting.Check());
  c_.SkipBlanks();
  size_t at = c_.pos();
  if (c_.TryConsume("tensor<")) {
    std::vector<int64_t> dims;
    std::string_view t = c_.text();
    while (true) {
      c_.SkipBlanks();
      size_t p = c_.pos();
      if (p < t.size() && t[p] == '?') {
        return c_.ErrorAt(p, "dynamic dimension '?' is not supported: Anvil runs static shapes");
      }
      if (p < t.size() && std::isdigit(static_cast<unsigned char>(t[p]))) {
        int64_t d = 0;
        while (p < t.size() && std::isdigit(static_cast<unsigned char>(t[p]))) {
          d = d * 10 + (t[p] - '0');
          if (d > (int64_t{1} << 40)) return c_.ErrorAt(p, "dimension size too large");
          ++p;
        }
        if (p >= t.size() || t[p] != 'x') {
          c_.set_pos(p);
          return c_.Expected("'x' after a dimension size");
        }
        dims.push_back(d);
        c_.set_pos(p + 1);
        continue;
      }
      break;
    }
    ElementType element;
    c_.SkipBlanks();
    size_t element_at = c_.pos();
    if (c_.TryConsume("complex<")) {
      std::string_view component = c_.ReadIdentifier(false);
      ANVIL_RETURN_IF_ERROR(c_.Expect(">"));
      auto ct = ElementTypeFromMlirName(component);
      element = ct ? ComplexOf(*ct) : ElementType::kInvalid;
      if (element == ElementType::kInvalid) {
        return c_.ErrorAt(element_at, "unsupported complex component type '" + std::string(component) + "'");
      }
    } else if (c_.LookingAt("!quant.")) {
      return c_.ErrorAt(element_at, "quantized element types (!quant.uniform) are not supported");
    } else if (c_.LookingAt("index") && !index_as_s64_) {
      return c_.ErrorAt(element_at, "index element types are not supported");
    } else if (c_.TryConsumeWord("index")) {
      element = ElementType::kS64;
    } else if (c_.LookingAt("*")) {
      return c_.ErrorAt(element_at, "unranked tensors are not supported: Anvil runs static shapes");
    } else {
      std::string_view name = c_.ReadIdentifier(false);
      auto et = ElementTypeFromMlirName(name);
      if (!et) {
        c_.set_pos(element_at);
        return c_.Expected("an element type");
      }
      element = *et;
    }
    if (Status size = CheckArraySize(element, dims); !size.ok()) return c_.ErrorAt(at, size.message());
    Shape shape(element, std::move(dims));
    if (c_.TryConsume(",")) {
      // An encoding such as #stablehlo.bounds<...>: not part of a static shape.
      c_.SkipBlanks();
      if (c_.TryConsume("#")) {
        c_.ReadIdentifier(false);
        if (c_.TryConsume("<")) {
          auto body = ScanBalanced('<', '>');
          if (!body.ok()) return body.status();
        }
      }
    }
    ANVIL_RETURN_IF_ERROR(c_.Expect(">"));
    return shape;
  }
  if (c_.TryConsume("tuple<")) {
    std::vector<Shape> elements;
    if (!c_.TryConsume(">")) {
      while (true) {
        ANVIL_ASSIGN_OR_RETURN(Shape e, ParseType());
        elements.push_back(std::move(e));
        if (c_.TryConsume(">")) break;
        ANVIL_RETURN_IF_ERROR(c_.Expect(","));
      }
    }
    return Shape::Tuple(std::move(elements));
  }
  if (c_.TryConsume("!stablehlo.token") || c_.TryConsume("!mhlo.token")) return Shape::Token();
  if (c_.TryConsume("complex<")) {
    std::string_view component = c_.ReadIdentifier(false);
    ANVIL_RETURN_IF_ERROR(c_.Expect(">"));
    auto ct = ElementTypeFromMlirName(component);
    if (!ct || ComplexOf(*ct) == ElementType::kInvalid) return c_.ErrorAt(at, "unsupported complex type");
    return Shape::Scalar(ComplexOf(*ct));
  }
  if (c_.LookingAt("memref<")) return c_.ErrorAt(at, "buffer types are not supported");
  if (c_.LookingAt("!stablehlo.future<")) return c_.ErrorAt(at, "future types (async values) are not supported");
  std::string_view name = c_.ReadIdentifier(false);
  if (auto et = ElementTypeFromMlirName(name)) return Shape::Scalar(*et);
  if (name == "index") return Shape::Scalar(ElementType::kS64);
  c_.set_pos(at);
  return c_.Expected("a type");
}

Status Parser::ParseDict(std::vector<NamedAttr>& entries, char close) {
  const std::string close_str(1, close);
  while (!c_.TryConsume(close_str)) {
    c_.SkipBlanks();
    std::string key;
    if (c_.PeekRaw() == '"') {
      ANVIL_ASSIGN_OR_RETURN(key, c_.ReadString());
    } else {
      key = std::string(c_.ReadIdentifier(false));
      if (key.empty()) return c_.Expected("an attribute name or '" + close_str + "'");
    }
    Attr value;
    if (c_.TryConsume("=")) {
      ANVIL_ASSIGN_OR_RETURN(value, ParseAttr());
      ANVIL_RETURN_IF_ERROR(ParseDataType(value));
    }
    entries.push_back(NamedAttr{std::move(key), std::move(value)});
    if (c_.TryConsume(close_str)) break;
    ANVIL_RETURN_IF_ERROR(c_.Expect(","));
  }
  return OkStatus();
}

Status Parser::ParseDataType(Attr& a) {
  c_.SkipBlanks();
  if (c_.PeekRaw() != ':' || c_.PeekRaw(1) == ':') return OkStatus();
  c_.TryConsume(":");
  // Index elements are 64-bit in an attribute's data (custom call layouts),
  // unlike index values, which Anvil does not run.
  index_as_s64_ = true;
  auto type = ParseType();
  index_as_s64_ = false;
  if (!type.ok()) return type.status();
  a.type = std::move(type).value();
  return OkStatus();
}

StatusOr<Attr> Parser::ParseAttr() {
  NestingGuard nesting(c_);
  ANVIL_RETURN_IF_ERROR(nesting.Check());
  c_.SkipBlanks();
  Attr a;
  char ch = c_.PeekRaw();
  size_t at = c_.pos();
  if (ch == '[') {
    c_.TryConsume("[");
    a.kind = Attr::Kind::kArray;
    if (c_.TryConsume("]")) return a;
    while (true) {
      ANVIL_ASSIGN_OR_RETURN(Attr e, ParseAttr());
      // `[dense<[1, 0]> : tensor<2xindex>]`: typed elements (custom call layouts).
      ANVIL_RETURN_IF_ERROR(ParseDataType(e));
      a.list.push_back(std::move(e));
      if (c_.TryConsume("]")) break;
      ANVIL_RETURN_IF_ERROR(c_.Expect(","));
    }
    return a;
  }
  if (ch == '{') {
    c_.TryConsume("{");
    a.kind = Attr::Kind::kDict;
    ANVIL_RETURN_IF_ERROR(ParseDict(a.entries, '}'));
    return a;
  }
  if (ch == '"') {
    a.kind = Attr::Kind::kString;
    ANVIL_ASSIGN_OR_RETURN(a.s, c_.ReadString());
    return a;
  }
  if (ch == '@') {
    c_.TryConsume("@");
    a.kind = Attr::Kind::kSymbol;
    if (c_.PeekRaw() == '"') {
      ANVIL_ASSIGN_OR_RETURN(a.s, c_.ReadString());
    } else {
      a.s = std::string(c_.ReadIdentifier(false));
    }
    if (a.s.empty()) return c_.Expected("a symbol name");
    return a;
  }
  if (ch == '#') {
    c_.TryConsume("#");
    a.kind = Attr::Kind::kOpaque;
    a.s = std::string(c_.ReadIdentifier(false));
    if (c_.PeekRaw() == '<') {
      c_.set_pos(c_.pos() + 1);
      size_t body = c_.pos();
      ANVIL_ASSIGN_OR_RETURN(a.raw, ScanBalanced('<', '>'));
      // Most dialect attributes hold `key = value` lists; read them when so.
      size_t after = c_.pos();
      c_.set_pos(body);
      c_.SkipBlanks();
      size_t key_at = c_.pos();
      std::string_view key = c_.ReadIdentifier(false);
      bool keyed = !key.empty() && c_.Peek() == '=';
      c_.set_pos(key_at);
      if (keyed) {
        // Parse up to the closing '>' as a dict whose close is '>'.
        ANVIL_RETURN_IF_ERROR(ParseDict(a.entries, '>'));
      }
      c_.set_pos(after);
    }
    return a;
  }
  if (ch == '<') {
    // A bare `<...>` struct (dot_general's algorithm): kept as text.
    c_.TryConsume("<");
    a.kind = Attr::Kind::kOpaque;
    ANVIL_ASSIGN_OR_RETURN(a.raw, ScanBalanced('<', '>'));
    return a;
  }
  if (c_.LookingAt("dense<")) {
    c_.TryConsume("dense<");
    a.kind = Attr::Kind::kDense;
    a.body_pos = c_.pos();
    auto body = ScanBalanced('<', '>');
    if (!body.ok()) return body.status();
    return a;
  }
  if (c_.LookingAt("array<")) {
    c_.TryConsume("array<");
    a.kind = Attr::Kind::kArray;
    ANVIL_ASSIGN_OR_RETURN(Shape element, ParseType());
    if (c_.TryConsume(":")) {
      while (true) {
        ANVIL_ASSIGN_OR_RETURN(Attr e, ParseAttr());
        a.list.push_back(std::move(e));
        if (!c_.TryConsume(",")) break;
      }
    }
    ANVIL_RETURN_IF_ERROR(c_.Expect(">"));
    a.type = std::move(element);
    return a;
  }
  if (c_.LookingAt("tensor<") || c_.LookingAt("tuple<") || c_.LookingAt("!")) {
    a.kind = Attr::Kind::kType;
    ANVIL_ASSIGN_OR_RETURN(Shape type, ParseType());
    a.type = std::move(type);
    return a;
  }
  if (c_.TryConsumeWord("true")) {
    a.kind = Attr::Kind::kBool;
    a.b = true;
    a.i = 1;
    return a;
  }
  if (c_.TryConsumeWord("false")) {
    a.kind = Attr::Kind::kBool;
    return a;
  }
  if (c_.TryConsumeWord("unit")) return a;
  if (ch == '-' || ch == '+' || std::isdigit(static_cast<unsigned char>(ch))) {
    std::string_view t = c_.text();
    size_t p = at + 1;
    bool hex = p + 1 < t.size() && t[at] == '0' && (t[p] == 'x' || t[p] == 'X');
    if (hex) {
      ANVIL_ASSIGN_OR_RETURN(a.i, c_.ReadInt());
      a.kind = Attr::Kind::kInt;
      a.f = static_cast<double>(a.i);
      return a;
    }
    while (p < t.size() && (std::isdigit(static_cast<unsigned char>(t[p])) || t[p] == '.' || t[p] == 'e' ||
                            t[p] == 'E' || ((t[p] == '-' || t[p] == '+') && (t[p - 1] == 'e' || t[p - 1] == 'E')))) {
      ++p;
    }
    std::string token(t.substr(at, p - at));
    char* end = nullptr;
    if (token.find_first_of(".eE") == std::string::npos) {
      a.kind = Attr::Kind::kInt;
      a.i = std::strtoll(token.c_str(), &end, 10);
      a.f = static_cast<double>(a.i);
    } else {
      a.kind = Attr::Kind::kFloat;
      a.f = std::strtod(token.c_str(), &end);
    }
    if (end == token.c_str() || end != token.c_str() + token.size()) return c_.Expected("a number");
    c_.set_pos(p);
    return a;
  }
  if (IsIdentifierStart(ch)) {
    a.kind = Attr::Kind::kWord;
    a.s = std::string(c_.ReadIdentifier(false));
    return a;
  }
  return c_.Expected("an attribute value");
}

Status Parser::SkipLocation() {
  // `loc(...)` debug locations are not kept.
  if (!c_.LookingAt("loc(")) return OkStatus();
  c_.TryConsume("loc(");
  auto body = ScanBalanced('(', ')');
  return body.ok() ? OkStatus() : body.status();
}

Status Parser::ParseBlockArguments(std::vector<std::pair<std::string, Shape>>& arguments,
                                   std::vector<std::vector<NamedAttr>>* attributes) {
  ANVIL_RETURN_IF_ERROR(c_.Expect("("));
  if (c_.TryConsume(")")) return OkStatus();
  while (true) {
    ANVIL_ASSIGN_OR_RETURN(std::string name, ParseValueName());
    ANVIL_RETURN_IF_ERROR(c_.Expect(":"));
    ANVIL_ASSIGN_OR_RETURN(Shape type, ParseType());
    std::vector<NamedAttr> dictionary;
    if (c_.Peek() == '{') {  // argument attributes
      c_.TryConsume("{");
      ANVIL_RETURN_IF_ERROR(ParseDict(dictionary, '}'));
    }
    if (attributes != nullptr) attributes->push_back(std::move(dictionary));
    ANVIL_RETURN_IF_ERROR(SkipLocation());
    arguments.emplace_back(std::move(name), std::move(type));
    if (c_.TryConsume(")")) break;
    ANVIL_RETURN_IF_ERROR(c_.Expect(","));
  }
  return OkStatus();
}

Status Parser::ParseBlockBody(Block& block) {
  while (true) {
    char ch = c_.Peek();
    if (ch == '}' || ch == '^' || ch == '\0') return OkStatus();
    ANVIL_ASSIGN_OR_RETURN(auto op, ParseOp());
    block.ops.push_back(std::move(op));
  }
}

Status Parser::ParseRegion(Region& region) {
  NestingGuard nesting(c_);
  ANVIL_RETURN_IF_ERROR(nesting.Check());
  c_.SkipBlanks();
  region.pos = c_.pos();
  ANVIL_RETURN_IF_ERROR(c_.Expect("{"));
  while (!c_.TryConsume("}")) {
    if (c_.AtEnd()) return c_.Expected("'}' to close the region");
    Block block;
    if (c_.TryConsume("^")) {
      c_.ReadIdentifier(false);
      if (c_.Peek() == '(') ANVIL_RETURN_IF_ERROR(ParseBlockArguments(block.arguments));
      ANVIL_RETURN_IF_ERROR(c_.Expect(":"));
    }
    if (!region.blocks.empty()) return c_.Error("regions with more than one block are not supported");
    ANVIL_RETURN_IF_ERROR(ParseBlockBody(block));
    region.blocks.push_back(std::move(block));
  }
  if (region.blocks.empty()) region.blocks.emplace_back();
  return OkStatus();
}

Status Parser::ParseTypeSignature(Op& op) {
  ANVIL_RETURN_IF_ERROR(c_.Expect(":"));
  auto starts_type = [&]() {
    return c_.LookingAt("tensor<") || c_.LookingAt("tuple<") || c_.LookingAt("!") || c_.LookingAt("complex<");
  };
  if (c_.Peek() == '(') {
    c_.TryConsume("(");
    std::vector<Shape> list;
    if (!c_.TryConsume(")")) {
      while (true) {
        ANVIL_ASSIGN_OR_RETURN(Shape t, ParseType());
        list.push_back(std::move(t));
        if (c_.TryConsume(")")) break;
        ANVIL_RETURN_IF_ERROR(c_.Expect(","));
      }
    }
    if (c_.TryConsume("->")) {
      op.operand_types = std::move(list);
      if (c_.Peek() == '(') {
        c_.TryConsume("(");
        if (!c_.TryConsume(")")) {
          while (true) {
            ANVIL_ASSIGN_OR_RETURN(Shape t, ParseType());
            op.result_types.push_back(std::move(t));
            if (c_.Peek() == '{') {  // result attributes
              c_.TryConsume("{");
              std::vector<NamedAttr> ignored;
              ANVIL_RETURN_IF_ERROR(ParseDict(ignored, '}'));
            }
            if (c_.TryConsume(")")) break;
            ANVIL_RETURN_IF_ERROR(c_.Expect(","));
          }
        }
      } else {
        ANVIL_ASSIGN_OR_RETURN(Shape t, ParseType());
        op.result_types.push_back(std::move(t));
      }
    } else {
      op.result_types = std::move(list);
      op.shorthand_types = true;
    }
    return OkStatus();
  }
  std::vector<Shape> list;
  while (true) {
    ANVIL_ASSIGN_OR_RETURN(Shape t, ParseType());
    list.push_back(std::move(t));
    size_t save = c_.pos();
    if (c_.TryConsume(",") && starts_type()) continue;
    c_.set_pos(save);
    break;
  }
  if (c_.TryConsume("->")) {
    op.operand_types = std::move(list);
    if (c_.TryConsume("(")) {
      while (true) {
        ANVIL_ASSIGN_OR_RETURN(Shape t, ParseType());
        op.result_types.push_back(std::move(t));
        if (c_.TryConsume(")")) break;
        ANVIL_RETURN_IF_ERROR(c_.Expect(","));
      }
    } else {
      ANVIL_ASSIGN_OR_RETURN(Shape t, ParseType());
      op.result_types.push_back(std::move(t));
    }
  } else {
    op.result_types = std::move(list);
    op.shorthand_types = true;
  }
  return OkStatus();
}

Status Parser::ParseTrailingRegions(Op& op) {
  while (true) {
    if (c_.TryConsumeWord("cond") || c_.TryConsumeWord("do")) {
      op.regions.emplace_back();
      ANVIL_RETURN_IF_ERROR(ParseRegion(op.regions.back()));
      continue;
    }
    if (c_.TryConsumeWord("reducer")) {
      // `reducer(%a0: t, %b0: t) (%a1: t, %b1: t) {...}`: group i holds the
      // block's arguments i and n+i.
      std::vector<std::pair<std::string, Shape>> firsts, seconds;
      while (c_.Peek() == '(') {
        std::vector<std::pair<std::string, Shape>> pair;
        ANVIL_RETURN_IF_ERROR(ParseBlockArguments(pair));
        if (pair.size() != 2) return c_.Error("each reducer group holds two arguments");
        firsts.push_back(pair[0]);
        seconds.push_back(pair[1]);
      }
      op.regions.emplace_back();
      ANVIL_RETURN_IF_ERROR(ParseRegion(op.regions.back()));
      auto& args = op.regions.back().blocks.front().arguments;
      args = firsts;
      args.insert(args.end(), seconds.begin(), seconds.end());
      continue;
    }
    return OkStatus();
  }
}

Status Parser::ParsePrettyGroup(Op& op, std::vector<Value>& inits, std::vector<std::string>& bound_names) {
  ANVIL_RETURN_IF_ERROR(c_.Expect("("));
  while (!c_.TryConsume(")")) {
    if (c_.Peek() != '%') {
      // `key = value` inside the parentheses (chlo.top_k(%x, k = 5)).
      std::string key(c_.ReadIdentifier(false));
      if (key.empty()) return c_.Expected("a value or an attribute");
      ANVIL_RETURN_IF_ERROR(c_.Expect("="));
      ANVIL_ASSIGN_OR_RETURN(Attr value, ParseAttr());
      op.attributes.push_back(NamedAttr{std::move(key), std::move(value)});
      if (!c_.TryConsume(",") && c_.Peek() != ')') return c_.Expected("',' or ')'");
      continue;
    }
    ANVIL_ASSIGN_OR_RETURN(Value v, ParseValue());
    if (c_.TryConsumeWord("init")) {
      ANVIL_RETURN_IF_ERROR(c_.Expect(":"));
      ANVIL_ASSIGN_OR_RETURN(Value init, ParseValue());
      op.operands.push_back(std::move(v));
      inits.push_back(std::move(init));
    } else if (c_.TryConsume("=")) {
      ANVIL_ASSIGN_OR_RETURN(Value init, ParseValue());
      bound_names.push_back(v.name);
      op.operands.push_back(std::move(init));
    } else {
      op.operands.push_back(std::move(v));
    }
    if (!c_.TryConsume(",") && c_.Peek() != ')') return c_.Expected("',' or ')'");
  }
  return OkStatus();
}

Status Parser::ParsePrettyBody(Op& op) {
  std::vector<Value> inits;
  std::vector<std::string> bound_names;
  Attr words;
  words.kind = Attr::Kind::kArray;
  while (true) {
    char ch = c_.Peek();
    if (ch == ':' && c_.PeekRaw(1) != ':') break;
    if (ch == '}' || ch == '\0' || ch == '^') {
      if (IsReturnOp(op.name)) break;
      return c_.Expected("':' and the op's types");
    }
    if (IsReturnOp(op.name) && op.operands.empty() && ch != '%') break;
    if (ch == ',') {
      c_.TryConsume(",");
      continue;
    }
    if (ch == '%') {
      ANVIL_ASSIGN_OR_RETURN(Value v, ParseValue());
      op.operands.push_back(std::move(v));
      if (c_.Peek() == '[') {
        c_.TryConsume("[");
        size_t at = c_.pos();
        ANVIL_ASSIGN_OR_RETURN(std::string spec, ScanBalanced('[', ']'));
        size_t after = c_.pos();
        c_.set_pos(at);
        if (spec.find(':') != std::string::npos) {
          // Slice bounds `[start:limit(:stride)?, ...]`.
          Attr slice;
          slice.kind = Attr::Kind::kArray;
          while (c_.Peek() != ']') {
            Attr bound;
            bound.kind = Attr::Kind::kArray;
            for (int part = 0; part < 3; ++part) {
              ANVIL_ASSIGN_OR_RETURN(int64_t n, c_.ReadInt());
              Attr value;
              value.kind = Attr::Kind::kInt;
              value.i = n;
              bound.list.push_back(value);
              if (!c_.TryConsume(":")) break;
            }
            slice.list.push_back(std::move(bound));
            if (!c_.TryConsume(",")) break;
          }
          op.attributes.push_back(NamedAttr{"slice", std::move(slice)});
        } else {
          Attr index;
          index.kind = Attr::Kind::kInt;
          ANVIL_ASSIGN_OR_RETURN(index.i, c_.ReadInt());
          op.attributes.push_back(NamedAttr{"index", index});
        }
        c_.set_pos(after);
      }
      continue;
    }
    if (ch == '(') {
      ANVIL_RETURN_IF_ERROR(ParsePrettyGroup(op, inits, bound_names));
      continue;
    }
    if (ch == '@') {
      ANVIL_ASSIGN_OR_RETURN(Attr callee, ParseAttr());
      op.attributes.push_back(NamedAttr{"callee", std::move(callee)});
      continue;
    }
    if (ch == '"') {
      ANVIL_ASSIGN_OR_RETURN(Attr name, ParseAttr());
      op.attributes.push_back(NamedAttr{"name", std::move(name)});
      continue;
    }
    if (c_.TryConsume("<{")) {
      ANVIL_RETURN_IF_ERROR(ParseDict(op.attributes, '}'));
      ANVIL_RETURN_IF_ERROR(c_.Expect(">"));
      continue;
    }
    if (ch == '{') {
      // A region starts with a block label or an op; a dict with a name.
      size_t save = c_.pos();
      c_.TryConsume("{");
      char next = c_.Peek();
      c_.set_pos(save);
      if (next == '^' || next == '%') {
        op.regions.emplace_back();
        ANVIL_RETURN_IF_ERROR(ParseRegion(op.regions.back()));
        continue;
      }
      c_.TryConsume("{");
      ANVIL_RETURN_IF_ERROR(ParseDict(op.attributes, '}'));
      continue;
    }
    if (c_.LookingAt("dense<")) {
      ANVIL_ASSIGN_OR_RETURN(Attr value, ParseAttr());
      op.attributes.push_back(NamedAttr{"value", std::move(value)});
      continue;
    }
    if (IsIdentifierStart(ch)) {
      size_t at = c_.pos();
      std::string word(c_.ReadIdentifier(false));
      if (c_.Peek() == '=') {
        c_.TryConsume("=");
        if (word == "dim_numbers") {
          // `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`, kept as written.
          c_.SkipBlanks();
          std::string_view t = c_.text();
          size_t p = c_.pos();
          int depth = 0;
          std::string raw;
          for (; p < t.size(); ++p) {
            char d = t[p];
            if (d == '[') ++depth;
            if (d == ']') --depth;
            if (depth == 0 && (d == ',' || d == '\n')) break;
            if (d != ' ') raw += d;
          }
          c_.set_pos(p);
          Attr value;
          value.kind = Attr::Kind::kWord;
          value.s = raw;
          op.attributes.push_back(NamedAttr{word, std::move(value)});
          continue;
        }
        ANVIL_ASSIGN_OR_RETURN(Attr value, ParseAttr());
        size_t save = c_.pos();
        if (c_.TryConsumeWord("x") && c_.Peek() == '[') {
          ANVIL_ASSIGN_OR_RETURN(Attr second, ParseAttr());
          Attr pair;
          pair.kind = Attr::Kind::kArray;
          pair.list.push_back(std::move(value));
          pair.list.push_back(std::move(second));
          value = std::move(pair);
        } else {
          c_.set_pos(save);
        }
        op.attributes.push_back(NamedAttr{word, std::move(value)});
        continue;
      }
      if (word == "applies") {
        Attr value;
        value.kind = Attr::Kind::kWord;
        value.s = std::string(c_.ReadIdentifier(false));
        if (value.s.empty()) return c_.Expected("an op name after 'applies'");
        op.attributes.push_back(NamedAttr{"applies", std::move(value)});
        continue;
      }
      if (word == "across") continue;
      if (word == "return" || word.find('.') != std::string::npos) {
        // The next op began: this one never gave its types.
        c_.set_pos(at);
        return c_.Expected("':' and the types of " + op.name);
      }
      if (word.empty()) {
        c_.set_pos(at);
        return c_.Expected("an operand, an attribute or ':'");
      }
      Attr w;
      w.kind = Attr::Kind::kWord;
      w.s = word;
      words.list.push_back(std::move(w));
      continue;
    }
    return c_.Expected("an operand, an attribute or ':'");
  }
  for (Value& init : inits) op.operands.push_back(std::move(init));
  if (!words.list.empty()) op.attributes.push_back(NamedAttr{"_words", std::move(words)});
  if (c_.Peek() == ':') ANVIL_RETURN_IF_ERROR(ParseTypeSignature(op));
  if (!c_.AtLineEnd() && c_.PeekRaw() == '{') {
    // check ops write their options after the type: `: tensor<f64> {tolerance = 0.1 : f64}`.
    c_.TryConsume("{");
    ANVIL_RETURN_IF_ERROR(ParseDict(op.attributes, '}'));
  }
  ANVIL_RETURN_IF_ERROR(ParseTrailingRegions(op));
  if (!bound_names.empty()) {
    // stablehlo.while: both regions take the iteration values as arguments.
    std::vector<Shape> types = op.result_types;
    for (Region& region : op.regions) {
      auto& args = region.blocks.front().arguments;
      if (!args.empty()) continue;
      for (size_t i = 0; i < bound_names.size(); ++i) {
        args.emplace_back(bound_names[i], i < types.size() ? types[i] : Shape());
      }
    }
  }
  return OkStatus();
}

Status Parser::ParseGenericBody(Op& op) {
  ANVIL_RETURN_IF_ERROR(c_.Expect("("));
  while (!c_.TryConsume(")")) {
    ANVIL_ASSIGN_OR_RETURN(Value v, ParseValue());
    op.operands.push_back(std::move(v));
    if (!c_.TryConsume(",") && c_.Peek() != ')') return c_.Expected("',' or ')'");
  }
  if (c_.TryConsume("<{")) {
    ANVIL_RETURN_IF_ERROR(ParseDict(op.attributes, '}'));
    ANVIL_RETURN_IF_ERROR(c_.Expect(">"));
  }
  if (c_.LookingAt("({")) {
    c_.TryConsume("(");
    while (true) {
      op.regions.emplace_back();
      ANVIL_RETURN_IF_ERROR(ParseRegion(op.regions.back()));
      if (c_.TryConsume(")")) break;
      ANVIL_RETURN_IF_ERROR(c_.Expect(","));
    }
  }
  if (c_.TryConsume("{")) ANVIL_RETURN_IF_ERROR(ParseDict(op.attributes, '}'));
  return ParseTypeSignature(op);
}

StatusOr<std::unique_ptr<Op>> Parser::ParseOp() {
  auto op = std::make_unique<Op>();
  c_.SkipBlanks();
  op->pos = c_.pos();
  if (c_.PeekRaw() == '%') {
    while (true) {
      ANVIL_ASSIGN_OR_RETURN(std::string name, ParseValueName());
      if (c_.PeekRaw() == ':') {
        c_.set_pos(c_.pos() + 1);
        size_t at = c_.pos();
        ANVIL_ASSIGN_OR_RETURN(int64_t count, c_.ReadInt());
        if (count < 1 || count > 100000) return c_.ErrorAt(at, "bad result count");
        for (int64_t i = 0; i < count; ++i) op->results.push_back(name + "#" + std::to_string(i));
      } else {
        op->results.push_back(name);
      }
      if (!c_.TryConsume(",")) break;
    }
    ANVIL_RETURN_IF_ERROR(c_.Expect("="));
  }
  c_.SkipBlanks();
  if (c_.PeekRaw() == '"') {
    ANVIL_ASSIGN_OR_RETURN(op->name, c_.ReadString());
    ANVIL_RETURN_IF_ERROR(ParseGenericBody(*op));
  } else {
    op->name = std::string(c_.ReadIdentifier(false));
    if (op->name.empty()) return c_.Expected("an operation");
    if (op->name == "return") op->name = "func.return";
    if (op->name == "call") op->name = "func.call";
    ANVIL_RETURN_IF_ERROR(ParsePrettyBody(*op));
  }
  ANVIL_RETURN_IF_ERROR(SkipLocation());
  return op;
}

Status Parser::ParseFunction(ModuleSyntax& module) {
  Function f;
  c_.SkipBlanks();
  f.pos = c_.pos();
  if (c_.TryConsumeWord("private")) {
    f.is_public = false;
  } else {
    c_.TryConsumeWord("public");
    c_.TryConsumeWord("nested");
  }
  ANVIL_RETURN_IF_ERROR(c_.Expect("@"));
  if (c_.PeekRaw() == '"') {
    ANVIL_ASSIGN_OR_RETURN(f.name, c_.ReadString());
  } else {
    f.name = std::string(c_.ReadIdentifier(false));
  }
  if (f.name.empty()) return c_.Expected("a function name");
  ANVIL_RETURN_IF_ERROR(ParseBlockArguments(f.arguments, &f.argument_attributes));
  if (c_.TryConsume("->")) {
    if (c_.Peek() == '(') {
      c_.TryConsume("(");
      while (!c_.TryConsume(")")) {
        ANVIL_ASSIGN_OR_RETURN(Shape t, ParseType());
        f.result_types.push_back(std::move(t));
        if (c_.Peek() == '{') {
          c_.TryConsume("{");
          std::vector<NamedAttr> ignored;
          ANVIL_RETURN_IF_ERROR(ParseDict(ignored, '}'));
        }
        if (!c_.TryConsume(",") && c_.Peek() != ')') return c_.Expected("',' or ')'");
      }
    } else {
      ANVIL_ASSIGN_OR_RETURN(Shape t, ParseType());
      f.result_types.push_back(std::move(t));
    }
  }
  if (c_.TryConsumeWord("attributes")) {
    ANVIL_RETURN_IF_ERROR(c_.Expect("{"));
    std::vector<NamedAttr> ignored;
    ANVIL_RETURN_IF_ERROR(ParseDict(ignored, '}'));
  }
  // A declaration (`func.func private @f(...) -> ...`) has no body; MLIR
  // allows it only for private functions.
  if (c_.Peek() == '{' || f.is_public) ANVIL_RETURN_IF_ERROR(ParseRegion(f.body));
  ANVIL_RETURN_IF_ERROR(SkipLocation());
  for (const Function& other : module.functions) {
    if (other.name == f.name) return c_.ErrorAt(f.pos, "function @" + f.name + " is defined twice");
  }
  module.functions.push_back(std::move(f));
  return OkStatus();
}

Status Parser::SkipAttributeAliases() {
  // `#loc1 = loc("f.py":3:0)` and other alias definitions: one per line.
  while (c_.Peek() == '#' || c_.LookingAt("!")) {
    std::string_view t = c_.text();
    size_t p = c_.pos();
    size_t eq = t.find('=', p);
    size_t eol = t.find('\n', p);
    if (eq == std::string_view::npos || (eol != std::string_view::npos && eq > eol)) {
      return c_.Expected("an alias definition (#name = ...)");
    }
    c_.set_pos(eol == std::string_view::npos ? t.size() : eol + 1);
  }
  return OkStatus();
}

Status Parser::SkipFailedFunction(size_t start, ModuleSyntax& module, Status error) {
  c_.set_pos(start);
  Function f;
  c_.SkipBlanks();
  f.pos = c_.pos();
  if (c_.TryConsumeWord("private")) {
    f.is_public = false;
  } else {
    c_.TryConsumeWord("public");
    c_.TryConsumeWord("nested");
  }
  if (!c_.TryConsume("@")) return error;
  if (c_.PeekRaw() == '"') {
    auto name = c_.ReadString();
    if (!name.ok()) return error;
    f.name = *name;
  } else {
    f.name = std::string(c_.ReadIdentifier(false));
  }
  if (f.name.empty()) return error;
  // The function ends at the '}' that closes its body: the first brace back
  // at depth 0 that is followed by what may follow a function.
  std::string_view t = c_.text();
  size_t p = c_.pos();
  int depth = 0;
  while (p < t.size()) {
    char ch = t[p];
    if (ch == '"') {
      for (++p; p < t.size() && t[p] != '"'; ++p) {
        if (t[p] == '\\') ++p;
      }
      ++p;
      continue;
    }
    if (ch == '/' && p + 1 < t.size() && t[p + 1] == '/') {
      while (p < t.size() && t[p] != '\n') ++p;
      continue;
    }
    if (depth == 0 && t.substr(p, 9) == "func.func") {
      // A declaration without a body: the next function starts here.
      c_.set_pos(p);
      f.error = std::move(error);
      module.functions.push_back(std::move(f));
      return OkStatus();
    }
    ++p;
    if (ch == '{') ++depth;
    if (ch != '}' || --depth != 0) continue;
    c_.set_pos(p);
    if (c_.AtEnd() || c_.LookingAt("func.func") || c_.LookingAt("}") || c_.LookingAt("loc(") || c_.LookingAt("#")) {
      ANVIL_RETURN_IF_ERROR(SkipLocation());
      for (const Function& other : module.functions) {
        if (other.name == f.name) return c_.ErrorAt(f.pos, "function @" + f.name + " is defined twice");
      }
      f.error = std::move(error);
      module.functions.push_back(std::move(f));
      return OkStatus();
    }
  }
  return error;
}

StatusOr<ModuleSyntax> Parser::ParseModule(bool recover_functions) {
  ModuleSyntax module;
  bool braced = false;
  ANVIL_RETURN_IF_ERROR(SkipAttributeAliases());
  if (c_.TryConsumeWord("module")) {
    if (c_.TryConsume("@")) module.name = std::string(c_.ReadIdentifier(false));
    if (c_.TryConsumeWord("attributes")) {
      ANVIL_RETURN_IF_ERROR(c_.Expect("{"));
      std::vector<NamedAttr> ignored;
      ANVIL_RETURN_IF_ERROR(ParseDict(ignored, '}'));
    }
    ANVIL_RETURN_IF_ERROR(c_.Expect("{"));
    braced = true;
  }
  while (true) {
    ANVIL_RETURN_IF_ERROR(SkipAttributeAliases());
    if (braced && c_.TryConsume("}")) {
      ANVIL_RETURN_IF_ERROR(SkipLocation());
      ANVIL_RETURN_IF_ERROR(SkipAttributeAliases());
      break;
    }
    if (!braced && c_.AtEnd()) break;
    if (c_.AtEnd()) return c_.Expected("'}' to close the module");
    if (c_.TryConsumeWord("func.func")) {
      const size_t start = c_.pos();
      Status parsed = ParseFunction(module);
      if (!parsed.ok() && recover_functions) parsed = SkipFailedFunction(start, module, std::move(parsed));
      ANVIL_RETURN_IF_ERROR(parsed);
      continue;
    }
    return c_.Expected("func.func");
  }
  if (!c_.AtEnd()) return c_.Expected("end of input after the module");
  if (module.functions.empty()) return c_.Error("the module defines no function");
  return module;
}

Status Parser::ParseDenseElement(Literal& literal, int64_t index) {
  ElementType t = literal.shape().element_type();
  c_.SkipBlanks();
  if (IsComplex(t)) {
    // `(re, im)`; either part may be written by its bits (0x7FC00000).
    ANVIL_RETURN_IF_ERROR(c_.Expect("("));
    Literal parts(Shape(ComponentType(t), {2}));
    for (int part = 0; part < 2; ++part) {
      if (part == 1) ANVIL_RETURN_IF_ERROR(c_.Expect(","));
      ANVIL_RETURN_IF_ERROR(ParseDenseElement(parts, part));
    }
    ANVIL_RETURN_IF_ERROR(c_.Expect(")"));
    const size_t size = static_cast<size_t>(Info(t).byte_size);
    std::memcpy(literal.mutable_data().data() + static_cast<size_t>(index) * size, parts.data().data(), size);
    return OkStatus();
  }
  if (IsFloat(t) && c_.PeekRaw() == '0' && (c_.PeekRaw(1) == 'x' || c_.PeekRaw(1) == 'X')) {
    // MLIR writes special floats by their bits: 0x7FC00000.
    ANVIL_ASSIGN_OR_RETURN(int64_t bits, c_.ReadInt());
    int size = Info(t).byte_size;
    std::memcpy(&literal.mutable_data()[static_cast<size_t>(index) * size], &bits, size);
    return OkStatus();
  }
  return ParseLiteralElement(c_, literal, index);
}

Status Parser::ParseDenseElements(Literal& literal, int64_t& index, int depth) {
  NestingGuard nesting(c_);
  ANVIL_RETURN_IF_ERROR(nesting.Check());
  if (depth > 64) return c_.Error("dense literal nested too deeply");
  if (c_.TryConsume("[")) {
    if (c_.TryConsume("]")) return OkStatus();
    while (true) {
      ANVIL_RETURN_IF_ERROR(ParseDenseElements(literal, index, depth + 1));
      if (c_.TryConsume("]")) return OkStatus();
      ANVIL_RETURN_IF_ERROR(c_.Expect(","));
    }
  }
  int64_t count = literal.element_count();
  if (index >= count && !(index == 0 && count == 0)) {
    return c_.Error("dense literal has more elements than " + literal.shape().ToMlirString() + " holds");
  }
  if (count == 0) {
    // A splat into an empty tensor: read the value against a scratch element.
    Literal scratch(Shape(literal.shape().element_type(), {}));
    ANVIL_RETURN_IF_ERROR(ParseDenseElement(scratch, 0));
    ++index;
    return OkStatus();
  }
  ANVIL_RETURN_IF_ERROR(ParseDenseElement(literal, index));
  ++index;
  return OkStatus();
}

StatusOr<Literal> Parser::ParseDense(size_t body_pos, const Shape& shape) {
  size_t saved = c_.pos();
  c_.set_pos(body_pos);
  if (!shape.IsArray()) return c_.ErrorAt(body_pos, "a dense literal needs a tensor type");
  if (shape.ByteSize() > literal_bytes_left_) {
    return c_.ErrorAt(body_pos, "dense literal of " + shape.ToMlirString() +
                                    " is too large: the constants of a program text may hold " +
                                    std::to_string(kMaxLiteralBytes >> 20) + " MiB together");
  }
  literal_bytes_left_ -= shape.ByteSize();
  Literal literal(shape);
  const int64_t count = literal.element_count();
  const int size = Info(shape.element_type()).byte_size;
  c_.SkipBlanks();
  if (c_.PeekRaw() == '"') {
    ANVIL_ASSIGN_OR_RETURN(std::string hex, c_.ReadString());
    if (hex.size() < 2 || hex[0] != '0' || (hex[1] != 'x' && hex[1] != 'X') || hex.size() % 2 != 0) {
      return c_.ErrorAt(body_pos, "a dense hex string must be \"0x\" followed by pairs of hex digits");
    }
    std::vector<uint8_t> bytes;
    for (size_t i = 2; i < hex.size(); i += 2) {
      int hi = HexDigit(hex[i]), lo = HexDigit(hex[i + 1]);
      if (hi < 0 || lo < 0) return c_.ErrorAt(body_pos, "bad hex digit in dense string");
      bytes.push_back(static_cast<uint8_t>(hi * 16 + lo));
    }
    auto& data = literal.mutable_data();
    if (bytes.size() == data.size()) {
      data = std::move(bytes);
    } else if (static_cast<int64_t>(bytes.size()) == size && count > 0) {
      std::copy(bytes.begin(), bytes.end(), data.begin());
      literal.BroadcastFirstElement();
    } else {
      return c_.ErrorAt(body_pos, "dense hex string has " + std::to_string(bytes.size()) + " bytes but " +
                                      shape.ToMlirString() + " needs " + std::to_string(data.size()));
    }
  } else if (c_.PeekRaw() != '>') {
    int64_t index = 0;
    ANVIL_RETURN_IF_ERROR(ParseDenseElements(literal, index, 0));
    if (index == 1 && count != 1) {
      literal.BroadcastFirstElement();  // a splat: one value for every element
    } else if (index != count && !(index == 0 && count == 0)) {
      return c_.ErrorAt(body_pos, "dense literal has " + std::to_string(index) + " elements but " +
                                      shape.ToMlirString() + " holds " + std::to_string(count));
    }
  } else if (count != 0) {
    return c_.ErrorAt(body_pos, "empty dense literal for " + shape.ToMlirString());
  }
  ANVIL_RETURN_IF_ERROR(c_.Expect(">"));
  c_.set_pos(saved);
  return literal;
}

std::optional<Literal> Parser::ParseDenseSplat(size_t body_pos, const Shape& shape) {
  if (!shape.IsArray() || shape.ElementCount() < 2) return std::nullopt;
  const size_t saved = c_.pos();
  c_.set_pos(body_pos);
  c_.SkipBlanks();
  Literal one(Shape::Scalar(shape.element_type()));
  bool splat = false;
  if (c_.PeekRaw() == '"') {
    StatusOr<std::string> hex = c_.ReadString();
    const size_t size = one.mutable_data().size();
    if (hex.ok() && hex->size() == 2 + 2 * size && (*hex)[0] == '0' && ((*hex)[1] == 'x' || (*hex)[1] == 'X')) {
      splat = true;
      for (size_t k = 0; k < size && splat; ++k) {
        const int hi = HexDigit((*hex)[2 + 2 * k]), lo = HexDigit((*hex)[3 + 2 * k]);
        splat = hi >= 0 && lo >= 0;
        if (splat) one.mutable_data()[k] = static_cast<uint8_t>(hi * 16 + lo);
      }
    }
  } else if (c_.PeekRaw() != '[' && c_.PeekRaw() != '>') {
    splat = ParseDenseElement(one, 0).ok();
  }
  c_.SkipBlanks();
  splat = splat && c_.PeekRaw() == '>';
  c_.set_pos(saved);
  return splat ? std::optional<Literal>(std::move(one)) : std::nullopt;
}

}  // namespace anvil::hlo::mlir
