// The `anvil` tool's subcommands; each takes the arguments after its name.
#pragma once

namespace anvil::tools {

int ParseCommand(int argc, char** argv);
int PluginsCommand(int argc, char** argv);
int ConformanceCommand(int argc, char** argv);
int RunCommand(int argc, char** argv);
int BenchCommand(int argc, char** argv);

}  // namespace anvil::tools
