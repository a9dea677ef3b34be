// The client part of anvil.h: status, version, client, plugins, devices.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>

#include <boost/dll/runtime_symbol_info.hpp>
#include <oneapi/tbb/info.h>

#include "core/abi_util.h"
#include "core/runtime.h"

using anvil::core::Guard;
using anvil::core::IndexOutOfRange;
using anvil::core::Invalid;
using anvil::core::MakeError;
using anvil::core::Plugin;
using anvil::core::StatusCode;
using anvil::core::ToAbi;

namespace {

constexpr char kPluginPrefix[] = "libanvil_plugin_";
constexpr char kPluginSuffix[] = ".so";
// No machine has more; a count past it is a plugin's bug, not devices.
constexpr size_t kMaxDevicesPerPlugin = 4096;
// Likewise for compile-only targets (instruction sets, not machines).
constexpr size_t kMaxTargetsPerPlugin = 4096;

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> dirs;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) dirs.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return dirs;
}

// The search path: explicit, else ANVIL_PLUGIN_PATH, then the directory
// `anvil_plugins` beside libanvil.so.
std::vector<std::string> SearchPath(const char* explicit_path) {
  if (explicit_path) return SplitPath(explicit_path);
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("ANVIL_PLUGIN_PATH")) dirs = SplitPath(env);
  boost::dll::fs::error_code error;
  auto self = boost::dll::this_line_location(error);
  // Normalised, so an installed tool reached through bin/../lib reports
  // P/lib/anvil_plugins, not P/bin/../lib/anvil_plugins.
  if (!error) dirs.push_back((self.parent_path() / "anvil_plugins").lexically_normal().string());
  return dirs;
}

void EnqueueOnArena(void* executor, void (*fn)(void*), void* arg) {
  static_cast<anvil_client*>(executor)->Run([fn, arg] { fn(arg); });
}

// The plugin ABI's trace sink: a plugin's span, category "kernel".
void TraceKernelSpan(void* tracer, const char* name, const char* detail, uint64_t begin_ns, uint64_t end_ns) {
  std::string args;
  if (detail && *detail) {
    args = "\"detail\":\"";
    anvil::core::AppendJsonEscaped(args, detail);
    args += "\"";
  }
  static_cast<anvil::core::Tracer*>(tracer)->Complete(name ? name : "kernel", "kernel", begin_ns, end_ns, args);
}

// The option when the caller's struct has it, else the environment
// variable; empty means off.
// (A caller built against an older anvil.h passes a shorter struct.)
std::string OptionOrEnvironment(const anvil_client_options* options, const char* anvil_client_options::*field,
                                size_t field_end, const char* variable) {
  if (options && options->struct_size >= field_end && options->*field) return options->*field;
  const char* env = std::getenv(variable);
  return env ? env : "";
}

