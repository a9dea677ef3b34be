// `anvil`: the command-line tool. Dispatches to one subcommand.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tools/commands.h"

namespace {

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: anvil <command> [arguments]\n"
               "\n"
               "commands:\n"
               "  parse FILE...   parse, verify and print programs as canonical HLO text\n"
               "  plugins         list the plugins found, their devices, and load failures\n"
               "  conformance     run the corpora's programs on a plugin and compare\n"
               "  run FILE        run a program on a plugin, print its results and timings\n"
               "  bench FILE      time a program's compile and executions on a plugin\n"
               "\n"
               "Run 'anvil <command> --help' for a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  // The CPU plugin's oneDNN runs on OpenMP threads beside core's oneTBB
  // workers; by default libgomp's threads spin after each parallel region,
  // taking a core from the next step's loops (MobileNet's step: 2.66 s
  // median spinning, 2.46 s passive). Set before any plugin loads libgomp;
  // a value the user set wins. Applications embedding libanvil choose their own.
  setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    PrintUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "parse")) return anvil::tools::ParseCommand(argc - 2, argv + 2);
  if (!std::strcmp(argv[1], "plugins")) return anvil::tools::PluginsCommand(argc - 2, argv + 2);
  if (!std::strcmp(argv[1], "conformance")) return anvil::tools::ConformanceCommand(argc - 2, argv + 2);
  if (!std::strcmp(argv[1], "run")) return anvil::tools::RunCommand(argc - 2, argv + 2);
  if (!std::strcmp(argv[1], "bench")) return anvil::tools::BenchCommand(argc - 2, argv + 2);
  std::fprintf(stderr, "anvil: unknown command '%s'\n", argv[1]);
  PrintUsage(stderr);
  return 2;
}
