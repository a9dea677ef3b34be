// `anvil run FILE [--plugin cpu] [--input X]... [--random-inputs] [--output DIR]
//  [--iterations N] [--profile]`: compiles the program's entry on the plugin's first
// device through the C ABI, runs it, prints (or saves as .npy) the results,
// and reports compile and execute time.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "conformance/inputs.h"
#include "hlo/hlo_parser.h"
#include "hlo/printer.h"
#include "hlo/program_text.h"
#include "tools/commands.h"
#include "tools/npy.h"
#include "tools/program_session.h"

namespace anvil::tools {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "anvil run: %s\n", message.c_str());
  return 1;
}

// An input given on the command line: a .npy file, or a literal in HLO
// spelling (`{1, 2, 3}`, `2.5`) read against the parameter's shape.
hlo::StatusOr<hlo::Literal> ReadInput(const std::string& text, const hlo::Shape& shape) {
  if (text.size() > 4 && text.substr(text.size() - 4) == ".npy") {
    ANVIL_ASSIGN_OR_RETURN(hlo::Literal l, ReadNpy(text));
    if (!l.shape().Compatible(shape)) {
      return hlo::InvalidArgument(text + " holds " + l.shape().ToString(false) + " but the parameter is " +
                                  shape.ToString(false));
    }
    return l;
  }
  auto m = hlo::ParseHloModule("HloModule input\nENTRY e {\n  ROOT c = " + shape.ToString(false) + " constant(" + text +
                               ")\n}\n",
                               {"--input", 0});
  if (!m.ok()) return m.status();
  return *(*m)->entry->root->literal;
}

std::string Summary(const hlo::Literal& l) {
  const int64_t n = l.element_count();
  if (n <= 64) return l.ToString();
  std::string out = "{";
  for (int64_t k = 0; k < 8; ++k) out += (k ? ", " : "") + l.ElementToString(k);
  return out + ", ... (" + std::to_string(n) + " elements)}";
}

}  // namespace

int RunCommand(int argc, char** argv) {
  std::string file, plugin = "cpu", output_dir;
  std::vector<std::string> inputs;
  bool random_inputs = false, profile = false;
  ProgramSession::ClientSettings settings;
  bool no_cache = false;
  int iterations = 1;
  for (int k = 0; k < argc; ++k) {
    std::string a = argv[k];
    if (a == "--plugin" && k + 1 < argc) plugin = argv[++k];
    else if (a == "--input" && k + 1 < argc) inputs.push_back(argv[++k]);
    else if (a == "--random-inputs") random_inputs = true;
    else if (a == "--output" && k + 1 < argc) output_dir = argv[++k];
    else if (a == "--iterations" && k + 1 < argc) iterations = std::max(1, std::atoi(argv[++k]));
    else if (a == "--profile") profile = true;
    else if (a == "--trace" && k + 1 < argc) settings.trace_path = argv[++k];
    else if (a == "--no-cache") no_cache = true;
    else if (a == "--compile-options" && k + 1 < argc) settings.compile_options = argv[++k];
    else if (a == "--help" || a == "-h") {
      std::printf("usage: anvil run FILE [--plugin NAME|FILE] [--input NPY_OR_LITERAL]... [--random-inputs]\n"
                  "                      [--output DIR] [--iterations N] [--profile] [--trace FILE.json] [--no-cache]\n"
                  "                      [--compile-options STR]\n"
                  "  --profile   after each execution, the plugin's time per op kind and its 20 slowest\n"
                  "              steps with the instructions each fused step holds, on stderr (the CPU\n"
                  "              plugin; the same as ANVIL_CPU_PROFILE=1)\n"
                  "  --trace F   write a Chrome trace (Perfetto, chrome://tracing) of compilation,\n"
                  "              transfers, executions and kernels to F (the same as ANVIL_TRACE=F)\n"
                  "  --no-cache  compile without the compile cache, which is $ANVIL_CACHE_DIR when set\n"
                  "              (empty: none), else $XDG_CACHE_HOME/anvil or ~/.cache/anvil\n"
                  "  --compile-options STR  the plugin's compile options (the CPU plugin's:\n"
                  "              flush_denormals=true|false)\n");
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return Fail("unknown option '" + a + "'");
    } else {
      file = a;
    }
  }
  if (file.empty()) return Fail("no program given");
  auto modules = hlo::ParseProgramFile(file);
  if (!modules.ok()) return Fail(modules.status().message());
  if (modules->size() > 1) std::fprintf(stderr, "anvil run: %s holds %zu modules; running the first\n", file.c_str(), modules->size());
  hlo::Module& module = *(*modules)[0];
  conformance::FillElidedConstants(module);
  const std::string text = hlo::Print(module);

  // Plugins read their profiling switch when they first run.
  if (profile) setenv("ANVIL_CPU_PROFILE", "1", 1);
  ProgramSession session;
  double compile_ms = 0;
  if (!no_cache) settings.cache_dir = ProgramSession::DefaultCacheDir();
  if (no_cache) setenv("ANVIL_CACHE_DIR", "", 1);  // and not the environment's either
  if (!session.Open(plugin, settings) || !session.Compile(text, &compile_ms)) return Fail(session.error());
  std::vector<hlo::Literal> args;
  for (size_t p = 0; p < session.parameters().size(); ++p) {
    const hlo::Shape& shape = session.parameters()[p];
    if (p < inputs.size()) {
      auto literal = ReadInput(inputs[p], shape);
      if (!literal.ok()) return Fail(literal.status().message());
      args.push_back(std::move(literal).value());
    } else if (random_inputs) {
      args.push_back(conformance::DeterministicLiteral(shape, 1000 + p));
    } else {
      return Fail("parameter " + std::to_string(p) + " (" + shape.ToString(false) +
                  ") has no --input; give one or use --random-inputs");
    }
  }
  if (!session.Upload(args)) return Fail(session.error());
  double best_ms = 1e300, total_ms = 0;
  for (int it = 0; it < iterations; ++it) {
    double ms = 0;
    if (!session.Execute(&ms)) return Fail(session.error());
    best_ms = std::min(best_ms, ms);
    total_ms += ms;
  }
  for (size_t r = 0; r < session.results().size(); ++r) {
    hlo::Literal out;
    if (!session.Result(r, &out)) return Fail(session.error());
    if (!output_dir.empty()) {
      std::filesystem::create_directories(output_dir);
      std::string path = output_dir + "/result_" + std::to_string(r) + ".npy";
      hlo::Status written = WriteNpy(path, out);
      if (!written.ok()) return Fail(written.message());
      std::printf("result %zu: %s -> %s\n", r, out.shape().ToString(false).c_str(), path.c_str());
    } else {
      std::printf("result %zu: %s %s\n", r, out.shape().ToString(false).c_str(), Summary(out).c_str());
    }
  }
  std::printf("compile: %.1f ms, execute: %.1f ms (best of %d, mean %.1f ms)\n", compile_ms, best_ms, iterations,
              total_ms / iterations);
  return 0;
}

}  // namespace anvil::tools