// Loads the plugin at `path` and adds its devices. Failures are returned,
// not recorded.
anvil::hlo::Status AddPlugin(anvil_client* client, const std::string& path) {
  ANVIL_ASSIGN_OR_RETURN(std::unique_ptr<Plugin> plugin, Plugin::Load(path, client->executor));
  ANVIL_ASSIGN_OR_RETURN(size_t count, plugin->DeviceCount());
  if (count > kMaxDevicesPerPlugin) {
    return MakeError(StatusCode::kFailedPrecondition, path + ": the plugin reports " + std::to_string(count) +
                                                          " devices; more than " +
                                                          std::to_string(kMaxDevicesPerPlugin) + " is taken for a fault");
  }
  std::vector<std::unique_ptr<anvil_device>> devices;
  for (size_t i = 0; i < count; ++i) {
    ANVIL_ASSIGN_OR_RETURN(anvil_plugin_device_properties p, plugin->DeviceProperties(i));
    devices.push_back(std::make_unique<anvil_device>(
        anvil_device{client, plugin.get(), i, plugin->name(), p.kind, p.name, p.memory_bytes}));
  }
  // Compile-only targets, read once: their names then live as long as the
  // client. A plugin that lists them but fails to is refused, as one whose
  // devices cannot be listed is.
  auto target_count = plugin->TargetCount();
  if (!target_count.ok()) {
    return MakeError(target_count.status().code(),
                     path + ": cannot list compile-only targets: " + target_count.status().message());
  }
  if (*target_count > kMaxTargetsPerPlugin) {
    return MakeError(StatusCode::kFailedPrecondition, path + ": the plugin reports " + std::to_string(*target_count) +
                                                          " compile-only targets; more than " +
                                                          std::to_string(kMaxTargetsPerPlugin) + " is taken for a fault");
  }
  std::vector<std::unique_ptr<anvil::core::CompileTarget>> targets;
  for (size_t i = 0; i < *target_count; ++i) {
    auto name = plugin->TargetName(i);
    if (!name.ok()) {
      return MakeError(name.status().code(), path + ": cannot name compile-only target " + std::to_string(i) + ": " +
                                                 name.status().message());
    }
    targets.push_back(std::make_unique<anvil::core::CompileTarget>(
        anvil::core::CompileTarget{plugin.get(), i, plugin->name(), std::move(name).value()}));
  }
  std::lock_guard<std::mutex> lock(client->mu);
  for (const auto& existing : client->plugins) {
    if (existing->name() == plugin->name()) {
      return MakeError(StatusCode::kAlreadyExists, path + ": a plugin named '" + plugin->name() +
                                                       "' is already loaded from " + existing->path());
    }
  }
  client->plugins.push_back(std::move(plugin));
  for (auto& d : devices) client->devices.push_back(std::move(d));
  for (auto& t : targets) client->targets.push_back(std::move(t));
  return anvil::hlo::OkStatus();
}

}  // namespace

namespace {

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
// libtbb is not built with ThreadSanitizer, so the hand-off of a task from
// the enqueuing thread to a worker is invisible to it. Model it for what it
// is, a release before enqueue and an acquire when the task starts.
char tsan_arena_handoff;
void ArenaHandoffRelease() { __tsan_release(&tsan_arena_handoff); }
void ArenaHandoffAcquire() { __tsan_acquire(&tsan_arena_handoff); }
// oneTBB builds each task object in a block of its small-object pool, which
// hands a block a worker has just freed to the next enqueue on another
// thread, behind synchronisation in libtbb. The enqueuing thread's writes
// into the block (the task's vtable pointer, the moved callable) are not
// recorded, so that reuse does not read as a race; what the callable holds
// was written before and is checked as usual.
struct IgnoredAccesses {
  IgnoredAccesses() { __tsan_ignore_thread_begin(); }
  ~IgnoredAccesses() { __tsan_ignore_thread_end(); }
};
#else
void ArenaHandoffRelease() {}
void ArenaHandoffAcquire() {}
struct IgnoredAccesses {};
#endif

// Releases when destroyed; the first member of ArenaTask, so it goes last,
// after the callable's own destruction.
struct ReleaseWhenDestroyed {
  ReleaseWhenDestroyed() = default;
  ReleaseWhenDestroyed(const ReleaseWhenDestroyed&) = default;
  ~ReleaseWhenDestroyed() { ArenaHandoffRelease(); }
};

// oneTBB moves the task into its own storage inside enqueue(); releasing
// after every move covers that last write too.
template <typename F>
struct ArenaTask {
  ReleaseWhenDestroyed release_last;
  F work;
  explicit ArenaTask(F w) : work(std::move(w)) { ArenaHandoffRelease(); }
  ArenaTask(ArenaTask&& other) noexcept : work(std::move(other.work)) { ArenaHandoffRelease(); }
  ArenaTask(const ArenaTask& other) : work(other.work) { ArenaHandoffRelease(); }
  ArenaTask& operator=(const ArenaTask&) = delete;
  void operator()() const {
    ArenaHandoffAcquire();  // before touching `work`
    work();
  }
};

}  // namespace

void anvil_client::Run(std::function<void()> fn) {
  auto task = anvil::core::Track(std::make_shared<anvil::core::WorkToken>(work), std::move(fn));
  ArenaTask<decltype(task)> arena_task(std::move(task));
  [[maybe_unused]] IgnoredAccesses while_enqueueing;  // see IgnoredAccesses
  arena->enqueue(std::move(arena_task));
}

