// A cursor over program text shared by both parsers: skips blanks and
// comments, reads the lexical pieces both syntaxes share, and turns a
// position into `FILE:LINE:COL: error: ...` messages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hlo/status.h"

namespace anvil::hlo {

struct SourceInfo {
  std::string file = "<input>";
  int first_line = 1;  // line number of the text's first line in the file
};

class TextCursor {
 public:
  TextCursor(std::string_view text, SourceInfo source, bool allow_block_comments)
      : text_(text), source_(std::move(source)), block_comments_(allow_block_comments) {}

  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }
  bool AtEnd() { SkipBlanks(); return pos_ >= text_.size(); }
  std::string_view text() const { return text_; }

  // Skips spaces, newlines and comments.
  void SkipBlanks();
  // Skips spaces and comments but stops at a newline; true if one follows.
  bool AtLineEnd();
  char Peek() { SkipBlanks(); return pos_ < text_.size() ? text_[pos_] : '\0'; }
  char PeekRaw(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  // Consumes `s` (after blanks) if the text continues with it.
  bool TryConsume(std::string_view s);
  // Like TryConsume, but `s` must not be followed by an identifier character.
  bool TryConsumeWord(std::string_view s);
  bool LookingAt(std::string_view s) { SkipBlanks(); return text_.substr(pos_, s.size()) == s; }
  Status Expect(std::string_view s);

  // An identifier of letters, digits and `_ . - $`, starting with a letter,
  // a digit or `_`. Empty if none.
  std::string_view ReadIdentifier(bool allow_dash = true);
  // A double-quoted string with C escapes, returned unescaped.
  StatusOr<std::string> ReadString();
  // An integer (optionally signed) in decimal or 0x-hex.
  StatusOr<int64_t> ReadInt();

  // "FILE:LINE:COL: error: <message>" at the current position (or at `at`).
  Status Error(std::string_view message) { return ErrorAt(pos_, message); }
  Status ErrorAt(size_t at, std::string_view message) const;
  // "expected X, found Y" with a short excerpt of what is at the position.
  Status Expected(std::string_view what);
  std::string DescribeHere();
  std::string Location(size_t at) const;
  // 1-based line (in the file) and column of a position.
  std::pair<int, int> LineColumn(size_t at) const;
  const SourceInfo& source() const { return source_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  SourceInfo source_;
  bool block_comments_;
  mutable std::vector<size_t> line_starts_;  // built on the first location asked for
  int depth_ = 0;
  friend class NestingGuard;
};

// Bounds the recursion of the parsers, so hostile input (a thousand nested
// tuples) gets an error instead of a stack overflow.
class NestingGuard {
 public:
  static constexpr int kMaxDepth = 100;
  explicit NestingGuard(TextCursor& cursor) : cursor_(cursor) { ++cursor_.depth_; }
  ~NestingGuard() { --cursor_.depth_; }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;
  // An error when nested too deeply, OK otherwise.
  Status Check() {
    if (cursor_.depth_ <= kMaxDepth) return OkStatus();
    return cursor_.Error("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  }

 private:
  TextCursor& cursor_;
};

bool IsIdentifierStart(char c);
bool IsIdentifierChar(char c, bool allow_dash = true);
// Quotes and escapes a string the way XLA and MLIR print string attributes.
std::string QuoteString(std::string_view s);

}  // namespace anvil::hlo
