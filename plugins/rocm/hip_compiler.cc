#include "plugins/rocm/hip_compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

extern char** environ;

namespace anvil::rocm {
namespace {

namespace fs = std::filesystem;

constexpr const char* kClangName = "clang++-15";
constexpr const char* kDeviceLibsDefault = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";
// Made at build time beside the plugin (see CMakeLists.txt).
constexpr const char* kGfx11FolderName = "anvil_rocm_gfx11_bitcode";

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

bool IsExecutable(const std::string& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && access(path.c_str(), X_OK) == 0;
}

std::string OnPath(const std::string& name) {
  const std::string dirs = Env("PATH");
  for (size_t begin = 0; begin <= dirs.size();) {
    size_t end = std::min(dirs.find(':', begin), dirs.size());
    if (end > begin) {
      std::string candidate = dirs.substr(begin, end - begin) + "/" + name;
      if (IsExecutable(candidate)) return candidate;
    }
    begin = end + 1;
  }
  return "";
}

// The folder of the shared object this function is in: the plugin's.
std::string OwnFolder() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&OwnFolder), &info) || !info.dli_fname) return "";
  std::error_code error;
  fs::path path = fs::canonical(info.dli_fname, error);
  return error ? "" : path.parent_path().string();
}

// "gfx90a" -> "90a", "gfx1100" -> "1100": the suffix of its oclc_isa_version_*.bc.
std::string IsaSuffix(const std::string& target) { return target.starts_with("gfx") ? target.substr(3) : target; }

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void ReplaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = 0; !from.empty() && (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
}

// Removes the folder whatever way Compile leaves.
struct TempFolder {
  std::string path;
  ~TempFolder() {
    std::error_code error;
    if (!path.empty()) fs::remove_all(path, error);
  }
};

}  // namespace

hlo::StatusOr<const HipCompiler*> HipCompiler::Get() {
  static const auto* found = new hlo::StatusOr<std::unique_ptr<HipCompiler>>(Find());  // never destroyed
  if (!found->ok()) return found->status();
  return found->value().get();
}

hlo::StatusOr<std::unique_ptr<HipCompiler>> HipCompiler::Find(const std::string& fallback_clang) {
  Paths paths;
  if (std::string pinned = Env("ANVIL_HIP_CLANG"); !pinned.empty()) {
    if (!IsExecutable(pinned)) return hlo::NotFound("ANVIL_HIP_CLANG=" + pinned + " is not an executable file");
    paths.clang = pinned;
  } else {
    paths.clang = OnPath(kClangName);
    if (paths.clang.empty() && IsExecutable(fallback_clang)) paths.clang = fallback_clang;
    if (paths.clang.empty()) {
      return hlo::NotFound(std::string(kClangName) + " not found: install clang-15 and lld-15 (Debian: apt-get install " +
                           "clang-15 lld-15 rocm-device-libs libamdhip64-dev), or set ANVIL_HIP_CLANG to a clang++ " +
                           "that targets amdgcn");
    }
  }
  paths.device_libs = Env("ANVIL_HIP_DEVICE_LIBS");
  if (paths.device_libs.empty()) paths.device_libs = kDeviceLibsDefault;
  std::error_code error;
  if (!fs::is_regular_file(fs::path(paths.device_libs) / "ocml.bc", error)) {
    return hlo::NotFound("ROCm's device libraries not found (no ocml.bc in " + paths.device_libs +
                         "): install rocm-device-libs, or set ANVIL_HIP_DEVICE_LIBS to the folder holding them");
  }
  paths.device_libs_gfx11 = Env("ANVIL_HIP_DEVICE_LIBS_GFX11");
  if (paths.device_libs_gfx11.empty()) {
    if (std::string own = OwnFolder(); !own.empty() && fs::is_directory(fs::path(own) / kGfx11FolderName, error))
      paths.device_libs_gfx11 = (fs::path(own) / kGfx11FolderName).string();
  }
  return std::make_unique<HipCompiler>(std::move(paths));
}

hlo::StatusOr<std::string> HipCompiler::DeviceLibs(const std::string& target) const {
  const std::string isa = "oclc_isa_version_" + IsaSuffix(target) + ".bc";
  std::error_code error;
  if (fs::is_regular_file(fs::path(paths_.device_libs) / isa, error)) return paths_.device_libs;
  // ROCm 5.2 ships no gfx11 ISA bitcode; the plugin's build makes a
  // stand-in folder (untested on gfx11 hardware).
  if (!paths_.device_libs_gfx11.empty() && fs::is_regular_file(fs::path(paths_.device_libs_gfx11) / isa, error))
    return paths_.device_libs_gfx11;
  return hlo::NotFound("ROCm's device libraries in " + paths_.device_libs + " have no " + isa + " for " + target +
                       (paths_.device_libs_gfx11.empty() ? std::string(" (and the plugin's gfx11 stand-in folder is missing)")
                                                         : " (nor has " + paths_.device_libs_gfx11 + ")"));
}

hlo::StatusOr<std::vector<char>> HipCompiler::Compile(const std::string& source, const std::string& file_name,
                                                      const std::string& target) const {
  ANVIL_ASSIGN_OR_RETURN(std::string libs, DeviceLibs(target));
  std::string base = Env("TMPDIR");
  if (base.empty()) base = "/tmp";
  std::string pattern = base + "/anvil-hip-XXXXXX";
  if (!mkdtemp(pattern.data())) return hlo::Internal("mkdtemp " + pattern + ": " + std::strerror(errno));
  TempFolder folder{pattern};
  const fs::path dir = folder.path;
  const fs::path input = dir / file_name, output = dir / "out.co", log = dir / "stderr.txt";
  {
    std::ofstream out(input, std::ios::binary);
    out << source;
    if (!out.flush()) return hlo::Internal("cannot write " + input.string());
  }
  // hipcc's flags for a device-only code object, without its bundle.
  std::vector<std::string> args = {paths_.clang, "-x", "hip", "--offload-arch=" + target, "--cuda-device-only",
                                   "--no-gpu-bundle-output", "--rocm-path=/usr", "--hip-device-lib-path=" + libs,
                                   "-std=c++17", "-O3", "-mllvm", "-amdgpu-early-inline-all=true", "-mllvm",
                                   "-amdgpu-function-calls=false", "-c", input.string(), "-o", output.string()};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  // clang's own temporaries go in the private folder too.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (!std::string_view(*e).starts_with("TMPDIR=")) env_text.push_back(*e);
  env_text.push_back("TMPDIR=" + folder.path);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, paths_.clang.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return hlo::Internal("cannot run " + paths_.clang + ": " + std::strerror(spawned));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return hlo::Internal("waitpid " + paths_.clang + ": " + std::strerror(errno));
  }
  std::string diagnostics = ReadFile(log);
  ReplaceAll(diagnostics, folder.path + "/", "");  // "kernels.hip:3:7: error: ..."
  while (!diagnostics.empty() && diagnostics.back() == '\n') diagnostics.pop_back();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                        : "signal " + std::to_string(WTERMSIG(status));
    std::string message = paths_.clang + " failed for " + target + " (" + how + "):\n" + diagnostics;
    return WIFEXITED(status) && WEXITSTATUS(status) == 1 ? hlo::InvalidArgument(message) : hlo::Internal(message);
  }
  std::string code = ReadFile(output);
  if (code.size() < 4 || code.compare(0, 4, "\x7f" "ELF") != 0)
    return hlo::Internal(paths_.clang + " wrote no code object for " + target + ": " + diagnostics);
  return std::vector<char>(code.begin(), code.end());
}

}  // namespace anvil::rocm
