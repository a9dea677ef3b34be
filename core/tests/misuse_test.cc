// A hostile caller's view of the C ABI: shapes whose sizes overflow, NULL
// out-pointers, and plugin failures (the k-th output allocation, exceptions
// inside a plugin) that must come back as statuses with nothing lost, leaked
// or freed twice.
#include "core/tests/test_util.h"

namespace anvil::testing {
namespace {

constexpr int64_t kTwo32 = int64_t{1} << 32;

class MisuseTest : public ClientTest {
 protected:
  Outcome FromHostDims(int32_t type, std::vector<int64_t> dims, anvil_buffer** out) {
    static const char kData[64] = {};
    anvil_buffer_from_host_args args{};
    args.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
    args.device = device_;
    args.data = kData;
    args.element_type = type;
    args.dims = dims.data();
    args.num_dims = dims.size();
    return Take(anvil_buffer_from_host(client_, &args, out, nullptr));
  }
  // Starts `exe` on the one input `x` (donated when asked), its outputs
  // into `out`; returns the execution's done event.
  anvil_event* Start(anvil_executable* exe, anvil_buffer* x, bool donate, anvil_buffer** out) {
    uint8_t flag = donate ? 1 : 0;
    anvil_execute_args args{};
    args.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
    args.inputs = &x;
    args.num_inputs = 1;
    args.donate = &flag;
    anvil_event* done = nullptr;
    Outcome o = Take(anvil_executable_execute(exe, &args, out, &done));
    EXPECT_EQ(o.code, ANVIL_OK) << o.message;
    return done;
  }
  Outcome CompileText(const std::string& text, const char* format, anvil_executable** out) {
    anvil_compile_args args{};
    args.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
    args.program = text.data();
    args.program_size = text.size();
    args.format = format;
    args.device = device_;
    return Take(anvil_client_compile(client_, &args, out));
  }
};

TEST_F(MisuseTest, ShapesWhoseSizeOverflowsAreRefusedNamingTheShape) {
  struct Case {
    int32_t type;
    std::vector<int64_t> dims;
    const char* shape;
  };
  const Case cases[] = {
      {ANVIL_F32, {kTwo32, kTwo32}, "f32[4294967296,4294967296]"},
      {ANVIL_F32, {INT64_MAX, 2}, "f32[9223372036854775807,2]"},
      {ANVIL_F32, {3037000500, 3037000500}, "f32[3037000500,3037000500]"},
      {ANVIL_F32, {(int64_t{1} << 62) + 1, 4}, "f32[4611686018427387905,4]"},
      {ANVIL_F32, {kTwo32, kTwo32, 0, 5}, "f32[4294967296,4294967296,0,5]"},
      {ANVIL_F32, {int64_t{1} << 62}, "f32[4611686018427387904]"},
      {ANVIL_C128, {int64_t{1} << 61}, "c128[2305843009213693952]"},
      {ANVIL_S8, {INT64_MAX, INT64_MAX}, "s8[9223372036854775807,9223372036854775807]"},
  };
  for (const Case& c : cases) {
    anvil_buffer* b = nullptr;
    Outcome o = FromHostDims(c.type, c.dims, &b);
    EXPECT_EQ(o.code, ANVIL_INVALID_ARGUMENT) << c.shape;
    EXPECT_NE(o.message.find(std::string("anvil_buffer_from_host: shape ") + c.shape + " is too large"),
              std::string::npos)
        << o.message;
    EXPECT_EQ(b, nullptr);
  }
  anvil_buffer* b = nullptr;
  Outcome negative = FromHostDims(ANVIL_F32, {4, -1}, &b);
  EXPECT_EQ(negative.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_NE(negative.message.find("negative dimension"), std::string::npos) << negative.message;
  // The largest sizes that fit are still shapes (and fail only for memory).
  Outcome empty = FromHostDims(ANVIL_F32, {0, int64_t{1} << 40}, &b);
  EXPECT_EQ(empty.code, ANVIL_OK) << empty.message;
  anvil_buffer_destroy(b);
}

TEST_F(MisuseTest, AnImpossibleRankIsRefusedBeforeDimsIsRead) {
  const int64_t dims[] = {2};
  anvil_buffer_from_host_args args{};
  args.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
  args.device = device_;
  args.data = dims;
  args.element_type = ANVIL_F32;
  args.dims = dims;
  args.num_dims = SIZE_MAX;
  anvil_buffer* b = nullptr;
  Outcome o = Take(anvil_buffer_from_host(client_, &args, &b, nullptr));
  EXPECT_EQ(o.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_NE(o.message.find("at most 256 dimensions"), std::string::npos) << o.message;
}

TEST_F(MisuseTest, APluginNameIsNeverAPath) {
  for (const char* name : {"../test", "test/../test", "", "te st"}) {
    anvil_plugin_load_args load{};
    load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
    load.name = name;
    Outcome o = Take(anvil_client_load_plugin(client_, &load));
    EXPECT_EQ(o.code, ANVIL_INVALID_ARGUMENT) << name;
    EXPECT_NE(o.message.find("may hold only letters, digits"), std::string::npos) << o.message;
  }
}

TEST_F(MisuseTest, ProgramsWithOverflowingShapesAreRefusedWithLineAndColumn) {
  anvil_executable* exe = nullptr;
  Outcome hlo = CompileText("HloModule m\nENTRY e {\n  ROOT p = f32[4294967296,4294967296] parameter(0)\n}\n", "hlo", &exe);
  EXPECT_EQ(hlo.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(hlo.message,
            "program:3:12: error: shape f32[4294967296,4294967296] is too large: its byte size does not fit in 64 bits");
  Outcome mlir = CompileText(
      "func.func @main(%a: tensor<1099511627776x1099511627776xf32>) -> tensor<1099511627776x1099511627776xf32> {\n"
      "  return %a : tensor<1099511627776x1099511627776xf32>\n}\n",
      "stablehlo", &exe);
  EXPECT_EQ(mlir.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_NE(mlir.message.find("program:1:21: error: shape f32[1099511627776,1099511627776] is too large"),
            std::string::npos)
      << mlir.message;
  // Padding whose size wraps int64 is refused, not taken for a small size.
  Outcome pad = CompileText(
      "HloModule m\nENTRY e {\n  p = f32[3] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[5] pad(p, z), padding=0_0_4611686018427387904\n}\n",
      "hlo", &exe);
  EXPECT_EQ(pad.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_NE(pad.message.find("too large"), std::string::npos) << pad.message;
  EXPECT_EQ(exe, nullptr);
}

TEST_F(MisuseTest, NullOutPointersAreRefused) {
  const char *a = nullptr, *b = nullptr, *c = nullptr;
  auto refused = [](anvil_status* s, const char* what) {
    Outcome o = Take(s);
    EXPECT_EQ(o.code, ANVIL_INVALID_ARGUMENT) << what;
    EXPECT_NE(o.message.find(what), std::string::npos) << o.message;
  };
  refused(anvil_client_plugin_info(client_, 0, nullptr, &b, &c), "anvil_client_plugin_info: out_name is NULL");
  refused(anvil_client_plugin_info(client_, 0, &a, nullptr, &c), "anvil_client_plugin_info: out_version is NULL");
  refused(anvil_client_plugin_info(client_, 0, &a, &b, nullptr), "anvil_client_plugin_info: out_path is NULL");
  refused(anvil_client_plugin_failure(client_, 0, nullptr, &b), "anvil_client_plugin_failure: out_path is NULL");
  refused(anvil_client_plugin_failure(client_, 0, &a, nullptr), "anvil_client_plugin_failure: out_reason is NULL");
  anvil_executable* exe = Compile("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n");
  ASSERT_NE(exe, nullptr);
  int32_t type = 0;
  const int64_t* dims = nullptr;
  size_t rank = 0;
  for (auto* fn : {&anvil_executable_parameter_shape, &anvil_executable_result_shape}) {
    const char* name = fn == &anvil_executable_parameter_shape ? "anvil_executable_parameter_shape"
                                                               : "anvil_executable_result_shape";
    refused(fn(exe, 0, nullptr, &dims, &rank), (std::string(name) + ": out_type is NULL").c_str());
    refused(fn(exe, 0, &type, nullptr, &rank), (std::string(name) + ": out_dims is NULL").c_str());
    refused(fn(exe, 0, &type, &dims, nullptr), (std::string(name) + ": out_num_dims is NULL").c_str());
    Outcome range = Take(fn(exe, 7, &type, &dims, &rank));
    EXPECT_EQ(range.code, ANVIL_OUT_OF_RANGE);
    EXPECT_EQ(range.message.rfind(name, 0), 0u) << range.message;
  }
  const char* text = nullptr;
  size_t size = 0;
  refused(anvil_executable_canonical_text(exe, &text, nullptr), "anvil_executable_canonical_text: out_size is NULL");
  refused(anvil_executable_canonical_text(exe, nullptr, &size), "anvil_executable_canonical_text: out_text is NULL");
  anvil_executable_destroy(exe);
  anvil_executable* none = nullptr;
  Outcome format = CompileText("HloModule m\n", nullptr, &none);
  EXPECT_EQ(format.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(format.message, "anvil_client_compile: args->format is NULL");
  Outcome unknown = CompileText("HloModule m\n", "onnx", &none);
  EXPECT_EQ(unknown.message,
            "anvil_client_compile: unknown program format 'onnx' (expected hlo, stablehlo or stablehlo-bytecode)");
}

constexpr char kThreeOutputs[] = R"(HloModule three
ENTRY e {
  x = f32[4] parameter(0)
  a = f32[4] add(x, x)
  b = f32[4] negate(x)
  c = f32[4] multiply(x, x)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(a, b, c)
}
)";

// The k-th output allocation fails, for each k, with the input donated or
// not: the execution and its outputs carry the error, and every output made
// before it and the donated input are freed exactly once (ASan sees a double
// free; the plugin's count sees a leak).
TEST_F(MisuseTest, AFailedOutputAllocationFreesEverythingOnce) {
  anvil_executable* exe = Compile(kThreeOutputs);
  ASSERT_NE(exe, nullptr);
  const int64_t baseline = PluginLiveMemory();
  for (int donate = 0; donate < 2; ++donate) {
    for (int k = 0; k < 3; ++k) {
      SetFaults(("allocate_output=" + std::to_string(k)).c_str());
      anvil_buffer* x = FromHost({1, 2, 3, 4}, {4});
      anvil_buffer* out[3] = {};
      anvil_event* done = Start(exe, x, donate != 0, out);
      Outcome o = Take(anvil_event_await(done));
      EXPECT_EQ(o.code, ANVIL_RESOURCE_EXHAUSTED) << "output " << k;
      EXPECT_EQ(o.message, "test: injected allocation failure of output " + std::to_string(k));
      for (anvil_buffer* r : out) {
        anvil_event* ready = nullptr;
        ANVIL_ASSERT_OK(anvil_buffer_ready_event(r, &ready));
        EXPECT_EQ(Take(anvil_event_await(ready)).code, ANVIL_RESOURCE_EXHAUSTED);
        anvil_event_destroy(ready);
        anvil_buffer_destroy(r);
      }
      anvil_event_destroy(done);
      anvil_buffer_destroy(x);
      EXPECT_EQ(SettledLiveMemory(baseline), baseline) << "output " << k << (donate ? ", donated" : "");
    }
  }
  SetFaults("");
  anvil_buffer* x = FromHost({1, 2, 3, 4}, {4});
  anvil_buffer* out[3] = {};
  anvil_event_destroy(Start(exe, x, false, out));
  EXPECT_EQ(ToHost(out[2]), (std::vector<float>{1, 4, 9, 16}));
  for (anvil_buffer* r : out) anvil_buffer_destroy(r);
  anvil_buffer_destroy(x);
  anvil_executable_destroy(exe);
}

// A C++ exception inside a plugin, in an entry or in its asynchronous work,
// comes back as INTERNAL naming the entry; the donated input is not lost.
TEST_F(MisuseTest, ExceptionsInsideAPluginBecomeStatuses) {
  anvil_executable* exe = Compile(kThreeOutputs);
  ASSERT_NE(exe, nullptr);
  const int64_t baseline = PluginLiveMemory();
  const std::pair<const char*, const char*> faults[] = {
      {"execute_throws", "test: executable_execute: internal error: injected exception in execute"},
      {"execute_async_throws", "test: executable_execute: internal error: injected exception in asynchronous work"},
  };
  for (const auto& [fault, message] : faults) {
    SetFaults(fault);
    anvil_buffer* x = FromHost({1, 2, 3, 4}, {4});
    anvil_buffer* out[3] = {};
    anvil_event* done = Start(exe, x, true, out);
    Outcome o = Take(anvil_event_await(done));
    EXPECT_EQ(o.code, ANVIL_INTERNAL) << fault;
    EXPECT_EQ(o.message, message);
    anvil_event_destroy(done);
    for (anvil_buffer* r : out) anvil_buffer_destroy(r);
    anvil_buffer_destroy(x);
    EXPECT_EQ(SettledLiveMemory(baseline), baseline) << fault;
  }
  anvil_executable_destroy(exe);
}

// A plugin that reports success but leaves an output NULL: the execution
// fails with INTERNAL naming the plugin and the output, and the outputs it
// did make are freed, not leaked.
TEST_F(MisuseTest, APluginThatMakesNoOutputMemoryFailsTheExecution) {
  anvil_executable* exe = Compile(kThreeOutputs);
  ASSERT_NE(exe, nullptr);
  const int64_t baseline = PluginLiveMemory();
  SetFaults("null_output");
  anvil_buffer* x = FromHost({1, 2, 3, 4}, {4});
  anvil_buffer* out[3] = {};
  anvil_event* done = Start(exe, x, false, out);
  Outcome o = Take(anvil_event_await(done));
  EXPECT_EQ(o.code, ANVIL_INTERNAL);
  EXPECT_EQ(o.message, "test produced no memory for output 0");
  anvil_event_destroy(done);
  for (anvil_buffer* r : out) anvil_buffer_destroy(r);
  anvil_buffer_destroy(x);
  EXPECT_EQ(SettledLiveMemory(baseline), baseline);
  anvil_executable_destroy(exe);
}

}  // namespace
}  // namespace anvil::testing
