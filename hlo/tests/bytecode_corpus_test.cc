// Every VHLO portable artifact of the corpus (stablehlo-vhlo/, one per VHLO
// version from 0.9.0 to 1.20.0) reads, function by function, into the same
// IR as the StableHLO text it was made from: the same functions, each either
// printing identically from both front doors or refused by both with the same
// kind of error that names it. Differences with a genuine reason are listed
// in bytecode_corpus_exceptions.txt; the test fails when that list is stale.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "hlo/attributes.h"
#include "hlo/printer.h"
#include "hlo/program_text.h"
#include "hlo/stablehlo_parser.h"
#include "hlo/tests/tab_separated.h"

namespace anvil::hlo {
namespace {

namespace fs = std::filesystem;

std::string VhloDir() { return std::string(ANVIL_CORPUS_DIR) + "/stablehlo-vhlo"; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// "FILE.mlir.bc @function" -> why the two front doors differ there.
std::map<std::string, std::string> LoadExceptions() { return LoadTabSeparated(ANVIL_BYTECODE_EXCEPTIONS); }

// The kind of a refusal: what Anvil does not run, from the message.
std::string Kind(const Status& s) {
  const std::string& m = s.message();
  if (m.find("dynamic") != std::string::npos || m.find("unranked") != std::string::npos) return "dynamic shapes";
  if (m.find("quantized") != std::string::npos) return "quantized types";
  if (m.find("index element") != std::string::npos) return "index elements";
  if (m.find("not supported") != std::string::npos || m.find("unknown operation") != std::string::npos) {
    return "unsupported operation";
  }
  return std::string("other ") + StatusCodeName(s.code());
}

std::vector<std::string> Artifacts() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(VhloDir())) {
    const std::string name = e.path().filename().string();
    if (name.size() > 8 && name.substr(name.size() - 8) == ".mlir.bc" && name.rfind("invalid_", 0) != 0) {
      out.push_back(name);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Drops instruction metadata (where the framework's source put each op),
// which text carries as `loc(...)` the parser skips and bytecode as
// locations the reader keeps: debug information, not what a program means.
int DropMetadata(Module& module) {
  int dropped = 0;
  for (auto& computation : module.computations) {
    for (auto& instruction : computation->instructions) {
      auto& attributes = instruction->attributes;
      const size_t before = attributes.size();
      attributes.erase(std::remove_if(attributes.begin(), attributes.end(),
                                      [](const Attribute& a) { return a.key == "metadata"; }),
                       attributes.end());
      dropped += static_cast<int>(before - attributes.size());
    }
  }
  return dropped;
}

TEST(BytecodeCorpus, CorpusIsThere) {
  // CI has the corpus; a missing folder must fail loudly, not pass quietly.
  ASSERT_TRUE(fs::is_directory(VhloDir())) << VhloDir() << " is missing";
  EXPECT_GE(Artifacts().size(), 30u);
}

TEST(BytecodeCorpus, EveryFunctionReadsAsItsTextDoes) {
  ASSERT_TRUE(fs::is_directory(VhloDir())) << VhloDir() << " is missing";
  const auto exceptions = LoadExceptions();
  std::set<std::string> used_exceptions;
  int equal = 0, refused = 0, excepted = 0, mismatched = 0;
  int with_locations = 0;  // functions whose bytecode kept source locations
  std::map<std::string, int> refusals_by_kind;
  for (const std::string& artifact : Artifacts()) {
    const std::string bc_path = VhloDir() + "/" + artifact;
    const std::string text_path = bc_path.substr(0, bc_path.size() - 3);
    ASSERT_TRUE(fs::exists(text_path)) << text_path;
    auto from_text = ParseStableHloFunctions(ReadAll(text_path), SourceInfo{text_path, 1});
    auto from_bytecode = ParseStableHloBytecodeFunctions(ReadAll(bc_path), SourceInfo{bc_path, 1});
    if (!from_text.ok() || !from_bytecode.ok()) {
      ++mismatched;
      ADD_FAILURE() << artifact << " does not read at all: "
                    << (from_text.ok() ? from_bytecode.status().message() : from_text.status().message());
      continue;
    }

    std::map<std::string, FunctionModule*> text_functions, bytecode_functions;
    for (FunctionModule& f : *from_text) text_functions[f.name] = &f;
    for (FunctionModule& f : *from_bytecode) bytecode_functions[f.name] = &f;
    std::set<std::string> names;
    for (const auto& [name, f] : text_functions) names.insert(name);
    for (const auto& [name, f] : bytecode_functions) names.insert(name);
    for (const std::string& name : names) {
      const std::string key = artifact + " @" + name;
      std::string problem;
      FunctionModule* t = text_functions.count(name) ? text_functions[name] : nullptr;
      FunctionModule* b = bytecode_functions.count(name) ? bytecode_functions[name] : nullptr;
      if (!t || !b) {
        problem = std::string("read only from ") + (t ? "text" : "bytecode");
      } else if (t->module.ok() && b->module.ok()) {
        with_locations += DropMetadata(**b->module) > 0;
        const std::string tp = Print(**t->module), bp = Print(**b->module);
        if (tp != bp) problem = "different IR:\n--- text\n" + tp + "\n--- bytecode\n" + bp;
      } else if (!t->module.ok() && !b->module.ok()) {
        const Status& ts = t->module.status();
        const Status& bs = b->module.status();
        if (Kind(ts) != Kind(bs)) {
          problem = "refused differently:\n  text: " + ts.message() + "\n  bytecode: " + bs.message();
        } else if (ts.message().find("@" + name) == std::string::npos ||
                   bs.message().find("@" + name) == std::string::npos) {
          problem = "a refusal does not name the function:\n  text: " + ts.message() + "\n  bytecode: " + bs.message();
        } else {
          refusals_by_kind[Kind(bs)]++;
          // Refusals for other reasons are worth seeing in the log.
          if (Kind(bs).rfind("other", 0) == 0) printf("refused by both: %s\n", bs.message().c_str());
        }
      } else {
        problem = std::string("refused only from ") + (t->module.ok() ? "bytecode: " + b->module.status().message()
                                                                      : "text: " + t->module.status().message());
      }
      if (problem.empty()) {
        if (t->module.ok()) ++equal; else ++refused;
        EXPECT_FALSE(exceptions.count(key)) << key << " is listed as an exception but reads the same";
        continue;
      }
      if (exceptions.count(key)) {
        used_exceptions.insert(key);
        ++excepted;
        continue;
      }
      ++mismatched;
      ADD_FAILURE() << key << ": " << problem;
    }
  }
  for (const auto& [key, reason] : exceptions) {
    EXPECT_TRUE(used_exceptions.count(key)) << "stale exception: " << key;
  }
  std::string kinds;
  for (const auto& [kind, n] : refusals_by_kind) kinds += " " + kind + ": " + std::to_string(n) + ";";
  printf("VHLO corpus: %d functions equal, %d refused by both (%s ), %d listed exceptions, %d mismatched\n", equal,
         refused, kinds.c_str(), excepted, mismatched);
  EXPECT_GT(equal, 0);
  // vhlo_emit_version_api.1_1_0.mlir.bc was written with its locations:
  // they must reach the instructions as metadata.
  EXPECT_GT(with_locations, 0) << "no function's bytecode locations became instruction metadata";
}

TEST(BytecodeCorpus, LocationsBecomeMetadataNamingTheSourceFile) {
  const std::string path = VhloDir() + "/vhlo_emit_version_api.1_1_0.mlir.bc";
  ASSERT_TRUE(fs::exists(path)) << path;
  auto modules = ParseProgramFile(path);
  ASSERT_TRUE(modules.ok()) << modules.status().message();
  const Instruction* root = (*modules)[0]->entry->root;
  EXPECT_EQ(SourceOf(*root), "third_party/stablehlo/stablehlo/tests/vhlo/vhlo_emit_version_api.mlir:12");
}

TEST(BytecodeCorpus, WholeArtifactsReadForTheCommandLine) {
  // `anvil parse FILE.mlir.bc` goes through ParseProgramFile by extension.
  ASSERT_TRUE(fs::is_directory(VhloDir()));
  auto format = ProgramFormatFromPath("x.mlir.bc");
  ASSERT_TRUE(format.has_value());
  EXPECT_EQ(*format, ProgramFormat::kStableHloBytecode);
  EXPECT_EQ(ProgramFormatFromName("stablehlo-bytecode"), ProgramFormat::kStableHloBytecode);
}

TEST(BytecodeCorpus, ArtifactsNewerThanTheReaderAreRefused) {
  const std::string path = VhloDir() + "/invalid_vhlo_future.mlir.bc";
  ASSERT_TRUE(fs::exists(path)) << path;
  auto modules = ParseProgramFile(path);
  ASSERT_FALSE(modules.ok());
  EXPECT_EQ(modules.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(modules.status().message().find("newer than the newest this reader knows"), std::string::npos)
      << modules.status().message();
}

}  // namespace
}  // namespace anvil::hlo
