// Test support: reads a Chrome trace file strictly (the whole file must be
// JSON) and counts its events, for the tests of ANVIL_TRACE and of the
// compile cache (whose hits show as spans).
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace anvil::testing {

// One trace event's string and number members, as text.
using Event = std::map<std::string, std::string>;

// A small strict JSON reader, enough to check that the whole file parses
// and to pull out the events' top-level members.
class JsonReader {
 public:
  explicit JsonReader(std::string text) : s_(std::move(text)) {}
  // The `traceEvents` array of the top-level object; false if anything in
  // the file is not JSON.
  bool ReadTrace(std::vector<Event>* events) {
    Space();
    if (!Eat('{')) return false;
    do {
      std::string key;
      Space();
      if (!String(&key) || (Space(), !Eat(':'))) return false;
      Space();
      if (key == "traceEvents") {
        if (!Eat('[')) return false;
        Space();
        if (!Eat(']')) {
          do {
            Event e;
            Space();
            if (!Object(&e)) return false;
            events->push_back(std::move(e));
            Space();
          } while (Eat(','));
          if (!Eat(']')) return false;
        }
      } else if (!Value(nullptr)) {
        return false;
      }
      Space();
    } while (Eat(','));
    if (!Eat('}')) return false;
    Space();
    return pos_ == s_.size();
  }

 private:
  bool Eat(char c) { return pos_ < s_.size() && s_[pos_] == c ? (++pos_, true) : false; }
  void Space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c == '\\') {
        if (pos_ >= s_.size()) return false;
        c = s_[pos_++];
        if (c == 'u') {
          if (pos_ + 4 > s_.size()) return false;
          pos_ += 4;
          c = '?';
        } else if (std::string("\"\\/bfnrt").find(c) == std::string::npos) {
          return false;
        }
      }
      if (out) *out += c;
    }
    return Eat('"');
  }
  // An object; its string and number members land in `members` if given.
  bool Object(Event* members) {
    if (!Eat('{')) return false;
    Space();
    if (Eat('}')) return true;
    do {
      std::string key, value;
      Space();
      if (!String(&key) || (Space(), !Eat(':'))) return false;
      Space();
      if (!Value(&value)) return false;
      if (members) (*members)[key] = value;
      Space();
    } while (Eat(','));
    return Eat('}');
  }
  bool Value(std::string* scalar) {
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_];
    if (c == '"') return String(scalar);
    if (c == '{') return Object(nullptr);
    if (c == '[') {
      ++pos_;
      Space();
      if (Eat(']')) return true;
      do {
        Space();
        if (!Value(nullptr)) return false;
        Space();
      } while (Eat(','));
      return Eat(']');
    }
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
                                s_[pos_] == '-' || s_[pos_] == '+')) {
      ++pos_;
    }
    if (pos_ == start) return false;
    if (scalar) *scalar = s_.substr(start, pos_ - start);
    return true;
  }

  std::string s_;
  size_t pos_ = 0;
};

inline std::vector<Event> ReadTrace(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<Event> events;
  EXPECT_TRUE(JsonReader(text.str()).ReadTrace(&events)) << path << " is not a Chrome trace:\n" << text.str();
  return events;
}

inline int Count(const std::vector<Event>& events, const std::string& phase, const std::string& category,
          const std::string& name) {
  int n = 0;
  for (const Event& e : events) {
    auto get = [&](const char* k) { return e.count(k) ? e.at(k) : std::string(); };
    if (get("ph") == phase && get("cat") == category && (name.empty() || get("name") == name)) ++n;
  }
  return n;
}

}  // namespace anvil::testing
