// Core's objects behind the ABI's opaque handles: client, device, buffer,
// executable. Internal to core/.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "anvil/anvil.h"
#include "core/compile_cache.h"
#include "core/event.h"
#include "core/plugin.h"
#include "core/trace.h"
#include "hlo/shape.h"

namespace anvil::core {

// Counts asynchronous work in flight, so the client can wait for it.
class WorkTracker {
 public:
  void Start() {
    std::lock_guard<std::mutex> lock(mu_);
    ++pending_;
  }
  void Finish() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--pending_ == 0) cv_.notify_all();
  }
  void WaitIdle() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t pending_ = 0;
};

// One unit of pending work: started when made, finished when the last
// holder lets go.
class WorkToken {
 public:
  explicit WorkToken(WorkTracker& tracker) : tracker_(tracker) { tracker_.Start(); }
  ~WorkToken() { tracker_.Finish(); }
  WorkToken(const WorkToken&) = delete;
  WorkToken& operator=(const WorkToken&) = delete;

 private:
  WorkTracker& tracker_;
};

// A callable that holds a work token. Members are destroyed in reverse
// order, so everything `fn` captured (device memory, whose release calls the
// plugin) is gone before the token finishes, and the client, which waits for
// its tokens before unloading plugins, never unloads one still in use.
template <typename F>
struct Tracked {
  std::shared_ptr<WorkToken> token;
  F fn;
  template <typename... Args>
  auto operator()(Args&&... args) const {
    return fn(std::forward<Args>(args)...);
  }
  template <typename... Args>
  auto operator()(Args&&... args) {  // for a mutable `fn`
    return fn(std::forward<Args>(args)...);
  }
};
template <typename F>
Tracked<F> Track(std::shared_ptr<WorkToken> token, F fn) {
  return Tracked<F>{std::move(token), std::move(fn)};
}

// Device memory; freed when the last holder (a buffer, an execution or a
// transfer using it) lets go.
struct DeviceMemory {
  Plugin* plugin;
  anvil_plugin_memory* memory;
  // Set for the caller's host memory used in place (zero copy): never
  // donated, and `on_release` tells the caller when it is theirs again.
  bool borrowed = false;
  std::function<void()> on_release;
  DeviceMemory(Plugin* p, anvil_plugin_memory* m) : plugin(p), memory(m) {}
  ~DeviceMemory() {
    if (memory) plugin->Free(memory);
    if (on_release) on_release();
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
};

// A compile-only target of a loaded plugin (anvil_client_target).
struct CompileTarget {
  Plugin* plugin;
  size_t index_in_plugin;
  std::string plugin_name, name;
};

}  // namespace anvil::core

struct anvil_device {
  anvil_client* client;
  anvil::core::Plugin* plugin;
  size_t index_in_plugin;
  std::string plugin_name, kind, name;
  uint64_t memory_bytes;
};

struct anvil_client {
  // First, so it is destroyed last, after the plugins' last spans; null when
  // the client does not trace.
  std::shared_ptr<anvil::core::Tracer> tracer;
  // Declared first so they outlive the arena. `scheduler` lets the last
  // client's destroy wait for oneTBB's worker threads to end, so none is
  // left running in a process that is done with Anvil (LeakSanitizer's
  // exit-time check, for one, crashes on threads that are still alive).
  oneapi::tbb::task_scheduler_handle scheduler;
  std::unique_ptr<oneapi::tbb::global_control> workers;
  std::unique_ptr<oneapi::tbb::task_arena> arena;
  anvil_plugin_host_executor executor{};
  anvil::core::WorkTracker work;
  std::vector<std::string> search_path;
  // The persistent compile cache; null when off.
  std::unique_ptr<anvil::core::CompileCache> cache;

  std::mutex mu;  // guards the lists below; entries are never removed
  std::vector<std::unique_ptr<anvil::core::Plugin>> plugins;
  std::vector<std::unique_ptr<anvil_device>> devices;
  // In plugin order, then the plugin's; held by pointer, so the strings
  // handed out stay where they are as the list grows.
  std::vector<std::unique_ptr<anvil::core::CompileTarget>> targets;
  std::vector<std::pair<std::string, std::string>> failures;  // path, reason

  // Handles the caller still holds; the client refuses to go before them.
  std::atomic<int64_t> live_buffers{0};
  std::atomic<int64_t> live_executables{0};

  // Runs `fn` on the client's arena, counted as pending work.
  void Run(std::function<void()> fn);
};

