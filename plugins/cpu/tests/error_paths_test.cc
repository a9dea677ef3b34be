// The CPU plugin's execute error path through the C ABI: an output whose
// memory cannot be had (4 TiB) after another output was allocated. The
// execution and every output carry RESOURCE_EXHAUSTED; the output made
// before is freed once (the plugin used to free it and leave it for core to
// free again), and the donated input is freed too (LeakSanitizer would say).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "anvil/anvil.h"
#include "conformance/testkit/abi_session.h"

namespace {

constexpr char kHugeSecondOutput[] = R"(HloModule huge
ENTRY e {
  x = f32[4] parameter(0)
  c = f32[] constant(1)
  b = f32[1099511627776] broadcast(c), dimensions={}
  n = f32[4] negate(x)
  ROOT t = (f32[4], f32[1099511627776]) tuple(n, b)
}
)";

TEST(CpuErrorPaths, AnOutputThatCannotBeAllocatedFailsTheExecutionCleanly) {
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(kHugeSecondOutput, &exe));
  for (uint8_t donate : {0, 1}) {
    const float data[4] = {1, 2, 3, 4};
    anvil_buffer* x = session.FromHost(data, ANVIL_F32, {4});
    anvil_execute_args args{};
    args.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
    args.inputs = &x;
    args.num_inputs = 1;
    args.donate = &donate;
    anvil_buffer* out[2] = {};
    anvil_event* done = nullptr;
    ANVIL_TESTKIT_ASSERT_OK(anvil_executable_execute(exe, &args, out, &done));
    anvil_status* failed = anvil_event_await(done);
    EXPECT_EQ(anvil_status_get_code(failed), ANVIL_RESOURCE_EXHAUSTED);
    EXPECT_NE(std::string(anvil_status_get_message(failed)).find("cpu: cannot allocate 4398046511104 bytes"),
              std::string::npos)
        << anvil_status_get_message(failed);
    anvil_status_free(failed);
    for (anvil_buffer* r : out) {
      anvil_event* ready = nullptr;
      ANVIL_TESTKIT_ASSERT_OK(anvil_buffer_ready_event(r, &ready));
      anvil_status* s = anvil_event_await(ready);
      EXPECT_EQ(anvil_status_get_code(s), ANVIL_RESOURCE_EXHAUSTED);
      anvil_status_free(s);
      anvil_event_destroy(ready);
      anvil_buffer_destroy(r);
    }
    anvil_event_destroy(done);
    anvil_buffer_destroy(x);
  }
  anvil_executable_destroy(exe);
}

}  // namespace
