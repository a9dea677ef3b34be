// `anvil conformance --plugin NAME|PATH [--json FILE] [--report FILE] PATH...`:
// runs the corpora's programs on a plugin (through the C ABI; by name, or a
// plugin file's path when it holds a '/') or on the reference evaluator
// (`--plugin reference`) and ends with
// `N passed, N failed, N skipped`. Exit 0 only when nothing failed.
// With `--compile-only` it compiles every program for the plugin's
// compile-only targets (all, or those named by `--target`) and runs none.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "conformance/runner.h"
#include "tools/commands.h"

namespace anvil::tools {
namespace {

bool verbose = false;

void Progress(const conformance::TestResult& r) {
  if (r.status == conformance::TestResult::Status::kPassed && !verbose) return;
  std::fprintf(stderr, "%s %s:%s: %s\n", conformance::StatusName(r.status), r.file.c_str(), r.function.c_str(),
               r.reason.c_str());
}

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: anvil conformance --plugin NAME|FILE|reference [--json FILE] [--report FILE]\n"
               "                         [--expected FILE] [--reference-plugin NAME]\n"
               "                         [--compile-only [--target NAME]...] [-v] PATH...\n"
               "  --plugin NAME|FILE  a plugin on the search path by name (cpu), or a plugin\n"
               "                   library by path (anything with a '/': ./libanvil_plugin_x.so)\n"
               "  --expected FILE  the failures and skips that are known, one per line as\n"
               "                   PATH:FUNCTION<TAB>REASON; exit 0 when the run matches it\n"
               "                   exactly (no new failure, no stale entry)\n"
               "  --reference-budget G  the most work, in billions of multiply-adds, the\n"
               "                   reference evaluator spends checking one .hlo program\n"
               "                   (default 200); a program over it runs on the plugin\n"
               "                   and is reported skipped with its estimate\n"
               "  --reference-plugin NAME  compare .hlo programs' results with another\n"
               "                   plugin's (the CPU plugin for a model too big for the\n"
               "                   evaluator) instead of the reference evaluator's, by the\n"
               "                   same rules\n"
               "  --compile-only   compile every program for each of the plugin's\n"
               "                   compile-only targets (sm_90, say: no device needed) and\n"
               "                   run nothing; a program passes when it compiles for all\n"
               "                   of them, and a failure names the target first\n"
               "  --target NAME    with --compile-only, only this target (repeatable)\n");
}

}  // namespace

int ConformanceCommand(int argc, char** argv) {
  std::string plugin, json, report, expected, reference_plugin;
  conformance::RunOptions options;
  options.progress = &Progress;
  std::vector<std::string> paths, targets;
  bool compile_only = false;
  for (int k = 0; k < argc; ++k) {
    std::string a = argv[k];
    if (a == "--plugin" && k + 1 < argc) {
      plugin = argv[++k];
    } else if (a == "--json" && k + 1 < argc) {
      json = argv[++k];
    } else if (a == "--report" && k + 1 < argc) {
      report = argv[++k];
    } else if (a == "--expected" && k + 1 < argc) {
      expected = argv[++k];
    } else if (a == "--reference-plugin" && k + 1 < argc) {
      reference_plugin = argv[++k];
    } else if (a == "--reference-budget" && k + 1 < argc) {
      char* end = nullptr;
      const double billions = std::strtod(argv[++k], &end);
      if (*end != '\0' || billions < 0) {
        std::fprintf(stderr, "anvil conformance: --reference-budget takes a number of billions\n");
        return 2;
      }
      options.reference_budget = billions * 1e9;
    } else if (a == "--compile-only") {
      compile_only = true;
    } else if (a == "--target" && k + 1 < argc) {
      targets.push_back(argv[++k]);
    } else if (a == "-v" || a == "--verbose") {
      verbose = true;
    } else if (a == "--help" || a == "-h") {
      Usage(stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "anvil conformance: unknown option '%s'\n", a.c_str());
      Usage(stderr);
      return 2;
    } else {
      paths.push_back(a);
    }
  }
  if (plugin.empty() || paths.empty()) {
    Usage(stderr);
    return 2;
  }
  if (!targets.empty() && !compile_only) {
    std::fprintf(stderr, "anvil conformance: --target needs --compile-only\n");
    return 2;
  }
  if (compile_only && plugin == "reference") {
    std::fprintf(stderr, "anvil conformance: --compile-only needs a plugin; the reference evaluator compiles nothing\n");
    return 2;
  }
  if (compile_only && !reference_plugin.empty()) {
    std::fprintf(stderr, "anvil conformance: --reference-plugin compares results, and --compile-only runs nothing\n");
    return 2;
  }
  options.compile_only = compile_only;
  std::unique_ptr<conformance::Backend> backend;
  if (compile_only) {
    auto made = conformance::MakeCompileOnlyBackend(plugin, targets);
    if (!made.ok()) {
      std::fprintf(stderr, "anvil conformance: %s\n", made.status().message().c_str());
      return 1;
    }
    backend = std::move(made).value();
    std::string names;
    for (const std::string& t : backend->targets()) names += (names.empty() ? "" : ", ") + t;
    std::fprintf(stderr, "anvil conformance: compiling only, for %s's targets %s\n", plugin.c_str(), names.c_str());
  } else if (plugin == "reference") {
    backend = conformance::MakeReferenceBackend();
  } else {
    auto made = conformance::MakePluginBackend(plugin);
    if (!made.ok()) {
      std::fprintf(stderr, "anvil conformance: %s\n", made.status().message().c_str());
      return 1;
    }
    backend = std::move(made).value();
  }
  std::unique_ptr<conformance::Backend> reference;
  if (!reference_plugin.empty()) {
    auto made = conformance::MakePluginBackend(reference_plugin);
    if (!made.ok()) {
      std::fprintf(stderr, "anvil conformance: %s\n", made.status().message().c_str());
      return 1;
    }
    reference = std::move(made).value();
    options.reference = reference.get();
  }
  auto results = conformance::RunConformance(paths, *backend, options);
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& r : results) {
    if (r.status == conformance::TestResult::Status::kPassed) ++passed;
    if (r.status == conformance::TestResult::Status::kFailed) ++failed;
    if (r.status == conformance::TestResult::Status::kSkipped) ++skipped;
  }
  if (!json.empty()) std::ofstream(json) << conformance::ToJson(results);
  if (!report.empty()) {
    std::string title = backend->name();
    if (compile_only) {
      std::string names;
      for (const std::string& t : backend->targets()) names += (names.empty() ? "" : ", ") + t;
      title += "` compiling only, for `" + names;
    }
    std::ofstream(report) << conformance::ToReport(results, title);
  }
  int mismatches = 0;
  if (!expected.empty()) {
    auto outcome = conformance::CheckExpectations(results, expected);
    if (!outcome.ok()) {
      std::fprintf(stderr, "anvil conformance: %s\n", outcome.status().message().c_str());
      return 2;
    }
    for (const std::string& m : *outcome) std::fprintf(stderr, "expectation: %s\n", m.c_str());
    mismatches = static_cast<int>(outcome->size());
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  if (!expected.empty()) return mismatches == 0 ? 0 : 1;
  return failed == 0 ? 0 : 1;
}

}  // namespace anvil::tools
