// Compilation and execution through the C ABI: results, error propagation
// along chains, donation, deletion while in use, and concurrency.
#include <thread>

#include "core/tests/test_util.h"

namespace anvil::testing {
namespace {

constexpr char kAdd[] = R"(HloModule add
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT s = f32[4] add(a, b)
}
)";

constexpr char kScale[] = R"(HloModule scale
twice {
  x = f32[4] parameter(0)
  ROOT y = f32[4] add(x, x)
}
ENTRY e {
  a = f32[4] parameter(0)
  t = f32[4] call(a), to_apply=twice
  unused = f32[4] negate(a)
  ROOT r = (f32[4], f32[4]) tuple(t, a)
}
)";

class ExecuteTest : public ClientTest {
 protected:
  // Runs `exe` on `inputs`; returns the outputs (caller destroys them).
  std::vector<anvil_buffer*> Run(anvil_executable* exe, std::vector<anvil_buffer*> inputs,
                                 std::vector<uint8_t> donate = {}, anvil_event** done = nullptr) {
    size_t results = 0;
    EXPECT_EQ(Take(anvil_executable_result_count(exe, &results)).code, ANVIL_OK);
    std::vector<anvil_buffer*> outputs(results, nullptr);
    anvil_execute_args args{};
    args.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
    args.inputs = inputs.data();
    args.num_inputs = inputs.size();
    args.donate = donate.empty() ? nullptr : donate.data();
    Outcome o = Take(anvil_executable_execute(exe, &args, outputs.data(), done));
    EXPECT_EQ(o.code, ANVIL_OK) << o.message;
    return outputs;
  }
};

TEST_F(ExecuteTest, RunsAProgram) {
  anvil_executable* exe = Compile(kAdd);
  ASSERT_NE(exe, nullptr);
  size_t params = 0;
  ANVIL_ASSERT_OK(anvil_executable_parameter_count(exe, &params));
  EXPECT_EQ(params, 2u);
  anvil_buffer* a = FromHost({1, 2, 3, 4}, {4});
  anvil_buffer* b = FromHost({10, 20, 30, 40}, {4});
  anvil_event* done = nullptr;
  auto out = Run(exe, {a, b}, {}, &done);
  ANVIL_ASSERT_OK(anvil_event_await(done));
  EXPECT_EQ(ToHost(out[0]), (std::vector<float>{11, 22, 33, 44}));
  for (anvil_buffer* x : {a, b, out[0]}) anvil_buffer_destroy(x);
  anvil_event_destroy(done);
  anvil_executable_destroy(exe);
}

TEST_F(ExecuteTest, CanonicalisesBeforeThePluginSeesIt) {
  anvil_executable* exe = Compile(kScale);
  ASSERT_NE(exe, nullptr);
  const char* text = nullptr;
  size_t size = 0;
  ANVIL_ASSERT_OK(anvil_executable_canonical_text(exe, &text, &size));
  std::string canonical(text, size);
  EXPECT_EQ(canonical.find("call("), std::string::npos) << canonical;    // inlined
  EXPECT_EQ(canonical.find("negate("), std::string::npos) << canonical;  // dead code dropped
  size_t results = 0;
  ANVIL_ASSERT_OK(anvil_executable_result_count(exe, &results));
  EXPECT_EQ(results, 2u);  // the root tuple, flattened
  anvil_buffer* a = FromHost({1, 2, 3, 4}, {4});
  auto out = Run(exe, {a});
  EXPECT_EQ(ToHost(out[0]), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(ToHost(out[1]), (std::vector<float>{1, 2, 3, 4}));
  for (anvil_buffer* x : {a, out[0], out[1]}) anvil_buffer_destroy(x);
  anvil_executable_destroy(exe);
}

TEST_F(ExecuteTest, CompileErrors) {
  anvil_compile_args args{};
  args.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
  std::string bad = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] frob(p)\n}\n";
  args.program = bad.data();
  args.program_size = bad.size();
  args.format = "hlo";
  args.device = device_;
  anvil_executable* exe = nullptr;
  Outcome parse = Take(anvil_client_compile(client_, &args, &exe));
  EXPECT_EQ(parse.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(parse.message, "program:4:19: error: unknown opcode 'frob'");
  args.format = "onnx";
  EXPECT_EQ(Take(anvil_client_compile(client_, &args, &exe)).code, ANVIL_INVALID_ARGUMENT);
  std::string unsupported = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] sine(p)\n}\n";
  args.program = unsupported.data();
  args.program_size = unsupported.size();
  args.format = "hlo";
  Outcome plugin = Take(anvil_client_compile(client_, &args, &exe));
  EXPECT_EQ(plugin.code, ANVIL_UNIMPLEMENTED);
  EXPECT_EQ(plugin.message, "test: the test plugin does not run sine");
  SetFaults("compile");
  args.program = kAdd;
  args.program_size = sizeof(kAdd) - 1;
  Outcome injected = Take(anvil_client_compile(client_, &args, &exe));
  EXPECT_EQ(injected.code, ANVIL_INTERNAL);
  EXPECT_EQ(injected.message, "test: injected compilation failure");
}