extern "C" {

anvil_status_code anvil_status_get_code(const anvil_status* status) { return status ? status->code : ANVIL_OK; }

const char* anvil_status_get_message(const anvil_status* status) { return status ? status->message.c_str() : ""; }

void anvil_status_free(anvil_status* status) { delete status; }

anvil_version anvil_get_abi_version(void) { return anvil_version{ANVIL_ABI_MAJOR, ANVIL_ABI_MINOR}; }

anvil_status* anvil_client_create(const anvil_client_options* options, anvil_client** out_client) {
  return Guard("anvil_client_create", [&]() -> anvil_status* {
    ANVIL_CHECK_NOT_NULL("anvil_client_create", out_client);
    *out_client = nullptr;
    // Callers built against minor 3 or older end the struct at num_threads.
    if (options) ANVIL_CHECK_ARGS("anvil_client_create", options, ANVIL_STRUCT_SIZE(anvil_client_options, num_threads));
    auto client = std::make_unique<anvil_client>();
    // More threads than cores buys nothing (and oneTBB would warn).
    // The CPUs this process may run on (its affinity mask: taskset, a
    // container's cpuset), not the machine's.
    const int cores = std::max(1, oneapi::tbb::info::default_concurrency());
    int threads = cores;
    if (options && options->num_threads > 0) threads = std::min<int>(options->num_threads, cores);
    // Every task is enqueued and no application thread ever joins the arena
    // (nothing calls execute()), so all its slots go to oneTBB's workers, and
    // the worker pool is allowed one worker per slot: by default oneTBB keeps
    // one core for the application's own thread and starts cores - 1
    // workers, which left one core of two idle.
    client->scheduler = oneapi::tbb::task_scheduler_handle(oneapi::tbb::attach{});
    client->workers = std::make_unique<oneapi::tbb::global_control>(
        oneapi::tbb::global_control::max_allowed_parallelism, static_cast<size_t>(cores) + 1);
    client->arena = std::make_unique<oneapi::tbb::task_arena>(threads, 0);
    client->arena->initialize();
    const std::string trace_path =
        OptionOrEnvironment(options, &anvil_client_options::trace_path,
                            ANVIL_STRUCT_SIZE(anvil_client_options, trace_path), "ANVIL_TRACE");
    if (!trace_path.empty()) client->tracer = anvil::core::Tracer::ForPath(trace_path);
    const std::string cache_dir =
        OptionOrEnvironment(options, &anvil_client_options::cache_dir,
                            ANVIL_STRUCT_SIZE(anvil_client_options, cache_dir), "ANVIL_CACHE_DIR");
    if (!cache_dir.empty()) {
      uint64_t max_bytes = anvil::core::CompileCache::kDefaultMaxBytes;
      if (const char* limit = std::getenv("ANVIL_CACHE_MAX_BYTES"); limit && *limit) {
        max_bytes = std::strtoull(limit, nullptr, 10);
      }
      client->cache = anvil::core::CompileCache::Open(cache_dir, max_bytes);
    }
    client->executor.struct_size = ANVIL_PLUGIN_HOST_EXECUTOR_STRUCT_SIZE;
    client->executor.executor = client.get();
    client->executor.enqueue = &EnqueueOnArena;
    if (client->tracer) {
      client->executor.tracer = client->tracer.get();
      client->executor.trace_span = &TraceKernelSpan;
    }
    client->search_path = SearchPath(options ? options->plugin_path : nullptr);
    bool load_all = !options || options->load_all_plugins;
    if (load_all) {
      for (const std::string& dir : client->search_path) {
        std::error_code error;
        std::vector<std::string> found;
        for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
          std::string file = entry.path().filename().string();
          if (file.rfind(kPluginPrefix, 0) == 0 && file.size() > sizeof(kPluginSuffix) &&
              file.compare(file.size() - 3, 3, kPluginSuffix) == 0) {
            found.push_back(entry.path().string());
          }
        }
        std::sort(found.begin(), found.end());
        for (const std::string& path : found) {
          anvil::hlo::Status loaded = AddPlugin(client.get(), path);
          if (!loaded.ok()) client->failures.emplace_back(path, loaded.message());
        }
      }
    }
    *out_client = client.release();
    return nullptr;
  });
}

