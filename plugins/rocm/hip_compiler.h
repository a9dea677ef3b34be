// HIP C++ compiled OFFLINE to AMD GPU code objects by clang (clang++-15, as
// Debian's ROCm 5.2 uses), run as a subprocess: no GPU, no HIP runtime and
// no hiprtc are needed (hiprtc 5.2 crashes the process for gfx11 targets,
// and a compiler's crash should not be the plugin's). The code objects are
// raw ELF (EM_AMDGPU), one per target, ready for hipModuleLoadData.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hlo/status.h"

namespace anvil::rocm {

class HipCompiler {
 public:
  struct Paths {
    std::string clang;              // the clang++ to run
    std::string device_libs;        // ROCm's bitcode folder (ocml.bc, ockl.bc, oclc_*.bc)
    std::string device_libs_gfx11;  // the plugin's gfx11 stand-in folder, or ""
  };

  // The process's compiler, found on the first call (thread-safe), or why
  // none could be.
  static hlo::StatusOr<const HipCompiler*> Get();

  // Searches anew (tests; Get() is the one to use). clang: ANVIL_HIP_CLANG
  // if set (and then only it), else clang++-15 on PATH, else
  // /usr/lib/llvm-15/bin/clang++. Device libraries: ANVIL_HIP_DEVICE_LIBS,
  // else /usr/lib/x86_64-linux-gnu/amdgcn/bitcode. The gfx11 folder:
  // ANVIL_HIP_DEVICE_LIBS_GFX11, else anvil_rocm_gfx11_bitcode beside the
  // library this code is in (the plugin), if there is one. (Tests pass
  // another `fallback_clang`.)
  static hlo::StatusOr<std::unique_ptr<HipCompiler>> Find(const std::string& fallback_clang = kClangFallback);
  static constexpr const char* kClangFallback = "/usr/lib/llvm-15/bin/clang++";

  explicit HipCompiler(Paths paths) : paths_(std::move(paths)) {}
  const Paths& paths() const { return paths_; }

  // The device-library folder for `target` ("gfx90a"): the stock one when
  // it has the target's oclc_isa_version_*.bc, else the gfx11 stand-in's;
  // NOT_FOUND saying which file is missing otherwise.
  hlo::StatusOr<std::string> DeviceLibs(const std::string& target) const;

  // Compiles HIP C++ `source` for `target` to a code object. `file_name`
  // ("kernels.hip") is what clang's diagnostics name: a failure is
  // INVALID_ARGUMENT carrying them (`kernels.hip:3:7: error: ...`). Each
  // call has its own private temporary folder, so calls may run at once.
  hlo::StatusOr<std::vector<char>> Compile(const std::string& source, const std::string& file_name,
                                           const std::string& target) const;

 private:
  Paths paths_;
};

}  // namespace anvil::rocm
