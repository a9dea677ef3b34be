// What every device plugin's entry file needs the same way: its error type
// and the three ABI entries that read it, errors from hlo statuses, and
// running work on core's host executor. Header-only; included by exactly
// one file per plugin, which defines `struct anvil_plugin_error` through it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "anvil/anvil_plugin.h"
#include "hlo/status.h"

struct anvil_plugin_error {
  int32_t code;
  std::string message;
};

namespace anvil::plugin {

// anvil_status_code values the plugins return.
inline constexpr int32_t kInvalidArgument = 3, kResourceExhausted = 8, kInternal = 13;

inline anvil_plugin_error* Error(int32_t code, std::string message) {
  return new anvil_plugin_error{code, std::move(message)};
}
inline anvil_plugin_error* FromStatus(const hlo::Status& s) {
  return s.ok() ? nullptr : Error(static_cast<int32_t>(s.code()), s.message());
}

inline void ErrorDestroy(anvil_plugin_error* e) { delete e; }
inline int32_t ErrorCode(const anvil_plugin_error* e) { return e->code; }
inline const char* ErrorMessage(const anvil_plugin_error* e) { return e->message.c_str(); }

// Runs `work` soon on one of core's host threads.
inline void Async(const anvil_plugin_host_executor& executor, std::function<void()> work) {
  auto* boxed = new std::function<void()>(std::move(work));
  executor.enqueue(
      executor.executor,
      [](void* arg) {
        std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(arg));
        (*fn)();
      },
      boxed);
}

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