TEST_F(ExecuteTest, StableHloComesInThroughTheSameDoor) {
  std::string mlir = R"(func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
})";
  anvil_compile_args args{};
  args.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
  args.program = mlir.data();
  args.program_size = mlir.size();
  args.format = "stablehlo";
  args.device = device_;
  anvil_executable* exe = nullptr;
  ANVIL_ASSERT_OK(anvil_client_compile(client_, &args, &exe));
  anvil_buffer* a = FromHost({1, 2, 3, 4}, {4});
  auto out = Run(exe, {a});
  EXPECT_EQ(ToHost(out[0]), (std::vector<float>{1, 4, 9, 16}));
  anvil_buffer_destroy(a);
  anvil_buffer_destroy(out[0]);
  anvil_executable_destroy(exe);
}

TEST_F(ExecuteTest, WrongInputsAreRefused) {
  anvil_executable* exe = Compile(kAdd);
  anvil_buffer* a = FromHost({1, 2, 3, 4}, {4});
  anvil_buffer* small = FromHost({1, 2}, {2});
  anvil_buffer* inputs[] = {a, small};
  anvil_buffer* out[1] = {nullptr};
  anvil_execute_args args{};
  args.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
  args.inputs = inputs;
  args.num_inputs = 2;
  Outcome shape = Take(anvil_executable_execute(exe, &args, out, nullptr));
  EXPECT_EQ(shape.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(shape.message, "anvil_executable_execute: input 1 is f32[2] but parameter 1 is f32[4]");
  args.num_inputs = 1;
  EXPECT_EQ(Take(anvil_executable_execute(exe, &args, out, nullptr)).code, ANVIL_INVALID_ARGUMENT);
  anvil_device* other = nullptr;
  ANVIL_ASSERT_OK(anvil_client_device(client_, 1, &other));
  anvil_buffer* elsewhere = FromHost({1, 2, 3, 4}, {4}, other);
  inputs[1] = elsewhere;
  args.num_inputs = 2;
  Outcome device = Take(anvil_executable_execute(exe, &args, out, nullptr));
  EXPECT_EQ(device.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_NE(device.message.find("input 1 is on device test-device-1"), std::string::npos) << device.message;
  for (anvil_buffer* x : {a, small, elsewhere}) anvil_buffer_destroy(x);
  anvil_executable_destroy(exe);
}

// An error flows along a chain: the first execution fails, the next two
// (which read its output) fail with the same error, as do their outputs.
TEST_F(ExecuteTest, ErrorsPropagateThroughAChainOfThree) {
  anvil_executable* exe = Compile(kAdd);
  anvil_buffer* x = FromHost({1, 1, 1, 1}, {4});
  SetFaults("execute_async,delay_ms=5");
  anvil_event* first_done = nullptr;
  auto first = Run(exe, {x, x}, {}, &first_done);
  auto second = Run(exe, {first[0], x});
  auto third = Run(exe, {second[0], first[0]});
  anvil_event* last = nullptr;
  ANVIL_ASSERT_OK(anvil_buffer_ready_event(third[0], &last));
  Outcome error = Take(anvil_event_await(last));
  EXPECT_EQ(error.code, ANVIL_INTERNAL);
  EXPECT_EQ(error.message, "test: injected asynchronous execution failure");
  EXPECT_EQ(Take(anvil_event_await(first_done)).message, error.message);
  SetFaults("");
  float out[4];
  anvil_event* copy = nullptr;
  ANVIL_ASSERT_OK(anvil_buffer_to_host(second[0], out, sizeof(out), &copy));
  EXPECT_EQ(Take(anvil_event_await(copy)).message, error.message);
  for (anvil_event* e : {first_done, last, copy}) anvil_event_destroy(e);
  for (anvil_buffer* b : {x, first[0], second[0], third[0]}) anvil_buffer_destroy(b);
  anvil_executable_destroy(exe);
}

TEST_F(ExecuteTest, SynchronousExecutionFailureReachesOutputs) {
  anvil_executable* exe = Compile(kAdd);
  anvil_buffer* x = FromHost({1, 1, 1, 1}, {4});
  SetFaults("execute");
  anvil_event* done = nullptr;
  auto out = Run(exe, {x, x}, {}, &done);
  Outcome error = Take(anvil_event_await(done));
  EXPECT_EQ(error.code, ANVIL_INTERNAL);
  EXPECT_EQ(error.message, "test: injected execution failure");
  anvil_event_destroy(done);
  anvil_buffer_destroy(x);
  anvil_buffer_destroy(out[0]);
  anvil_executable_destroy(exe);
}

TEST_F(ExecuteTest, DonatedBufferCannotBeUsedAgain) {
  anvil_executable* exe = Compile(kAdd);
  anvil_buffer* a = FromHost({1, 2, 3, 4}, {4});
  anvil_buffer* b = FromHost({1, 1, 1, 1}, {4});
  auto out = Run(exe, {a, b}, {1, 0});
  EXPECT_EQ(ToHost(out[0]), (std::vector<float>{2, 3, 4, 5}));
  anvil_buffer* inputs[] = {a, b};
  anvil_buffer* again[1] = {nullptr};
  anvil_execute_args args{};
  args.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
  args.inputs = inputs;
  args.num_inputs = 2;
  Outcome reuse = Take(anvil_executable_execute(exe, &args, again, nullptr));
  EXPECT_EQ(reuse.code, ANVIL_FAILED_PRECONDITION);
  EXPECT_EQ(reuse.message,
            "anvil_executable_execute: input 0 was donated to an earlier execution and may not be used again");
  float host[4];
  anvil_event* done = nullptr;
  EXPECT_EQ(Take(anvil_buffer_to_host(a, host, sizeof(host), &done)).code, ANVIL_FAILED_PRECONDITION);
  // Donating a buffer that is also passed again in the same call is refused.
  uint8_t donate_first[] = {1, 0};
  anvil_buffer* twice[] = {b, b};
  args.inputs = twice;
  args.donate = donate_first;
  EXPECT_EQ(Take(anvil_executable_execute(exe, &args, again, nullptr)).code, ANVIL_INVALID_ARGUMENT);
  for (anvil_buffer* x : {a, b, out[0]}) anvil_buffer_destroy(x);
  anvil_executable_destroy(exe);
}

// Destroying inputs, and the executable, while executions that use them are
// still pending is fine: the memory lives until they finish.
TEST_F(ExecuteTest, DeletionWhileInUse) {
  anvil_executable* exe = Compile(kAdd);
  SetFaults("delay_ms=20");
  anvil_buffer* a = FromHost({1, 2, 3, 4}, {4});
  anvil_buffer* b = FromHost({4, 3, 2, 1}, {4});
  auto out = Run(exe, {a, b});
  anvil_buffer_destroy(a);
  anvil_buffer_destroy(b);
  anvil_executable_destroy(exe);
  EXPECT_EQ(ToHost(out[0]), (std::vector<float>{5, 5, 5, 5}));
  anvil_buffer_destroy(out[0]);
}

TEST_F(ExecuteTest, EightThreadsThousandExecutionsEach) {
  anvil_executable* exe = Compile(kAdd);
  anvil_buffer* a = FromHost({1, 2, 3, 4}, {4});
  anvil_buffer* b = FromHost({0.5, 0.25, 0.125, 2}, {4});
  constexpr int kThreads = 8, kRuns = 1000;
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      anvil_buffer* inputs[] = {a, b};
      for (int r = 0; r < kRuns; ++r) {
        anvil_buffer* out = nullptr;
        anvil_execute_args args{};
        args.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
        args.inputs = inputs;
        args.num_inputs = 2;
        if (anvil_status* s = anvil_executable_execute(exe, &args, &out, nullptr)) {
          anvil_status_free(s);
          ++wrong[t];
          continue;
        }
        float host[4];
        anvil_event* done = nullptr;
        anvil_status* s = anvil_buffer_to_host(out, host, sizeof(host), &done);
        if (!s) s = anvil_event_await(done);
        if (s || host[0] != 1.5f || host[1] != 2.25f || host[2] != 3.125f || host[3] != 6.0f) ++wrong[t];
        anvil_status_free(s);
        anvil_event_destroy(done);
        anvil_buffer_destroy(out);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
  anvil_buffer_destroy(a);
  anvil_buffer_destroy(b);
  anvil_executable_destroy(exe);
}

}  // namespace
}  // namespace anvil::testing
