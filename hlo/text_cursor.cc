#include "hlo/text_cursor.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace anvil::hlo {

bool IsIdentifierStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || std::isdigit(static_cast<unsigned char>(c));
}

bool IsIdentifierChar(char c, bool allow_dash) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' ||
         (allow_dash && c == '-');
}

void TextCursor::SkipBlanks() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && PeekRaw(1) == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else if (block_comments_ && c == '/' && PeekRaw(1) == '*') {
      size_t end = text_.find("*/", pos_ + 2);
      pos_ = end == std::string_view::npos ? text_.size() : end + 2;
    } else {
      break;
    }
  }
}

bool TextCursor::AtLineEnd() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == '/' && PeekRaw(1) == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else if (block_comments_ && c == '/' && PeekRaw(1) == '*') {
      size_t end = text_.find("*/", pos_ + 2);
      pos_ = end == std::string_view::npos ? text_.size() : end + 2;
    } else {
      return c == '\n';
    }
  }
  return true;
}

bool TextCursor::TryConsume(std::string_view s) {
  SkipBlanks();
  if (text_.substr(pos_, s.size()) == s) {
    pos_ += s.size();
    return true;
  }
  return false;
}

bool TextCursor::TryConsumeWord(std::string_view s) {
  SkipBlanks();
  if (text_.substr(pos_, s.size()) == s && !IsIdentifierChar(PeekRaw(s.size()))) {
    pos_ += s.size();
    return true;
  }
  return false;
}

Status TextCursor::Expect(std::string_view s) {
  if (TryConsume(s)) return OkStatus();
  return Expected("'" + std::string(s) + "'");
}

std::string_view TextCursor::ReadIdentifier(bool allow_dash) {
  SkipBlanks();
  size_t start = pos_;
  if (pos_ < text_.size() && IsIdentifierStart(text_[pos_])) {
    while (pos_ < text_.size() && IsIdentifierChar(text_[pos_], allow_dash)) {
      // A dash followed by '>' is an arrow, never part of a name.
      if (text_[pos_] == '-' && PeekRaw(1) == '>') break;
      ++pos_;
    }
  }
  return text_.substr(start, pos_ - start);
}

StatusOr<std::string> TextCursor::ReadString() {
  SkipBlanks();
  if (PeekRaw() != '"') return Expected("a string");
  size_t start = pos_;
  ++pos_;
  std::string out;
  while (true) {
    if (pos_ >= text_.size()) return ErrorAt(start, "unterminated string");
    char c = text_[pos_++];
    if (c == '"') break;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos_ >= text_.size()) return ErrorAt(start, "unterminated string");
    char e = text_[pos_++];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      default: {
        // MLIR writes other bytes as two hex digits: \0A.
        auto hex = [](char h) -> int {
          if (h >= '0' && h <= '9') return h - '0';
          if (h >= 'a' && h <= 'f') return h - 'a' + 10;
          if (h >= 'A' && h <= 'F') return h - 'A' + 10;
          return -1;
        };
        if (hex(e) >= 0 && hex(PeekRaw()) >= 0) {
          out += static_cast<char>(hex(e) * 16 + hex(text_[pos_++]));
        } else {
          out += '\\';
          out += e;
        }
      }
    }
  }
  return out;
}

StatusOr<int64_t> TextCursor::ReadInt() {
  SkipBlanks();
  size_t start = pos_;
  bool negative = false;
  if (PeekRaw() == '-' || PeekRaw() == '+') {
    negative = PeekRaw() == '-';
    ++pos_;
  }
  int base = 10;
  if (PeekRaw() == '0' && (PeekRaw(1) == 'x' || PeekRaw(1) == 'X')) {
    base = 16;
    pos_ += 2;
  }
  uint64_t value = 0;
  auto r = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), value, base);
  if (r.ec != std::errc() || r.ptr == text_.data() + pos_) {
    pos_ = start;
    return Expected("an integer");
  }
  pos_ = static_cast<size_t>(r.ptr - text_.data());
  return static_cast<int64_t>(negative ? 0 - value : value);  // unsigned: INT64_MIN negates cleanly
}

std::pair<int, int> TextCursor::LineColumn(size_t at) const {
  if (at > text_.size()) at = text_.size();
  if (line_starts_.empty()) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text_.size(); ++i) {
      if (text_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }
  // The last line start at or before `at`.
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), at) - 1;
  int line = source_.first_line + static_cast<int>(it - line_starts_.begin());
  return {line, static_cast<int>(at - *it + 1)};
}

std::string TextCursor::Location(size_t at) const {
  auto [line, column] = LineColumn(at);
  return source_.file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

Status TextCursor::ErrorAt(size_t at, std::string_view message) const {
  return InvalidArgument(Location(at) + ": error: " + std::string(message));
}

std::string TextCursor::DescribeHere() {
  SkipBlanks();
  if (pos_ >= text_.size()) return "end of input";
  size_t end = pos_;
  while (end < text_.size() && end - pos_ < 24 && text_[end] != '\n') ++end;
  return "'" + std::string(text_.substr(pos_, end - pos_)) + "'";
}

Status TextCursor::Expected(std::string_view what) {
  std::string found = DescribeHere();
  return Error("expected " + std::string(what) + ", found " + found);
}

std::string QuoteString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

}  // namespace anvil::hlo