namespace anvil::core {

// When `client` traces: a span from now until `event` is set, on a track of
// its own (transfers and executions overlap). `make_args()` gives its JSON
// members; it is called only when tracing.
template <typename MakeArgs>
void TraceUntil(const anvil_client& client, const std::shared_ptr<Event>& event, const char* name,
                const char* category, MakeArgs make_args) {
  if (!client.tracer) return;
  const uint64_t issued = Tracer::NowNs(), id = client.tracer->NextId();
  event->OnReady([tracer = client.tracer, issued, id, name, category, args = make_args()](const hlo::Status& s) {
    tracer->Async(s.ok() ? name : std::string(name) + " (failed)", category, id, issued, Tracer::NowNs(), args);
  });
}

struct BufferState {
  anvil_device* device;
  hlo::Shape shape;
  size_t bytes;
  std::shared_ptr<Event> defined;

  std::mutex mu;
  std::shared_ptr<DeviceMemory> memory;  // set once defined (or at allocation)
  bool donated = false;
  // One event per use issued and not yet known to be over (an execution
  // reading the buffer, a copy out of it): each completes once that use
  // holds the memory no more. An execution that donates the buffer waits for
  // all of them, so the memory moves only after every earlier reader is done
  // (PJRT's usage events). Completed ones are dropped as new ones come.
  std::vector<std::shared_ptr<Event>> pending_uses;

  std::shared_ptr<DeviceMemory> Memory() {
    std::lock_guard<std::mutex> lock(mu);
    return memory;
  }
  // Records a new use; the caller holds `mu` and sets the event when done.
  std::shared_ptr<Event> AddUseLocked() {
    std::erase_if(pending_uses, [](const std::shared_ptr<Event>& e) { return e->IsReady(); });
    pending_uses.push_back(Event::Create());
    return pending_uses.back();
  }
};

// Completes a use event when it goes out of scope (or earlier, by Release),
// so that no path, failing or not, leaves a donation waiting forever.
class UseRelease {
 public:
  UseRelease() = default;
  explicit UseRelease(std::shared_ptr<Event> e) : event_(std::move(e)) {}
  UseRelease(UseRelease&&) = default;
  UseRelease& operator=(UseRelease&&) = default;
  ~UseRelease() { Release(); }
  void Release() {
    if (event_) std::exchange(event_, nullptr)->Set(hlo::OkStatus());
  }

 private:
  std::shared_ptr<Event> event_;
};

struct ExecutableState {
  anvil_client* client;
  anvil_device* device;
  anvil_plugin_executable* executable = nullptr;
  std::vector<hlo::Shape> parameters, results;
  std::vector<uint8_t> donors;  // per parameter: the program lets callers donate it
  std::string name;  // the module's, for traces
  ~ExecutableState() {
    if (executable) device->plugin->DestroyExecutable(executable);
  }

  // The canonical text the plugin compiled. A compile sets it; an executable
  // loaded from the compile cache keeps its whole entry instead (the text
  // is most of it) and copies the text out on the first call that asks
  // for it (anvil_executable_canonical_text), then lets the entry go. Many
  // callers never ask: the text is about as large as the program, and a
  // warm load is otherwise a few milliseconds. (The PJRT layer asks at
  // every compile, for the module's name.)
  void SetCanonicalText(std::string text) { canonical_text_ = std::move(text); }
  void SetCanonicalTextIn(std::shared_ptr<const FileBytes> entry, std::string_view text) {
    canonical_entry_ = std::move(entry);
    canonical_in_entry_ = text;
  }
  const std::string& CanonicalText() const {
    std::lock_guard<std::mutex> lock(canonical_mu_);
    if (canonical_entry_) {
      canonical_text_.assign(canonical_in_entry_);
      canonical_entry_.reset();
    }
    return canonical_text_;
  }

 private:
  // Filled in by the first CanonicalText() of a loaded executable.
  mutable std::mutex canonical_mu_;
  mutable std::string canonical_text_;
  mutable std::shared_ptr<const FileBytes> canonical_entry_;  // until the text is asked for
  std::string_view canonical_in_entry_;
};

}  // namespace anvil::core

// Handles count themselves in their client while they live.
struct anvil_buffer {
  explicit anvil_buffer(std::shared_ptr<anvil::core::BufferState> s) : state(std::move(s)) {
    ++state->device->client->live_buffers;
  }
  ~anvil_buffer() { --state->device->client->live_buffers; }
  anvil_buffer(const anvil_buffer&) = delete;
  anvil_buffer& operator=(const anvil_buffer&) = delete;
  std::shared_ptr<anvil::core::BufferState> state;
};

struct anvil_executable {
  explicit anvil_executable(std::shared_ptr<anvil::core::ExecutableState> s) : state(std::move(s)) {
    ++state->client->live_executables;
  }
  ~anvil_executable() { --state->client->live_executables; }
  anvil_executable(const anvil_executable&) = delete;
  anvil_executable& operator=(const anvil_executable&) = delete;
  std::shared_ptr<anvil::core::ExecutableState> state;
};
