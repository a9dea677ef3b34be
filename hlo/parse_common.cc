#include "hlo/parse_common.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace anvil::hlo {

std::vector<TextChunk> SplitInputFile(std::string_view text) {
  std::vector<TextChunk> chunks;
  size_t chunk_start = 0;
  int chunk_line = 1;
  int line = 1;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view content = text.substr(pos, eol - pos);
    while (!content.empty() && (content.back() == ' ' || content.back() == '\r' || content.back() == '\t')) {
      content.remove_suffix(1);
    }
    while (!content.empty() && (content.front() == ' ' || content.front() == '\t')) content.remove_prefix(1);
    if (content == "// -----") {
      chunks.push_back({text.substr(chunk_start, pos - chunk_start), chunk_line});
      chunk_start = eol + 1 > text.size() ? text.size() : eol + 1;
      chunk_line = line + 1;
    }
    if (eol == text.size()) break;
    pos = eol + 1;
    ++line;
  }
  chunks.push_back({text.substr(chunk_start), chunk_line});
  return chunks;
}

namespace {

// Reads a real number (or inf/nan) for a component of type `type` and stores
// it through `store_double`, `store_f32` or `store_nan`.
struct RealValue {
  enum Kind { kNumber, kNan } kind = kNumber;
  double number = 0;
  float number_f32 = 0;
  bool negative = false;
  std::optional<uint64_t> payload;
  bool is_integer = false;
  int64_t integer = 0;
  uint64_t uinteger = 0;
  bool is_bool = false;
};

StatusOr<RealValue> ReadReal(TextCursor& c) {
  c.SkipBlanks();
  RealValue v;
  size_t start = c.pos();
  if (c.TryConsumeWord("true")) {
    v.is_bool = true;
    v.is_integer = true;
    v.integer = 1;
    v.uinteger = 1;
    v.number = v.number_f32 = 1;
    return v;
  }
  if (c.TryConsumeWord("false")) {
    v.is_bool = true;
    v.is_integer = true;
    return v;
  }
  bool negative = false;
  size_t sign_pos = c.pos();
  if (c.PeekRaw() == '-' || c.PeekRaw() == '+') {
    negative = c.PeekRaw() == '-';
    c.set_pos(c.pos() + 1);
  }
  if (c.TryConsumeWord("nan") || (c.LookingAt("nan(") && c.TryConsume("nan"))) {
    v.kind = RealValue::kNan;
    v.negative = negative;
    if (c.PeekRaw() == '(') {
      c.set_pos(c.pos() + 1);
      auto payload = c.ReadInt();
      if (!payload.ok()) return payload.status();
      v.payload = static_cast<uint64_t>(*payload);
      ANVIL_RETURN_IF_ERROR(c.Expect(")"));
    }
    return v;
  }
  if (c.TryConsumeWord("inf") || c.TryConsumeWord("infinity")) {
    v.number = negative ? -INFINITY : INFINITY;
    v.number_f32 = static_cast<float>(v.number);
    return v;
  }
  // Scan the extent of the number so conversions never read past it.
  const std::string_view text = c.text();
  size_t end = c.pos();
  bool is_hex = end + 1 < text.size() && text[end] == '0' && (text[end + 1] == 'x' || text[end + 1] == 'X');
  if (is_hex) end += 2;
  while (end < text.size()) {
    char ch = text[end];
    bool ok = std::isdigit(static_cast<unsigned char>(ch)) || ch == '.' ||
              (is_hex ? std::isxdigit(static_cast<unsigned char>(ch)) || ch == 'p' || ch == 'P'
                      : ch == 'e' || ch == 'E');
    if (!ok && (ch == '-' || ch == '+') && end > 0 &&
        (text[end - 1] == 'e' || text[end - 1] == 'E' || text[end - 1] == 'p' || text[end - 1] == 'P') && !is_hex) {
      ok = true;
    }
    if (!ok && (ch == '-' || ch == '+') && is_hex && (text[end - 1] == 'p' || text[end - 1] == 'P')) ok = true;
    if (!ok) break;
    ++end;
  }
  std::string token(text.substr(sign_pos, end - sign_pos));
  if (end == c.pos()) {
    c.set_pos(start);
    return c.Expected("a number");
  }
  bool integral = token.find_first_of(".eEpP") == std::string::npos || (is_hex && token.find_first_of(".pP") == std::string::npos);
  if (integral) {
    std::string_view digits(token);
    if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.remove_prefix(1);
    int base = 10;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
      digits.remove_prefix(2);
      base = 16;
    }
    uint64_t u = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
    if (r.ec == std::errc() && r.ptr == digits.data() + digits.size()) {
      v.is_integer = true;
      // Negate in unsigned arithmetic: -9223372036854775808 is a valid s64.
      v.uinteger = negative ? 0 - u : u;
      v.integer = static_cast<int64_t>(v.uinteger);
      v.number = negative ? -static_cast<double>(u) : static_cast<double>(u);
      v.number_f32 = std::strtof(token.c_str(), nullptr);
      if (base == 16) v.number_f32 = static_cast<float>(v.number);
      c.set_pos(end);
      return v;
    }
  }
  char* parse_end = nullptr;
  v.number = std::strtod(token.c_str(), &parse_end);
  if (parse_end != token.c_str() + token.size()) {
    c.set_pos(start);
    return c.Expected("a number");
  }
  v.number_f32 = std::strtof(token.c_str(), nullptr);
  c.set_pos(end);
  return v;
}

