// Reads the expected-exception lists of the corpus tests: one `KEY<TAB>WHY`
// per line, `#` comments and blank lines skipped.
#pragma once

#include <fstream>
#include <map>
#include <string>

namespace anvil::hlo {

inline std::map<std::string, std::string> LoadTabSeparated(const std::string& path) {
  std::map<std::string, std::string> entries;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    entries[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return entries;
}

}  // namespace anvil::hlo
