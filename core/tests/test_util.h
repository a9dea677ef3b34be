// Helpers for core's tests, which use only the public C ABI (plus the test
// plugin's fault hook).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "anvil/anvil.h"

namespace anvil::testing {

// The status's code and message, freeing it.
struct Outcome {
  anvil_status_code code;
  std::string message;
};
Outcome Take(anvil_status* status);

#define ANVIL_ASSERT_OK(expr)                                                     \
  do {                                                                            \
    ::anvil::testing::Outcome _o = ::anvil::testing::Take(expr);                  \
    ASSERT_EQ(_o.code, ANVIL_OK) << #expr << ": " << _o.message;                   \
  } while (0)
#define ANVIL_EXPECT_OK(expr)                                                     \
  do {                                                                            \
    ::anvil::testing::Outcome _o = ::anvil::testing::Take(expr);                  \
    EXPECT_EQ(_o.code, ANVIL_OK) << #expr << ": " << _o.message;                   \
  } while (0)

// How many memory handles the test plugin holds now (-1 if not loaded).
int64_t PluginLiveMemory();
// The same once the client's last completions have let go of what they
// held (they finish just after the events they set), or what it still is
// after ten seconds.
int64_t SettledLiveMemory(int64_t expected);

// A client whose plugin path is the test plugins' directory, with the `test`
// plugin loaded (unless `load_test_plugin` is false).
class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  void SetFaults(const char* spec);

  anvil_buffer* FromHost(const std::vector<float>& values, std::vector<int64_t> dims, anvil_device* device = nullptr);
  std::vector<float> ToHost(anvil_buffer* buffer);
  // Compiles HLO text on device 0.
  anvil_executable* Compile(const std::string& hlo);

  bool load_test_plugin_ = true;
  anvil_client* client_ = nullptr;
  anvil_device* device_ = nullptr;
};

}  // namespace anvil::testing
