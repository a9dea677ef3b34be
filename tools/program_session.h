// What `anvil run` and `anvil bench` do alike, through the C ABI only: load
// one plugin into a fresh client, compile a program on its first device,
// upload its arguments, execute (timed), and read results back. Every
// failure is a message; the destructor releases every handle.
#pragma once

#include <string>
#include <vector>

#include "anvil/anvil.h"
#include "hlo/literal.h"
#include "hlo/shape.h"

namespace anvil::tools {

class ProgramSession {
 public:
  ProgramSession() = default;
  ~ProgramSession();
  ProgramSession(const ProgramSession&) = delete;
  ProgramSession& operator=(const ProgramSession&) = delete;

  // Each returns false and sets error() on failure.
  // What the client is created with beyond the plugin; empty strings leave
  // the environment's choice (ANVIL_TRACE, ANVIL_CACHE_DIR).
  struct ClientSettings {
    std::string trace_path;
    std::string cache_dir;
    std::string compile_options;  // anvil_compile_args.options, for the plugin
  };
  bool Open(const std::string& plugin, const ClientSettings& settings = {});
  // The compile cache `anvil run` uses unless told otherwise:
  // $XDG_CACHE_HOME/anvil (else ~/.cache/anvil); "" when ANVIL_CACHE_DIR is
  // set (the client then reads it; set it empty to turn the cache off) or
  // there is no home.
  static std::string DefaultCacheDir();
  // Compiles HLO text; `compile_ms` is the wall time of anvil_client_compile.
  bool Compile(const std::string& hlo_text, double* compile_ms);
  // Uploads one argument per parameter (shapes from parameters()).
  bool Upload(const std::vector<hlo::Literal>& arguments);
  // Runs once on the uploaded arguments and waits; the previous outputs
  // are released first. `execute_ms` covers execute and await.
  bool Execute(double* execute_ms);
  // Output `r` of the last execution.
  bool Result(size_t r, hlo::Literal* out);

  const std::vector<hlo::Shape>& parameters() const { return parameters_; }
  const std::vector<hlo::Shape>& results() const { return results_; }
  const std::string& error() const { return error_; }

 private:
  bool Check(anvil_status* status);
  void ReleaseOutputs();

  anvil_client* client_ = nullptr;
  anvil_device* device_ = nullptr;
  anvil_executable* executable_ = nullptr;
  std::vector<anvil_buffer*> inputs_, outputs_;
  std::vector<hlo::Shape> parameters_, results_;
  std::string error_;
  std::string compile_options_;
};

}  // namespace anvil::tools
