// `anvil bench FILE [--plugin P] [--iterations N] [--warmup N] [--json F]`:
// compiles the program's entry on the plugin's first device through the C
// ABI, cold into an empty compile cache and then warm from it in a second
// client (when the plugin can serialise its executables), runs it on deterministic inputs `warmup` times untimed and then
// `iterations` times timed, and prints compile time, execute min/median/max,
// and two rates at the median: the bytes of its arguments and results (what
// any implementation must move at least once) per second, and, when it has
// dots or convolutions, their flops per second. Rates are for comparing
// with something measured in the same run (memcpy, a BLAS), not targets.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "conformance/inputs.h"
#include "hlo/cost.h"
#include "hlo/printer.h"
#include "hlo/program_text.h"
#include "tools/commands.h"
#include "tools/program_session.h"

namespace anvil::tools {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "anvil bench: %s\n", message.c_str());
  return 1;
}

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: anvil bench FILE [--plugin NAME|FILE] [--iterations N] [--warmup N] [--json FILE]\n"
               "  --plugin NAME    the plugin to run on (default cpu), or a plugin file's path\n"
               "  --iterations N   timed executions (default 10)\n"
               "  --warmup N       untimed executions first (default 1)\n"
               "  --json FILE      also write the numbers as a JSON object\n"
               "  --trace FILE     write a Chrome trace of the whole run (as ANVIL_TRACE=FILE)\n"
               "The compile is timed cold, into an empty temporary compile cache, then warm,\n"
               "by a second client reading that cache (same process: its libraries are loaded).\n");
}

double Bytes(const std::vector<hlo::Shape>& shapes) {
  double bytes = 0;
  for (const hlo::Shape& s : shapes) bytes += static_cast<double>(s.ByteSize());
  return bytes;
}

// Quotes `s` as a JSON string.
std::string Json(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

int BenchCommand(int argc, char** argv) {
  std::string file, plugin = "cpu", json;
  ProgramSession::ClientSettings settings;
  int iterations = 10, warmup = 1;
  for (int k = 0; k < argc; ++k) {
    std::string a = argv[k];
    if (a == "--plugin" && k + 1 < argc) plugin = argv[++k];
    else if (a == "--iterations" && k + 1 < argc) iterations = std::max(1, std::atoi(argv[++k]));
    else if (a == "--warmup" && k + 1 < argc) warmup = std::max(0, std::atoi(argv[++k]));
    else if (a == "--json" && k + 1 < argc) json = argv[++k];
    else if (a == "--trace" && k + 1 < argc) settings.trace_path = argv[++k];
    else if (a == "--help" || a == "-h") {
      PrintUsage(stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      PrintUsage(stderr);
      return Fail("unknown option '" + a + "'");
    } else {
      file = a;
    }
  }
  if (file.empty()) {
    PrintUsage(stderr);
    return Fail("no program given");
  }
  auto modules = hlo::ParseProgramFile(file);
  if (!modules.ok()) return Fail(modules.status().message());
  hlo::Module& module = *(*modules)[0];
  conformance::FillElidedConstants(module);
  const std::string text = hlo::Print(module);
  const double flops = hlo::MatrixFlops(module);

  // A fresh cache directory: the first compile is cold whatever the
  // environment's cache holds; the second client finds what it stored.
  char cache_template[] = "/tmp/anvil-bench-cache-XXXXXX";
  if (!mkdtemp(cache_template)) return Fail("cannot make a temporary compile cache directory");
  settings.cache_dir = cache_template;
  struct RemoveWhenDone {
    std::string dir;
    ~RemoveWhenDone() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } remove_cache{cache_template};
  ProgramSession session;
  double compile_ms = 0, warm_compile_ms = -1;
  if (!session.Open(plugin, settings) || !session.Compile(text, &compile_ms)) return Fail(session.error());
  bool cached = false;
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(cache_template, ignored)) {
    cached |= entry.path().extension() == ".exe";
  }
  if (cached) {
    ProgramSession warm;
    if (!warm.Open(plugin, settings) || !warm.Compile(text, &warm_compile_ms)) return Fail(warm.error());
  }
  std::vector<hlo::Literal> args;
  for (size_t p = 0; p < session.parameters().size(); ++p) {
    args.push_back(conformance::DeterministicLiteral(session.parameters()[p], 1000 + p));
  }
  if (!session.Upload(args)) return Fail(session.error());
  std::vector<double> times;
  for (int it = 0; it < warmup + iterations; ++it) {
    double ms = 0;
    if (!session.Execute(&ms)) return Fail(session.error());
    if (it >= warmup) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  const double min_ms = times.front(), max_ms = times.back();
  const double median_ms = times.size() % 2 ? times[times.size() / 2]
                                            : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
  const double bytes = Bytes(session.parameters()) + Bytes(session.results());
  const double gbps = bytes / (median_ms * 1e-3) / 1e9;
  const double gflops = flops / (median_ms * 1e-3) / 1e9;

  std::printf("program: %s on %s\n", file.c_str(), plugin.c_str());
  if (warm_compile_ms >= 0) {
    std::printf("compile: cold %.1f ms, warm %.2f ms from the compile cache (%.1fx)\n", compile_ms, warm_compile_ms,
                compile_ms / std::max(warm_compile_ms, 1e-6));
  } else {
    std::printf("compile: cold %.1f ms (the plugin does not serialise executables: no warm compile)\n", compile_ms);
  }
  std::printf("execute: min %.3f ms, median %.3f ms, max %.3f ms (%d timed after %d warm-up)\n", min_ms, median_ms,
              max_ms, iterations, warmup);
  std::printf("arguments and results: %.1f MB, %.2f GB/s at the median\n", bytes / 1e6, gbps);
  if (flops > 0) std::printf("dots and convolutions: %.3f GFLOP, %.1f GFLOP/s at the median\n", flops / 1e9, gflops);
  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\"program\": " << Json(file) << ", \"plugin\": " << Json(plugin) << ", \"compile_ms\": " << compile_ms
        << ", \"warm_compile_ms\": " << (warm_compile_ms >= 0 ? std::to_string(warm_compile_ms) : "null")
        << ", \"iterations\": " << iterations << ", \"warmup\": " << warmup << ", \"execute_ms\": {\"min\": " << min_ms
        << ", \"median\": " << median_ms << ", \"max\": " << max_ms << "}, \"bytes\": " << bytes
        << ", \"gb_per_s\": " << gbps << ", \"flops\": " << flops << ", \"gflop_per_s\": " << (flops > 0 ? gflops : 0)
        << "}\n";
    if (!out) return Fail("cannot write " + json);
  }
  return 0;
}

}  // namespace anvil::tools
