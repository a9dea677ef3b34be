// Helpers for the extern "C" functions: argument checks that answer
// INVALID_ARGUMENT instead of crashing, and the guard that keeps exceptions
// from crossing the ABI.
#pragma once

#include <exception>
#include <string>

#include "core/status.h"

namespace anvil::core {

inline anvil_status* Invalid(std::string message) {
  return ToAbi(MakeError(StatusCode::kInvalidArgument, std::move(message)));
}

// OUT_OF_RANGE for an index past a list: "FUNCTION: NOUN index I out of
// range (N NOUNs)".
inline anvil_status* IndexOutOfRange(const std::string& function, const std::string& noun, size_t index,
                                     size_t count) {
  return ToAbi(MakeError(StatusCode::kOutOfRange, function + ": " + noun + " index " + std::to_string(index) +
                                                      " out of range (" + std::to_string(count) + " " + noun + "s)"));
}

// Runs `body` (returning anvil_status*), turning any exception into INTERNAL.
template <typename Body>
anvil_status* Guard(const char* function, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return ToAbi(MakeError(StatusCode::kResourceExhausted, std::string(function) + ": out of host memory"));
  } catch (const std::exception& e) {
    return ToAbi(MakeError(StatusCode::kInternal, std::string(function) + ": " + e.what()));
  } catch (...) {
    return ToAbi(MakeError(StatusCode::kInternal, std::string(function) + ": unknown exception"));
  }
}

// Checks an argument struct's pointer and `struct_size`.
template <typename T>
anvil_status* CheckArgs(const char* function, const T* args, size_t minimum_size) {
  if (!args) return Invalid(std::string(function) + ": args is NULL");
  if (args->struct_size < minimum_size) {
    return Invalid(std::string(function) + ": struct_size is " + std::to_string(args->struct_size) +
                   ", smaller than the " + std::to_string(minimum_size) + " this ABI needs");
  }
  return nullptr;
}

}  // namespace anvil::core

#define ANVIL_CHECK_NOT_NULL(function, pointer) \
  if (!(pointer)) return ::anvil::core::Invalid(std::string(function) + ": " #pointer " is NULL")

#define ANVIL_CHECK_ARGS(function, args, size)                                        \
  if (anvil_status* _anvil_bad = ::anvil::core::CheckArgs(function, args, size)) return _anvil_bad
