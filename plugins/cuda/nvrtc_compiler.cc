#include "plugins/cuda/nvrtc_compiler.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <utility>

namespace anvil::cuda {

// Our own declarations of NVRTC's C ABI, as nvrtc.h documents it:
// nvrtcResult is a C enum (an int, NVRTC_SUCCESS = 0) and nvrtcProgram an
// opaque pointer. nvrtcGetCUBIN needs NVRTC 11.1 and the supported-arch
// queries 11.2, so older libraries are refused by name.
using NvrtcResult = int;
using NvrtcProgram = struct _nvrtcProgram*;
constexpr NvrtcResult kNvrtcSuccess = 0;
constexpr NvrtcResult kNvrtcErrorOutOfMemory = 1;
constexpr NvrtcResult kNvrtcErrorInvalidOption = 5;
constexpr NvrtcResult kNvrtcErrorCompilation = 6;

#define ANVIL_NVRTC_FUNCTIONS(X)                                                                          \
  X(const char*, nvrtcGetErrorString, (NvrtcResult result))                                               \
  X(NvrtcResult, nvrtcVersion, (int* major, int* minor))                                                  \
  X(NvrtcResult, nvrtcGetNumSupportedArchs, (int* count))                                                 \
  X(NvrtcResult, nvrtcGetSupportedArchs, (int* archs))                                                    \
  X(NvrtcResult, nvrtcCreateProgram,                                                                      \
    (NvrtcProgram * program, const char* source, const char* name, int header_count, const char* const* headers, \
     const char* const* include_names))                                                                   \
  X(NvrtcResult, nvrtcDestroyProgram, (NvrtcProgram * program))                                           \
  X(NvrtcResult, nvrtcCompileProgram, (NvrtcProgram program, int option_count, const char* const* options)) \
  X(NvrtcResult, nvrtcGetProgramLogSize, (NvrtcProgram program, size_t* bytes))                           \
  X(NvrtcResult, nvrtcGetProgramLog, (NvrtcProgram program, char* log))                                   \
  X(NvrtcResult, nvrtcGetCUBINSize, (NvrtcProgram program, size_t* bytes))                                \
  X(NvrtcResult, nvrtcGetCUBIN, (NvrtcProgram program, char* cubin))

struct NvrtcApi {
#define ANVIL_NVRTC_DECLARE(ret, name, params) ret (*name) params = nullptr;
  ANVIL_NVRTC_FUNCTIONS(ANVIL_NVRTC_DECLARE)
#undef ANVIL_NVRTC_DECLARE
};

namespace {

namespace fs = std::filesystem;

std::string VersionText(NvrtcVersion v) { return std::to_string(v.major) + "." + std::to_string(v.minor); }

// The files to try, in order, when ANVIL_NVRTC_LIBRARY is not set.
std::vector<std::string> Candidates() {
  const std::vector<std::string> names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  std::vector<std::string> candidates = names;
  // Toolkits installed outside the loader's path (/usr/local/cuda without
  // an ld.so.conf entry, a conda or pip toolkit) are found from the
  // variables CUDA's own tools read and from where nvcc is.
  std::vector<fs::path> roots;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* value = std::getenv(variable); value && *value) roots.emplace_back(value);
  if (const char* path = std::getenv("PATH")) {
    std::string dirs = path;
    for (size_t begin = 0; begin <= dirs.size();) {
      size_t end = std::min(dirs.find(':', begin), dirs.size());
      fs::path nvcc = fs::path(dirs.substr(begin, end - begin)) / "nvcc";
      std::error_code error;
      if (end > begin && fs::is_regular_file(nvcc, error)) {
        roots.push_back(nvcc.parent_path().parent_path());
        // A bin/nvcc that links into a toolkit elsewhere names that toolkit too.
        fs::path real = fs::canonical(nvcc, error);
        if (!error) roots.push_back(real.parent_path().parent_path());
        break;
      }
      begin = end + 1;
    }
  }
  for (const fs::path& root : roots)
    for (const char* lib : {"lib64", "lib"})
      for (const std::string& name : names) {
        std::string file = (root / lib / name).string();
        if (std::find(candidates.begin(), candidates.end(), file) == candidates.end()) candidates.push_back(file);
      }
  return candidates;
}

// The loaded file's path as the dynamic loader resolved a bare soname.
std::string LoadedPath(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) return map->l_name;
  return fallback;
}

}  // namespace

NvrtcCompiler::~NvrtcCompiler() = default;

hlo::StatusOr<const NvrtcCompiler*> NvrtcCompiler::Get() {
  // Loaded once, under call_once, and kept (with its failure, if any) for
  // the process's life.
  static std::once_flag once;
  static hlo::StatusOr<std::unique_ptr<NvrtcCompiler>>* loaded = nullptr;
  std::call_once(once, [] { loaded = new hlo::StatusOr<std::unique_ptr<NvrtcCompiler>>(Load()); });
  if (!loaded->ok()) return loaded->status();
  return loaded->value().get();
}

