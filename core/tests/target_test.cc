// Compile-only targets through the C ABI (client ABI minor 5, plugin ABI
// minor 4): the test plugin lists "tgt_a" and "tgt_b"; tgt_b refuses a
// program whose entry's root is a custom-call. Older plugins list none.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/tests/test_util.h"

namespace anvil::testing {
namespace {

constexpr char kNegate[] = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n";
// The custom-call is the root only once the call is inlined: the plugin
// sees canonical text.
constexpr char kCustomCallThroughACall[] = R"(HloModule cc
f {
  x = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(x), custom_call_target="opaque"
}
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] call(p), to_apply=f
}
)";
constexpr char kStableHlo[] = R"(func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.negate %arg0 : tensor<2xf32>
  return %0 : tensor<2xf32>
}
)";

anvil_compile_args Args(const std::string& program, const char* format = "hlo") {
  anvil_compile_args args{};
  args.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
  args.program = program.data();
  args.program_size = program.size();
  args.format = format;
  return args;
}

class TargetTest : public ClientTest {
 protected:
  Outcome CompileFor(size_t target, const std::string& program, const char* format = "hlo",
                     const char* options = nullptr) {
    anvil_compile_args args = Args(program, format);
    args.options = options;
    return Take(anvil_client_compile_for_target(client_, target, &args));
  }
  Outcome Load(const char* name) {
    anvil_plugin_load_args load{};
    load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
    load.name = name;
    return Take(anvil_client_load_plugin(client_, &load));
  }
  size_t TargetCount() {
    size_t n = 99;
    Outcome o = Take(anvil_client_target_count(client_, &n));
    EXPECT_EQ(o.code, ANVIL_OK) << o.message;
    return n;
  }
};

class TargetTestWithoutPlugin : public TargetTest {
 protected:
  void SetUp() override {
    load_test_plugin_ = false;
    TargetTest::SetUp();
  }
};

TEST_F(TargetTest, CountAndNamesThroughTheClient) {
  ASSERT_EQ(TargetCount(), 2u);
  const char* plugin = nullptr;
  const char* name = nullptr;
  ANVIL_ASSERT_OK(anvil_client_target(client_, 0, &plugin, &name));
  EXPECT_STREQ(plugin, "test");
  EXPECT_STREQ(name, "tgt_a");
  ANVIL_ASSERT_OK(anvil_client_target(client_, 1, &plugin, &name));
  EXPECT_STREQ(plugin, "test");
  EXPECT_STREQ(name, "tgt_b");
  // The strings live as long as the client: loading more leaves them be.
  ASSERT_EQ(Load("test_minor3").code, ANVIL_OK);
  ASSERT_EQ(Load("test_old").code, ANVIL_OK);
  EXPECT_STREQ(plugin, "test");
  EXPECT_STREQ(name, "tgt_b");
  EXPECT_EQ(TargetCount(), 2u);
}

TEST_F(TargetTest, CompileSucceeds) {
  for (size_t t = 0; t < 2; ++t) {
    Outcome o = CompileFor(t, kNegate);
    EXPECT_EQ(o.code, ANVIL_OK) << t << ": " << o.message;
    Outcome stablehlo = CompileFor(t, kStableHlo, "stablehlo");
    EXPECT_EQ(stablehlo.code, ANVIL_OK) << t << ": " << stablehlo.message;
  }
}

TEST_F(TargetTest, CompileFailureHasThePluginsCodeAndMessage) {
  Outcome a = CompileFor(0, kCustomCallThroughACall);
  EXPECT_EQ(a.code, ANVIL_OK) << a.message;
  Outcome b = CompileFor(1, kCustomCallThroughACall);
  EXPECT_EQ(b.code, ANVIL_UNIMPLEMENTED);
  EXPECT_EQ(b.message, "test: tgt_b cannot compile custom-call");
}

TEST_F(TargetTest, OptionsReachThePlugin) {
  Outcome o = CompileFor(0, kNegate, "hlo", "refuse");
  EXPECT_EQ(o.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, "test: tgt_a refuses the options 'refuse'");
}

TEST_F(TargetTest, IndexPastTheEndIsOutOfRange) {
  Outcome compile = CompileFor(2, kNegate);
  EXPECT_EQ(compile.code, ANVIL_OUT_OF_RANGE);
  EXPECT_EQ(compile.message, "anvil_client_compile_for_target: target index 2 out of range (2 targets)");
  const char* plugin = nullptr;
  const char* name = nullptr;
  Outcome target = Take(anvil_client_target(client_, 7, &plugin, &name));
  EXPECT_EQ(target.code, ANVIL_OUT_OF_RANGE);
  EXPECT_EQ(target.message, "anvil_client_target: target index 7 out of range (2 targets)");
}

