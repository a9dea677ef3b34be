// rng-get-and-update-state on the CPU plugin, through the public C ABI: the
// executable keeps the state between executions, each execution returning
// the state and advancing it by the op's delta.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "anvil/anvil.h"

namespace {

std::string Message(anvil_status* status) {
  if (!status) return "";
  std::string text = anvil_status_get_message(status);
  anvil_status_free(status);
  return text.empty() ? "(error without message)" : text;
}

#define EXPECT_OK(expr) EXPECT_EQ(Message(expr), "") << #expr
#define ASSERT_OK(expr) ASSERT_EQ(Message(expr), "") << #expr

TEST(RngStateTest, AdvancesByDeltaAcrossExecutions) {
  anvil_client_options options{};
  options.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE;
  anvil_client* client = nullptr;
  ASSERT_OK(anvil_client_create(&options, &client));
  anvil_plugin_load_args load{};
  load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
  load.name = "cpu";
  ASSERT_OK(anvil_client_load_plugin(client, &load));
  anvil_device* device = nullptr;
  ASSERT_OK(anvil_client_device(client, 0, &device));
  const std::string hlo = "HloModule m\nENTRY e {\n  ROOT s = u64[2] rng-get-and-update-state(), delta=131072\n}\n";
  anvil_compile_args compile{};
  compile.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
  compile.program = hlo.data();
  compile.program_size = hlo.size();
  compile.format = "hlo";
  compile.device = device;
  anvil_executable* executable = nullptr;
  ASSERT_OK(anvil_client_compile(client, &compile, &executable));

  for (uint64_t run = 0; run < 3; ++run) {
    anvil_execute_args args{};
    args.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
    anvil_buffer* output = nullptr;
    anvil_event* done = nullptr;
    ASSERT_OK(anvil_executable_execute(executable, &args, &output, &done));
    EXPECT_OK(anvil_event_await(done));
    EXPECT_OK(anvil_event_destroy(done));
    uint64_t state[2] = {1, 1};
    anvil_event* copied = nullptr;
    EXPECT_OK(anvil_buffer_to_host(output, state, sizeof state, &copied));
    EXPECT_OK(anvil_event_await(copied));
    EXPECT_OK(anvil_event_destroy(copied));
    // XLA's CPU runtime starts the state at 0x7012395.
    EXPECT_EQ(state[0], 0x7012395u + run * 131072u) << "run " << run;
    EXPECT_EQ(state[1], 0u) << "run " << run;
    EXPECT_OK(anvil_buffer_destroy(output));
  }
  EXPECT_OK(anvil_executable_destroy(executable));
  EXPECT_OK(anvil_client_destroy(client));
}

}  // namespace
