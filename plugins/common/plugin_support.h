// What every device plugin's entry file needs the same way: the error type
// and its entries (plugin_error.h), the exception guard for every entry and
// for asynchronous work (entry_guard.h), output allocation and donated
// inputs (execution_memory.h), running work on core's host executor, and the
// API table's head. Header-only; included by exactly one file per plugin,
// which defines `struct anvil_plugin_error` through it.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <utility>

#include "anvil/anvil_plugin.h"
#include "hlo/status.h"
#include "plugins/common/entry_guard.h"
#include "plugins/common/execution_memory.h"
#include "plugins/common/plugin_error.h"

namespace anvil::plugin {

// Core's host services as this plugin's header declares them. An older core
// passes a shorter struct: what it lacks (the trace sink) stays unset.
inline anvil_plugin_host_executor CopyHostExecutor(const anvil_plugin_host_executor& from) {
  anvil_plugin_host_executor host{};
  std::memcpy(&host, &from, std::min(from.struct_size, sizeof(host)));
  host.struct_size = sizeof(host);
  return host;
}

// Keeps the library holding `address` (pass a function of the plugin's own)
// mapped until the process exits, however often clients unload it: for a
// plugin whose process-wide state (a driver, a compiler) is made once and
// never torn down, so that the state stays valid, and reachable for
// LeakSanitizer, after the last client is gone.
inline void StayLoaded(const void* address) {
  Dl_info self;
  if (dladdr(address, &self) && self.dli_fname) dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

// CLOCK_MONOTONIC in nanoseconds, the trace's clock (anvil_plugin.h).
inline uint64_t MonotonicNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

// Reports the enclosing scope to the client's trace as one span, when it
// traces (`host` from CopyHostExecutor); nothing else otherwise.
class HostSpan {
 public:
  HostSpan(const anvil_plugin_host_executor& host, const char* name)
      : host_(host), name_(name), begin_(host.trace_span ? MonotonicNs() : 0) {}
  ~HostSpan() {
    if (host_.trace_span) host_.trace_span(host_.tracer, name_, nullptr, begin_, MonotonicNs());
  }
  HostSpan(const HostSpan&) = delete;
  HostSpan& operator=(const HostSpan&) = delete;

 private:
  const anvil_plugin_host_executor& host_;
  const char* name_;
  uint64_t begin_;
};

// Runs `work` (any callable, move-only ones too) soon on one of core's host
// threads. `work` must not throw: wrap what can in Complete().
template <typename Work>
void Async(const anvil_plugin_host_executor& executor, Work work) {
  auto* boxed = new Work(std::move(work));
  executor.enqueue(
      executor.executor,
      [](void* arg) {
        std::unique_ptr<Work> fn(static_cast<Work*>(arg));
        (*fn)();
      },
      boxed);
}

// Runs `work` (returning NULL or an error) on a host thread and reports its
// outcome to `done` exactly once, exceptions included.
template <typename Work>
void AsyncCompletion(const anvil_plugin_host_executor& executor, const char* where, anvil_plugin_done done,
                     void* user_data, Work work) {
  Async(executor, [where, done, user_data, work = std::move(work)]() mutable {
    Complete(where, work, done, user_data);
  });
}

// Hands `bytes` to core as an executable's serialised form (the
// executable_serialize entry); core frees it with FreeSerialized, which a
// plugin sets as its serialized_free entry.
inline void GiveSerialized(const std::string& bytes, void** out, size_t* size) {
  char* copy = new char[bytes.size()];
  if (!bytes.empty()) std::memcpy(copy, bytes.data(), bytes.size());
  *out = copy;
  *size = bytes.size();
}
inline void FreeSerialized(void* bytes) { delete[] static_cast<char*>(bytes); }

// An API table with the ABI version and the error entries filled in.
inline anvil_plugin_api BaseApi(const char* name, const char* version) {
  anvil_plugin_api api{};
  api.struct_size = ANVIL_PLUGIN_API_STRUCT_SIZE;
  api.abi_major = ANVIL_PLUGIN_ABI_MAJOR;
  api.abi_minor = ANVIL_PLUGIN_ABI_MINOR;
  api.name = name;
  api.version = version;
  api.error_destroy = &ErrorDestroy;
  api.error_code = &ErrorCode;
  api.error_message = &ErrorMessage;
  return api;
}

}  // namespace anvil::plugin