TEST_F(TargetTest, ADeviceIsRefused) {
  const std::string program = kNegate;
  anvil_compile_args args = Args(program);
  args.device = device_;
  Outcome o = Take(anvil_client_compile_for_target(client_, 0, &args));
  EXPECT_EQ(o.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_NE(o.message.find("anvil_client_compile_for_target: args->device must be NULL"), std::string::npos)
      << o.message;
}

TEST_F(TargetTest, MalformedProgramGivesTheParsersError) {
  const std::string program = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] frobnicate(p)\n}\n";
  Outcome o = CompileFor(0, program);
  EXPECT_EQ(o.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(o.message.rfind("program:4:", 0), 0u) << o.message;
  EXPECT_NE(o.message.find(": error: "), std::string::npos) << o.message;
  // Word for word what anvil_client_compile says.
  anvil_compile_args args = Args(program);
  args.device = device_;
  anvil_executable* exe = nullptr;
  Outcome compiled = Take(anvil_client_compile(client_, &args, &exe));
  EXPECT_EQ(compiled.code, o.code);
  EXPECT_EQ(compiled.message, o.message);
  // A program the verifier refuses, likewise.
  const std::string bad_shape = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[3] negate(p)\n}\n";
  Outcome verified = CompileFor(1, bad_shape);
  EXPECT_EQ(verified.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(verified.message.rfind("program:4:", 0), 0u) << verified.message;
  Outcome format = CompileFor(0, kNegate, "onnx");
  EXPECT_EQ(format.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_NE(format.message.find("anvil_client_compile_for_target: unknown program format 'onnx'"), std::string::npos)
      << format.message;
}

TEST_F(TargetTest, BadArgumentsAreInvalid) {
  size_t n = 0;
  EXPECT_EQ(Take(anvil_client_target_count(nullptr, &n)).code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(Take(anvil_client_target_count(client_, nullptr)).code, ANVIL_INVALID_ARGUMENT);
  const char* s = nullptr;
  EXPECT_EQ(Take(anvil_client_target(client_, 0, nullptr, &s)).code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(Take(anvil_client_target(client_, 0, &s, nullptr)).code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(Take(anvil_client_target(nullptr, 0, &s, &s)).code, ANVIL_INVALID_ARGUMENT);
  const std::string program = kNegate;
  anvil_compile_args args = Args(program);
  EXPECT_EQ(Take(anvil_client_compile_for_target(nullptr, 0, &args)).code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(Take(anvil_client_compile_for_target(client_, 0, nullptr)).code, ANVIL_INVALID_ARGUMENT);
  anvil_compile_args small = args;
  small.struct_size = 8;
  Outcome o = Take(anvil_client_compile_for_target(client_, 0, &small));
  EXPECT_EQ(o.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_NE(o.message.find("struct_size is 8"), std::string::npos) << o.message;
  anvil_compile_args no_format = args;
  no_format.format = nullptr;
  EXPECT_EQ(Take(anvil_client_compile_for_target(client_, 0, &no_format)).code, ANVIL_INVALID_ARGUMENT);
  anvil_compile_args no_program = args;
  no_program.program = nullptr;
  EXPECT_EQ(Take(anvil_client_compile_for_target(client_, 0, &no_program)).code, ANVIL_INVALID_ARGUMENT);
}

// A plugin built against plugin ABI minor 3 (its table ends before
// target_count, though the entries past it are set) and one built against
// minor 0 list no targets; they load and run as before.
TEST_F(TargetTestWithoutPlugin, OlderPluginsHaveNoTargets) {
  ASSERT_EQ(Load("test_minor3").code, ANVIL_OK);
  ASSERT_EQ(Load("test_old").code, ANVIL_OK);
  EXPECT_EQ(TargetCount(), 0u);
  size_t devices = 0;
  ANVIL_ASSERT_OK(anvil_client_device_count(client_, &devices));
  EXPECT_EQ(devices, 4u);
  Outcome o = CompileFor(0, kNegate);
  EXPECT_EQ(o.code, ANVIL_OUT_OF_RANGE);
  EXPECT_EQ(o.message, "anvil_client_compile_for_target: target index 0 out of range (0 targets)");
  // Then the current plugin's targets follow in load order.
  ASSERT_EQ(Load("test").code, ANVIL_OK);
  EXPECT_EQ(TargetCount(), 2u);
  const char* plugin = nullptr;
  const char* name = nullptr;
  ANVIL_ASSERT_OK(anvil_client_target(client_, 0, &plugin, &name));
  EXPECT_STREQ(plugin, "test");
  EXPECT_STREQ(name, "tgt_a");
  EXPECT_EQ(CompileFor(1, kNegate).code, ANVIL_OK);
}

TEST(Target, CompileIsTracedLikeACompile) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("anvil_target_trace_" + std::to_string(getpid()) + ".json"))
                               .string();
  anvil_client_options options{};
  options.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE;
  options.plugin_path = ANVIL_TEST_PLUGIN_DIR;
  options.load_all_plugins = 0;
  options.trace_path = path.c_str();
  options.cache_dir = "";
  anvil_client* client = nullptr;
  ANVIL_ASSERT_OK(anvil_client_create(&options, &client));
  anvil_plugin_load_args load{};
  load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
  load.name = "test";
  ANVIL_ASSERT_OK(anvil_client_load_plugin(client, &load));
  const std::string program = kNegate;
  anvil_compile_args args = Args(program);
  ANVIL_EXPECT_OK(anvil_client_compile_for_target(client, 1, &args));
  ANVIL_ASSERT_OK(anvil_client_destroy(client));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string trace = text.str();
  std::filesystem::remove(path);
  for (const char* span : {"\"anvil_client_compile_for_target\"", "\"parse\"", "\"verify\"", "\"canonicalize\"",
                           "\"print canonical text\"", "\"plugin compile\"", "\"target\":\"tgt_b\""}) {
    EXPECT_NE(trace.find(span), std::string::npos) << span << " in " << trace;
  }
}

}  // namespace
}  // namespace anvil::testing
