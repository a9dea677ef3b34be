// Every program of the corpora parses, verifies and round-trips through the
// printer (parse(print(m)) == m) and through the binary form caches keep
// (read(write(m)) == m, printing the same), except the files listed with a reason in
// corpus_exceptions.txt; the test also fails when that list is stale.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "hlo/binary_module.h"
#include "hlo/hlo_parser.h"
#include "hlo/printer.h"
#include "hlo/program_text.h"
#include "hlo/verifier.h"
#include "hlo/tests/tab_separated.h"

namespace anvil::hlo {
namespace {

std::string CorpusDir() { return ANVIL_CORPUS_DIR; }

// corpus-relative path -> the error message the file must produce.
std::map<std::string, std::string> LoadExceptions() { return LoadTabSeparated(ANVIL_CORPUS_EXCEPTIONS); }

// Empty when the file parses, verifies and round-trips; else the first error.
std::string CheckFile(const std::string& path) {
  auto modules = ParseProgramFile(path);
  if (!modules.ok()) return modules.status().message();
  for (const auto& module : *modules) {
    Status verified = Verify(*module);
    if (!verified.ok()) return verified.message();
    std::string printed = Print(*module);
    auto reparsed = ParseHloModule(printed, SourceInfo{path + " (printed)", 1});
    if (!reparsed.ok()) return "printed text does not parse: " + reparsed.status().message();
    Status reverified = Verify(**reparsed);
    if (!reverified.ok()) return "printed text does not verify: " + reverified.message();
    std::string difference;
    if (!Equal(*module, **reparsed, &difference)) return "round trip differs: " + difference;
    if (Print(**reparsed) != printed) return "printing is not stable";
    auto binary = ReadBinaryModule(WriteBinaryModule(*module), path + " (binary)");
    if (!binary.ok()) return "binary form does not read back: " + binary.status().message();
    if (!Equal(*module, **binary, &difference)) return "binary round trip differs: " + difference;
    if (Print(**binary) != printed) return "the binary form prints differently";
  }
  // The whole file printed (what `anvil parse` writes) reads back into as
  // many modules, each equal to its original.
  auto all = ParseHloText(PrintModules(*modules), SourceInfo{path + " (printed)", 1});
  if (!all.ok()) return "printed modules do not parse: " + all.status().message();
  if (all->size() != modules->size()) {
    return "printed " + std::to_string(modules->size()) + " modules, read back " + std::to_string(all->size());
  }
  for (size_t k = 0; k < all->size(); ++k) {
    std::string difference;
    if (!Equal(*(*modules)[k], *(*all)[k], &difference)) return "module " + std::to_string(k) + " differs: " + difference;
  }
  return "";
}

class CorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusTest, ParsesVerifiesAndRoundTrips) {
  const std::string dir = CorpusDir() + "/" + GetParam();
  const auto exceptions = LoadExceptions();
  int checked = 0;
  std::vector<std::string> unexpected, stale, wrong_reason;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::string path = entry.path().string();
    if (!ProgramFormatFromPath(path)) continue;
    ++checked;
    std::string relative = std::filesystem::relative(path, CorpusDir()).string();
    std::string error = CheckFile(path);
    auto listed = exceptions.find(relative);
    if (listed == exceptions.end()) {
      if (!error.empty()) unexpected.push_back(relative + ": " + error);
    } else if (error.empty()) {
      stale.push_back(relative);
    } else if (error.find(listed->second) == std::string::npos) {
      wrong_reason.push_back(relative + ": expected '" + listed->second + "', got '" + error + "'");
    }
  }
  EXPECT_GT(checked, 0) << "no programs under " << dir;
  for (const auto& u : unexpected) ADD_FAILURE() << "fails and is not listed: " << u;
  for (const auto& s : stale) ADD_FAILURE() << "listed as failing but passes (remove it): " << s;
  for (const auto& w : wrong_reason) ADD_FAILURE() << "fails for another reason: " << w;
}

INSTANTIATE_TEST_SUITE_P(Corpora, CorpusTest,
                         ::testing::Values("stablehlo/interpret", "stablehlo/testdata", "xla-hlo"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace anvil::hlo