hlo::StatusOr<std::unique_ptr<NvrtcCompiler>> NvrtcCompiler::Load() {
  const char* override_path = std::getenv("ANVIL_NVRTC_LIBRARY");
  bool pinned = override_path && *override_path;
  std::vector<std::string> candidates = pinned ? std::vector<std::string>{override_path} : Candidates();
  std::string tried;
  for (const std::string& candidate : candidates) {
    // Never dlclosed: NVRTC keeps process-wide state (its builtins
    // library, caches), and a compiler is cheap to keep.
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* error = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(error ? error : candidate + ": dlopen failed");
      continue;
    }
    std::unique_ptr<NvrtcCompiler> compiler(new NvrtcCompiler());
    compiler->path_ = LoadedPath(handle, candidate);
    if (std::string why = compiler->Resolve(handle); !why.empty()) return hlo::NotFound(why);
    return compiler;
  }
  if (pinned)
    return hlo::NotFound("ANVIL_NVRTC_LIBRARY names an NVRTC that cannot be loaded: " + tried);
  return hlo::NotFound("NVRTC not found (" + tried +
                       "): install the CUDA toolkit's NVRTC, or set CUDA_HOME to the toolkit or "
                       "ANVIL_NVRTC_LIBRARY to the library");
}

std::string NvrtcCompiler::Resolve(void* handle) {
  api_ = std::make_unique<NvrtcApi>();
#define ANVIL_NVRTC_RESOLVE(ret, name, params)                                                 \
  api_->name = reinterpret_cast<decltype(api_->name)>(dlsym(handle, #name));                   \
  if (!api_->name) return path_ + " has no " #name ": it is older than NVRTC 11.2, the oldest supported";
  ANVIL_NVRTC_FUNCTIONS(ANVIL_NVRTC_RESOLVE)
#undef ANVIL_NVRTC_RESOLVE
  int count = 0;
  if (api_->nvrtcVersion(&version_.major, &version_.minor) != kNvrtcSuccess ||
      api_->nvrtcGetNumSupportedArchs(&count) != kNvrtcSuccess || count < 0)
    return path_ + " does not say its version or architectures";
  archs_.resize(count);
  if (count > 0 && api_->nvrtcGetSupportedArchs(archs_.data()) != kNvrtcSuccess)
    return path_ + " does not list its architectures";
  std::sort(archs_.begin(), archs_.end());
  return "";
}

hlo::StatusOr<std::vector<char>> NvrtcCompiler::Compile(const std::string& source, const std::string& name_for_messages,
                                                        int sm, const std::vector<std::string>& options) const {
  const std::string& name = name_for_messages;
  std::string arch = "sm_" + std::to_string(sm);
  // Checked here, since NVRTC's own answer is a bare NVRTC_ERROR_INVALID_OPTION.
  if (!std::binary_search(archs_.begin(), archs_.end(), sm)) {
    std::string supported;
    for (int a : archs_) supported += (supported.empty() ? "sm_" : ", sm_") + std::to_string(a);
    return hlo::InvalidArgument(name + ": NVRTC " + VersionText(version_) + " cannot compile for " + arch +
                                "; it supports " + supported);
  }
  NvrtcProgram program = nullptr;
  NvrtcResult result = api_->nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (result != kNvrtcSuccess)
    return hlo::Internal(name + ": nvrtcCreateProgram: " + api_->nvrtcGetErrorString(result));
  // The program is destroyed on every way out.
  struct Destroy {
    const NvrtcApi* api;
    NvrtcProgram* program;
    ~Destroy() { api->nvrtcDestroyProgram(program); }
  } destroy{api_.get(), &program};

  std::vector<std::string> all = {"--gpu-architecture=" + arch, "-default-device", "--std=c++17"};
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const std::string& option : all) argv.push_back(option.c_str());
  result = api_->nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  if (result != kNvrtcSuccess) {
    std::string log;
    size_t bytes = 0;
    if (api_->nvrtcGetProgramLogSize(program, &bytes) == kNvrtcSuccess && bytes > 1) {
      log.resize(bytes);
      if (api_->nvrtcGetProgramLog(program, log.data()) != kNvrtcSuccess) log.clear();
      log.resize(std::min(log.size(), log.find('\0')));  // the size counts the terminator
    }
    std::string message = name + ": NVRTC " + VersionText(version_) + " could not compile it for " + arch + " (" +
                          api_->nvrtcGetErrorString(result) + ")" + (log.empty() ? "" : ":\n" + log);
    if (result == kNvrtcErrorOutOfMemory) return hlo::ResourceExhausted(std::move(message));
    if (result == kNvrtcErrorCompilation || result == kNvrtcErrorInvalidOption)
      return hlo::InvalidArgument(std::move(message));
    return hlo::Internal(std::move(message));
  }
  size_t bytes = 0;
  std::vector<char> cubin;
  if ((result = api_->nvrtcGetCUBINSize(program, &bytes)) == kNvrtcSuccess) {
    cubin.resize(bytes);
    result = api_->nvrtcGetCUBIN(program, cubin.data());
  }
  if (result != kNvrtcSuccess || cubin.empty())
    return hlo::Internal(name + ": nvrtcGetCUBIN: " + api_->nvrtcGetErrorString(result));
  return cubin;
}

}  // namespace anvil::cuda