anvil_status* anvil_client_destroy(anvil_client* client) {
  return Guard("anvil_client_destroy", [&]() -> anvil_status* {
    if (!client) return nullptr;
    int64_t buffers = client->live_buffers, executables = client->live_executables;
    if (buffers > 0 || executables > 0) {
      // Their memory and code belong to plugins this would unload.
      return ToAbi(MakeError(StatusCode::kFailedPrecondition,
                             "anvil_client_destroy: destroy the client's " + std::to_string(buffers) +
                                 " buffer(s) and " + std::to_string(executables) + " executable(s) first"));
    }
    client->work.WaitIdle();
    client->arena->terminate();
    client->devices.clear();
    client->targets.clear();
    client->plugins.clear();
    client->arena.reset();
    // Waits for oneTBB's workers to end when this was its last user; with
    // another client (or any oneTBB user) alive it returns false at once and
    // the workers stay for them. Before the worker limit is released: with
    // the limit back at oneTBB's default while a worker it allowed still
    // lived, oneTBB 2021.8's finalize waited for ever on a process pinned to
    // one CPU (`taskset -c 0 anvil run ...` hung at exit).
    (void)oneapi::tbb::finalize(client->scheduler, std::nothrow);
    client->workers.reset();
    delete client;
    return nullptr;
  });
}

anvil_status* anvil_client_load_plugin(anvil_client* client, const anvil_plugin_load_args* args) {
  return Guard("anvil_client_load_plugin", [&]() -> anvil_status* {
    ANVIL_CHECK_NOT_NULL("anvil_client_load_plugin", client);
    ANVIL_CHECK_ARGS("anvil_client_load_plugin", args, ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE);
    if ((args->name == nullptr) == (args->path == nullptr)) {
      return Invalid("anvil_client_load_plugin: set exactly one of name and path");
    }
    std::string path;
    if (args->path) {
      path = args->path;
      if (!std::filesystem::exists(path)) {
        return ToAbi(MakeError(StatusCode::kNotFound, path + ": no such plugin file"));
      }
    } else {
      // A name is a file-name part, never a path: `../x` must not escape the search path.
      const std::string name = args->name;
      const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
      });
      if (!plain) {
        return Invalid("anvil_client_load_plugin: plugin name '" + name +
                       "' may hold only letters, digits, '_' and '-'; pass a path to load a file by path");
      }
      std::string file = std::string(kPluginPrefix) + args->name + kPluginSuffix;
      std::string searched;
      for (const std::string& dir : client->search_path) {
        std::string candidate = dir + "/" + file;
        if (std::filesystem::exists(candidate)) {
          path = candidate;
          break;
        }
        searched += (searched.empty() ? "" : ":") + dir;
      }
      if (path.empty()) {
        return ToAbi(MakeError(StatusCode::kNotFound, "no plugin '" + std::string(args->name) + "': " + file +
                                                          " is not in the search path (" + searched +
                                                          "); set ANVIL_PLUGIN_PATH or pass a path"));
      }
    }
    return ToAbi(AddPlugin(client, path));
  });
}

anvil_status* anvil_client_plugin_count(anvil_client* client, size_t* out_count) {
  ANVIL_CHECK_NOT_NULL("anvil_client_plugin_count", client);
  ANVIL_CHECK_NOT_NULL("anvil_client_plugin_count", out_count);
  std::lock_guard<std::mutex> lock(client->mu);
  *out_count = client->plugins.size();
  return nullptr;
}

anvil_status* anvil_client_plugin_info(anvil_client* client, size_t index, const char** out_name,
                                       const char** out_version, const char** out_path) {
  ANVIL_CHECK_NOT_NULL("anvil_client_plugin_info", client);
  ANVIL_CHECK_NOT_NULL("anvil_client_plugin_info", out_name);
  ANVIL_CHECK_NOT_NULL("anvil_client_plugin_info", out_version);
  ANVIL_CHECK_NOT_NULL("anvil_client_plugin_info", out_path);
  std::lock_guard<std::mutex> lock(client->mu);
  if (index >= client->plugins.size()) {
    return IndexOutOfRange("anvil_client_plugin_info", "plugin", index, client->plugins.size());
  }
  const Plugin& p = *client->plugins[index];
  *out_name = p.name().c_str();
  *out_version = p.version().c_str();
  *out_path = p.path().c_str();
  return nullptr;
}

