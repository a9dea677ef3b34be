// `anvil parse FILE...`: parses (format from the extension or --format),
// verifies and prints canonical HLO text; `--quiet` prints nothing but
// errors. Directories are walked for .hlo and .mlir files. Ends with
// `N passed, N failed`, counting files; exit 0 only when none failed.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "hlo/printer.h"
#include "hlo/program_text.h"
#include "hlo/verifier.h"
#include "tools/commands.h"

namespace anvil::tools {
namespace {

void PrintParseUsage(FILE* out) {
  std::fprintf(out,
               "usage: anvil parse [--quiet] [--format hlo|stablehlo|stablehlo-bytecode] FILE_OR_DIR...\n"
               "  --quiet        print only errors and the closing count\n"
               "  --format F     read every file as F instead of by extension\n");
}

// Files to parse: the arguments, with directories expanded (sorted, so the
// order is stable).
std::vector<std::string> CollectFiles(const std::vector<std::string>& arguments) {
  std::vector<std::string> files;
  for (const std::string& argument : arguments) {
    std::error_code error;
    if (std::filesystem::is_directory(argument, error)) {
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(argument, error)) {
        if (!entry.is_regular_file()) continue;
        std::string path = entry.path().string();
        if (hlo::ProgramFormatFromPath(path)) found.push_back(path);
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(argument);
    }
  }
  return files;
}

}  // namespace

int ParseCommand(int argc, char** argv) {
  bool quiet = false;
  std::optional<hlo::ProgramFormat> format;
  std::vector<std::string> arguments;
  for (int k = 0; k < argc; ++k) {
    std::string a = argv[k];
    if (a == "--quiet" || a == "-q") {
      quiet = true;
    } else if (a == "--format" && k + 1 < argc) {
      format = hlo::ProgramFormatFromName(argv[++k]);
      if (!format) {
        std::fprintf(stderr, "anvil parse: unknown format '%s' (expected hlo, stablehlo or stablehlo-bytecode)\n",
                     argv[k]);
        return 2;
      }
    } else if (a == "--help" || a == "-h") {
      PrintParseUsage(stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "anvil parse: unknown option '%s'\n", a.c_str());
      PrintParseUsage(stderr);
      return 2;
    } else {
      arguments.push_back(a);
    }
  }
  if (arguments.empty()) {
    PrintParseUsage(stderr);
    return 2;
  }
  int passed = 0, failed = 0;
  for (const std::string& file : CollectFiles(arguments)) {
    auto modules = hlo::ParseProgramFile(file, format);
    if (!modules.ok()) {
      std::cerr << modules.status().message() << "\n";
      ++failed;
      continue;
    }
    bool good = true;
    for (const auto& module : *modules) {
      hlo::Status verified = hlo::Verify(*module);
      if (!verified.ok()) {
        std::cerr << verified.message() << "\n";
        good = false;
        break;
      }
    }
    // Modules of one file are separated as in the input, so the output
    // parses again into all of them.
    if (good && !quiet) std::cout << hlo::PrintModules(*modules);
    good ? ++passed : ++failed;
  }
  // On stderr, with the errors: stdout holds only HLO text, which parses again.
  std::cout.flush();
  std::cerr << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}

}  // namespace anvil::tools
