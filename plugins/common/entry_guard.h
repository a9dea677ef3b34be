// The exception policy of every plugin written in C++: no exception crosses
// the plugin ABI, neither out of an entry of the API table nor out of the
// work a plugin runs on core's host threads.
//
//   api.executable_compile = ANVIL_GUARDED(executable_compile, Compile);
//
// makes the table entry a noexcept wrapper of `Compile`: an exception
// becomes an error naming the entry (RESOURCE_EXHAUSTED for std::bad_alloc,
// INTERNAL otherwise). Entries that return nothing (frees, destroys) report
// the exception on stderr and return, since they have no way to fail.
//
// Asynchronous work goes through Complete(): the work returns NULL or an
// error, an exception becomes an error, and `done` is called exactly once.
#pragma once

#include <cstddef>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "plugins/common/plugin_error.h"

namespace anvil::plugin {

// A string literal as a template argument (the entry's name).
template <size_t N>
struct EntryName {
  constexpr EntryName(const char (&s)[N]) {  // NOLINT: implicit by design
    for (size_t k = 0; k < N; ++k) text[k] = s[k];
  }
  char text[N];
};

// The error for the exception being handled, caught at `where`. Call it
// only inside a catch block.
inline anvil_plugin_error* ErrorFromCurrentException(const char* where) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return OutOfMemoryError();
  } catch (const std::exception& e) {
    try {
      return Error(kInternal, std::string(where) + ": internal error: " + e.what());
    } catch (...) {
      return OutOfMemoryError();
    }
  } catch (...) {
    return Error(kInternal, std::string(where) + ": internal error: unknown exception");
  }
}

template <auto Fn, EntryName Name>
struct Guarded;

template <typename... Args, anvil_plugin_error* (*Fn)(Args...), EntryName Name>
struct Guarded<Fn, Name> {
  static anvil_plugin_error* Call(Args... args) noexcept {
    try {
      return Fn(args...);
    } catch (...) {
      return ErrorFromCurrentException(Name.text);
    }
  }
};

template <typename... Args, void (*Fn)(Args...), EntryName Name>
struct Guarded<Fn, Name> {
  static void Call(Args... args) noexcept {
    try {
      Fn(args...);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "anvil plugin: %s: exception ignored: %s\n", Name.text, e.what());
    } catch (...) {
      std::fprintf(stderr, "anvil plugin: %s: unknown exception ignored\n", Name.text);
    }
  }
};

// Runs `work` and reports its outcome to `done`, exactly once, whatever
// `work` does: returns NULL, returns an error, or throws.
template <typename Work>
void Complete(const char* where, Work& work, anvil_plugin_done done, void* user_data) noexcept {
  anvil_plugin_error* error = nullptr;
  try {
    error = work();
  } catch (...) {
    error = ErrorFromCurrentException(where);
  }
  done(user_data, error);
}

}  // namespace anvil::plugin

// The guarded form of `fn` for the table entry `entry`.
#define ANVIL_GUARDED(entry, fn) (&::anvil::plugin::Guarded<&fn, #entry>::Call)
