// NVRTC, CUDA's run-time C++ compiler, opened with dlopen so that nothing at
// build time needs the CUDA toolkit: a machine with the driver and NVRTC
// (but no nvcc) compiles the plugin's kernels to cubins when it runs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hlo/status.h"

namespace anvil::cuda {

struct NvrtcApi;  // the entry points, in nvrtc_compiler.cc

struct NvrtcVersion {
  int major = 0, minor = 0;
};

class NvrtcCompiler {
 public:
  // The process's NVRTC, found and loaded on the first call (thread-safe),
  // or why none could be.
  static hlo::StatusOr<const NvrtcCompiler*> Get();

  // Searches and loads anew (tests; Get() is the one to use). The search:
  // ANVIL_NVRTC_LIBRARY if set (and then only it, so a pinned library is
  // never silently replaced); else libnvrtc.so.13, .so.12 and .so through
  // the dynamic loader's path, then each of them under lib64/ and lib/ of
  // the toolkits named by CUDA_HOME, CUDA_PATH and the nvcc on PATH.
  static hlo::StatusOr<std::unique_ptr<NvrtcCompiler>> Load();

  ~NvrtcCompiler();
  NvrtcCompiler(const NvrtcCompiler&) = delete;
  NvrtcCompiler& operator=(const NvrtcCompiler&) = delete;

  // The file loaded, as the dynamic loader resolved it.
  const std::string& library_path() const { return path_; }
  NvrtcVersion Version() const { return version_; }
  // The sm numbers this NVRTC can compile for (75, 80, 86, ...), ascending.
  const std::vector<int>& SupportedArchs() const { return archs_; }

  // Compiles CUDA C++ `source` for sm_`sm` (80 for sm_80) to a cubin, with
  // -default-device (unannotated functions are device code), --std=c++17
  // and `options`. On failure the message names `name_for_messages` and
  // carries NVRTC's log, whose lines read `name(line): error: ...`. Safe to
  // call from many threads at once: each call has its own NVRTC program.
  hlo::StatusOr<std::vector<char>> Compile(const std::string& source, const std::string& name_for_messages, int sm,
                                           const std::vector<std::string>& options = {}) const;

 private:
  NvrtcCompiler() = default;
  std::string Resolve(void* handle);  // "" or the missing symbol's message

  std::unique_ptr<NvrtcApi> api_;
  std::string path_;
  NvrtcVersion version_;
  std::vector<int> archs_;
};

}  // namespace anvil::cuda