anvil_status* anvil_client_plugin_failure_count(anvil_client* client, size_t* out_count) {
  ANVIL_CHECK_NOT_NULL("anvil_client_plugin_failure_count", client);
  ANVIL_CHECK_NOT_NULL("anvil_client_plugin_failure_count", out_count);
  std::lock_guard<std::mutex> lock(client->mu);
  *out_count = client->failures.size();
  return nullptr;
}

anvil_status* anvil_client_plugin_failure(anvil_client* client, size_t index, const char** out_path,
                                          const char** out_reason) {
  ANVIL_CHECK_NOT_NULL("anvil_client_plugin_failure", client);
  ANVIL_CHECK_NOT_NULL("anvil_client_plugin_failure", out_path);
  ANVIL_CHECK_NOT_NULL("anvil_client_plugin_failure", out_reason);
  std::lock_guard<std::mutex> lock(client->mu);
  if (index >= client->failures.size()) {
    return IndexOutOfRange("anvil_client_plugin_failure", "failure", index, client->failures.size());
  }
  *out_path = client->failures[index].first.c_str();
  *out_reason = client->failures[index].second.c_str();
  return nullptr;
}

anvil_status* anvil_client_device_count(anvil_client* client, size_t* out_count) {
  ANVIL_CHECK_NOT_NULL("anvil_client_device_count", client);
  ANVIL_CHECK_NOT_NULL("anvil_client_device_count", out_count);
  std::lock_guard<std::mutex> lock(client->mu);
  *out_count = client->devices.size();
  return nullptr;
}

anvil_status* anvil_client_device(anvil_client* client, size_t index, anvil_device** out_device) {
  ANVIL_CHECK_NOT_NULL("anvil_client_device", client);
  ANVIL_CHECK_NOT_NULL("anvil_client_device", out_device);
  std::lock_guard<std::mutex> lock(client->mu);
  if (index >= client->devices.size()) {
    return IndexOutOfRange("anvil_client_device", "device", index, client->devices.size());
  }
  *out_device = client->devices[index].get();
  return nullptr;
}

anvil_status* anvil_client_target_count(anvil_client* client, size_t* out_count) {
  ANVIL_CHECK_NOT_NULL("anvil_client_target_count", client);
  ANVIL_CHECK_NOT_NULL("anvil_client_target_count", out_count);
  std::lock_guard<std::mutex> lock(client->mu);
  *out_count = client->targets.size();
  return nullptr;
}

anvil_status* anvil_client_target(anvil_client* client, size_t index, const char** out_plugin,
                                  const char** out_name) {
  ANVIL_CHECK_NOT_NULL("anvil_client_target", client);
  ANVIL_CHECK_NOT_NULL("anvil_client_target", out_plugin);
  ANVIL_CHECK_NOT_NULL("anvil_client_target", out_name);
  std::lock_guard<std::mutex> lock(client->mu);
  if (index >= client->targets.size()) {
    return IndexOutOfRange("anvil_client_target", "target", index, client->targets.size());
  }
  *out_plugin = client->targets[index]->plugin_name.c_str();
  *out_name = client->targets[index]->name.c_str();
  return nullptr;
}

anvil_status* anvil_device_get_properties(anvil_device* device, anvil_device_properties* out) {
  ANVIL_CHECK_NOT_NULL("anvil_device_get_properties", device);
  ANVIL_CHECK_NOT_NULL("anvil_device_get_properties", out);
  if (out->struct_size < offsetof(anvil_device_properties, plugin) + sizeof(out->plugin)) {
    return Invalid("anvil_device_get_properties: struct_size " + std::to_string(out->struct_size) + " holds no field");
  }
  // Fill what the caller's struct has room for (it may predate later fields).
  anvil_device_properties full{};
  full.struct_size = out->struct_size < sizeof(full) ? out->struct_size : sizeof(full);
  full.plugin = device->plugin_name.c_str();
  full.kind = device->kind.c_str();
  full.name = device->name.c_str();
  full.memory_bytes = device->memory_bytes;
  full.index_in_plugin = static_cast<int32_t>(device->index_in_plugin);
  std::memcpy(out, &full, full.struct_size);
  return nullptr;
}

}  // extern "C"
