// Test kit for plugin authors: one client with one plugin loaded, and the
// few C ABI calls a plugin test makes over and over (compile HLO text, move
// arrays in and out, execute and wait), each checked with GoogleTest.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "anvil/anvil.h"

namespace anvil::testkit {

// The status's message ("" for OK), freeing it.
std::string TakeMessage(anvil_status* status);

#define ANVIL_TESTKIT_EXPECT_OK(expr) EXPECT_EQ(::anvil::testkit::TakeMessage(expr), "") << #expr
#define ANVIL_TESTKIT_ASSERT_OK(expr) ASSERT_EQ(::anvil::testkit::TakeMessage(expr), "") << #expr

class AbiSession {
 public:
  // Creates a client and loads the plugin `plugin` (found the usual way:
  // ANVIL_PLUGIN_PATH, then anvil_plugins/ beside libanvil.so). ok() says
  // whether that and device 0 worked; error() why not.
  explicit AbiSession(const char* plugin);
  // The same, with the client made from `options` (a trace file, a compile
  // cache); its plugin path and load-all fields are overridden.
  AbiSession(const char* plugin, anvil_client_options options);
  ~AbiSession();
  AbiSession(const AbiSession&) = delete;
  AbiSession& operator=(const AbiSession&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  anvil_client* client() const { return client_; }
  anvil_device* device() const { return device_; }
  size_t device_count() const { return device_count_; }

  // Compiles XLA HLO text for device 0 (with the plugin's compile
  // `options`, if any); the status is the caller's.
  anvil_status* Compile(const std::string& hlo, anvil_executable** out, const char* options = nullptr);
  // A buffer holding a copy of `data`, ready when this returns.
  anvil_buffer* FromHost(const void* data, anvil_element_type type, const std::vector<int64_t>& dims);
  // `count` elements of `buffer`.
  template <typename T>
  std::vector<T> ToHost(anvil_buffer* buffer, size_t count) {
    std::vector<T> out(count);
    CopyToHost(buffer, out.data(), count * sizeof(T));
    return out;
  }
  // Runs `executable` on `inputs` and waits; its outputs. `donate` has one
  // flag per input (none donated when empty).
  std::vector<anvil_buffer*> Execute(anvil_executable* executable, std::vector<anvil_buffer*> inputs,
                                     size_t num_outputs, std::vector<uint8_t> donate = {});

 private:
  void CopyToHost(anvil_buffer* buffer, void* dst, size_t bytes);

  anvil_client* client_ = nullptr;
  anvil_device* device_ = nullptr;
  size_t device_count_ = 0;
  std::string error_;
};

}  // namespace anvil::testkit
