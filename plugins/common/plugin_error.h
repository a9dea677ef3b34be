// The error type of the plugins written in C++, and the three entries of the
// API table that read it. Making an error never throws: when even its
// message cannot be allocated, a static out-of-memory error stands in, which
// error_destroy knows not to free.
#pragma once

#include <cstdint>
#include <new>
#include <string>
#include <utility>

#include "anvil/anvil_plugin.h"
#include "hlo/status.h"

struct anvil_plugin_error {
  int32_t code;
  std::string message;
  bool is_static = false;
};

namespace anvil::plugin {

// anvil_status_code values the plugins return.
inline constexpr int32_t kInvalidArgument = 3, kResourceExhausted = 8, kUnimplemented = 12, kInternal = 13;

inline anvil_plugin_error* OutOfMemoryError() noexcept {
  // Constructed on first use; "out of host memory" fits no small-string
  // buffer, so it is built once here, while memory can still be had.
  static anvil_plugin_error error{kResourceExhausted, "out of host memory", true};
  return &error;
}

inline anvil_plugin_error* Error(int32_t code, std::string message) noexcept {
  auto* e = new (std::nothrow) anvil_plugin_error{code, {}, false};
  if (!e) return OutOfMemoryError();
  try {
    e->message = std::move(message);
  } catch (...) {
    delete e;
    return OutOfMemoryError();
  }
  return e;
}

inline anvil_plugin_error* FromStatus(const hlo::Status& s) {
  return s.ok() ? nullptr : Error(static_cast<int32_t>(s.code()), s.message());
}

inline void ErrorDestroy(anvil_plugin_error* e) noexcept {
  if (e && !e->is_static) delete e;
}
inline int32_t ErrorCode(const anvil_plugin_error* e) noexcept { return e->code; }
inline const char* ErrorMessage(const anvil_plugin_error* e) noexcept { return e->message.c_str(); }

}  // namespace anvil::plugin