void StoreReal(Literal& literal, int64_t index, const RealValue& v) {
  ElementType t = literal.shape().element_type();
  if (v.kind == RealValue::kNan) {
    literal.SetNan(index, v.negative, v.payload);
    return;
  }
  switch (Info(t).type_class) {
    case TypeClass::kPred: literal.SetUint(index, v.is_integer ? (v.uinteger != 0) : (v.number != 0)); break;
    case TypeClass::kSigned: literal.SetInt(index, v.is_integer ? v.integer : static_cast<int64_t>(v.number)); break;
    case TypeClass::kUnsigned: literal.SetUint(index, v.is_integer ? v.uinteger : static_cast<uint64_t>(v.number)); break;
    case TypeClass::kFloat:
      if (t == ElementType::kF32) {
        literal.SetF32(index, v.number_f32);
      } else {
        literal.SetDouble(index, v.number);
      }
      break;
    default: break;
  }
}

}  // namespace

Status ParseLiteralElement(TextCursor& c, Literal& literal, int64_t index) {
  ElementType t = literal.shape().element_type();
  if (IsComplex(t)) {
    ANVIL_RETURN_IF_ERROR(c.Expect("("));
    auto re = ReadReal(c);
    if (!re.ok()) return re.status();
    ANVIL_RETURN_IF_ERROR(c.Expect(","));
    auto im = ReadReal(c);
    if (!im.ok()) return im.status();
    ANVIL_RETURN_IF_ERROR(c.Expect(")"));
    // Complex parts are stored through a scratch literal of the component type
    // so NaN payloads and f32 rounding follow the same rules as reals.
    Literal parts(Shape(ComponentType(t), {2}));
    StoreReal(parts, 0, *re);
    StoreReal(parts, 1, *im);
    auto& dst = literal.mutable_data();
    size_t n = static_cast<size_t>(Info(t).byte_size);
    std::copy(parts.data().begin(), parts.data().end(), dst.begin() + static_cast<ptrdiff_t>(index * n));
    return OkStatus();
  }
  size_t at = c.pos();
  auto v = ReadReal(c);
  if (!v.ok()) return v.status();
  if (v->kind == RealValue::kNan && !IsFloat(t)) {
    return c.ErrorAt(at, "nan is not a value of " + std::string(HloName(t)));
  }
  StoreReal(literal, index, *v);
  return OkStatus();
}

}  // namespace anvil::hlo
