// `anvil bench FILE [--plugin P] [--iterations N] [--warmup N] [--json F]`:
// compiles the program's entry on the plugin's first device through the C
// ABI, cold into an empty compile cache and then warm from it in a second
// client (when the plugin can serialise its executables), runs it on deterministic inputs `warmup` times untimed and then
// `iterations` times timed, and prints compile time, execute min/median/max,
// and two rates at the median: the bytes of its arguments and results (what
// any implementation must move at least once) per second, and, when it has
// dots or convolutions, their flops per second. Rates are for comparing
// with something measured in the same run (memcpy, a BLAS), not targets.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <iterator>
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
               "  --compile-only   time the compiles and run nothing\n"
               "  --cache-dir DIR  compile once, through the compile cache in DIR\n"
               "  --compile-options STR  the plugin's compile options (the CPU plugin's:\n"
               "                   flush_denormals=true|false)\n"
               "Without --cache-dir the compile is timed cold, into an empty temporary compile\n"
               "cache, then warm from it: in a new process (the cache's use), and in a second\n"
               "client of this process (libraries loaded, their own caches warm).\n");
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

// `anvil bench FILE --compile-only --cache-dir DIR` in a new process: the
// compile time it reports, or -1.
double CompileInNewProcess(const std::string& file, const std::string& plugin, const std::string& cache_dir,
                           const std::string& compile_options) {
  const std::string json = cache_dir + "/new-process.json";
  std::vector<std::string> args = {"anvil", "bench", file, "--plugin", plugin, "--compile-only", "--cache-dir",
                                   cache_dir, "--json", json, "--compile-options", compile_options};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  std::ifstream in(json);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find("\"compile_ms\": ");
  return at == std::string::npos ? -1 : std::atof(text.c_str() + at + 14);
}

}  // namespace

int BenchCommand(int argc, char** argv) {
  std::string file, plugin = "cpu", json;
  ProgramSession::ClientSettings settings;
  bool compile_only = false;
  std::string cache_dir;
  int iterations = 10, warmup = 1;
  for (int k = 0; k < argc; ++k) {
    std::string a = argv[k];
    if (a == "--plugin" && k + 1 < argc) plugin = argv[++k];
    else if (a == "--iterations" && k + 1 < argc) iterations = std::max(1, std::atoi(argv[++k]));
    else if (a == "--warmup" && k + 1 < argc) warmup = std::max(0, std::atoi(argv[++k]));
    else if (a == "--json" && k + 1 < argc) json = argv[++k];
    else if (a == "--trace" && k + 1 < argc) settings.trace_path = argv[++k];
    else if (a == "--compile-only") compile_only = true;
    else if (a == "--cache-dir" && k + 1 < argc) cache_dir = argv[++k];
    else if (a == "--compile-options" && k + 1 < argc) settings.compile_options = argv[++k];
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

  ProgramSession session;
  double compile_ms = 0, warm_ms = -1, warm_new_process_ms = -1;
  if (!cache_dir.empty()) {
    // The caller's cache: this compile is cold or warm as it finds it.
    settings.cache_dir = cache_dir;
    if (!session.Open(plugin, settings) || !session.Compile(text, &compile_ms)) return Fail(session.error());
    std::printf("program: %s on %s\n", file.c_str(), plugin.c_str());
    std::printf("compile: %.2f ms (compile cache %s)\n", compile_ms, cache_dir.c_str());
  } else {
    // A fresh cache directory: the first compile is cold whatever the
    // environment's cache holds; then a second client of this process and a
    // new process each compile again from what it stored.
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
    if (!session.Open(plugin, settings) || !session.Compile(text, &compile_ms)) return Fail(session.error());
    bool cached = false;
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(cache_template, ignored)) {
      cached |= entry.path().extension() == ".exe";
    }
    if (cached) {
      ProgramSession warm;
      if (!warm.Open(plugin, settings) || !warm.Compile(text, &warm_ms)) return Fail(warm.error());
      warm_new_process_ms = CompileInNewProcess(file, plugin, cache_template, settings.compile_options);
    }
    std::printf("program: %s on %s\n", file.c_str(), plugin.c_str());
    if (!cached) {
      std::printf("compile: cold %.1f ms (the plugin does not serialise executables: no warm compile)\n", compile_ms);
    } else {
      std::printf("compile: cold %.1f ms; from the compile cache %.2f ms in a new process (%.1fx), %.2f ms in a "
                  "second client of this process (%.1fx)\n",
                  compile_ms, warm_new_process_ms, compile_ms / std::max(warm_new_process_ms, 1e-6), warm_ms,
                  compile_ms / std::max(warm_ms, 1e-6));
    }
  }
  std::fflush(stdout);
  auto json_number = [](double ms) { return ms >= 0 ? std::to_string(ms) : std::string("null"); };
  const std::string warm_json = json_number(warm_new_process_ms) + ", \"warm_compile_same_process_ms\": " +
                                json_number(warm_ms);
  if (compile_only) {
    if (!json.empty()) {
      std::ofstream out(json);
      out << "{\"program\": " << Json(file) << ", \"plugin\": " << Json(plugin) << ", \"compile_ms\": " << compile_ms
          << ", \"warm_compile_ms\": " << warm_json << "}\n";
      if (!out) return Fail("cannot write " + json);
    }
    return 0;
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

  std::printf("execute: min %.3f ms, median %.3f ms, max %.3f ms (%d timed after %d warm-up)\n", min_ms, median_ms,
              max_ms, iterations, warmup);
  std::printf("arguments and results: %.1f MB, %.2f GB/s at the median\n", bytes / 1e6, gbps);
  if (flops > 0) std::printf("dots and convolutions: %.3f GFLOP, %.1f GFLOP/s at the median\n", flops / 1e9, gflops);
  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\"program\": " << Json(file) << ", \"plugin\": " << Json(plugin) << ", \"compile_ms\": " << compile_ms
        << ", \"warm_compile_ms\": " << warm_json
        << ", \"iterations\": " << iterations << ", \"warmup\": " << warmup << ", \"execute_ms\": {\"min\": " << min_ms
        << ", \"median\": " << median_ms << ", \"max\": " << max_ms << "}, \"bytes\": " << bytes
        << ", \"gb_per_s\": " << gbps << ", \"flops\": " << flops << ", \"gflop_per_s\": " << (flops > 0 ? gflops : 0)
        << "}\n";
    if (!out) return Fail("cannot write " + json);
  }
  return 0;
}

}  // namespace anvil::tools
