// rng-get-and-update-state on the CPU plugin, through the public C ABI: the
// executable keeps the state between executions, each execution returning
// the state and advancing it by the op's delta.
#include <gtest/gtest.h>

#include <cstdint>

#include "conformance/testkit/abi_session.h"

namespace {

TEST(RngStateTest, AdvancesByDeltaAcrossExecutions) {
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* executable = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(
      "HloModule m\nENTRY e {\n  ROOT s = u64[2] rng-get-and-update-state(), delta=131072\n}\n", &executable));
  for (uint64_t run = 0; run < 3; ++run) {
    std::vector<anvil_buffer*> out = session.Execute(executable, {}, 1);
    const auto state = session.ToHost<uint64_t>(out[0], 2);
    // XLA's CPU runtime starts the state at 0x7012395.
    EXPECT_EQ(state[0], 0x7012395u + run * 131072u) << "run " << run;
    EXPECT_EQ(state[1], 0u) << "run " << run;
    ANVIL_TESTKIT_EXPECT_OK(anvil_buffer_destroy(out[0]));
  }
  ANVIL_TESTKIT_EXPECT_OK(anvil_executable_destroy(executable));
}

}  // namespace
