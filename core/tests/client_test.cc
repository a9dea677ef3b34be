// Client lifecycle, plugin loading (good, missing, broken, other versions),
// devices, and argument checking through the C ABI.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "anvil/anvil_plugin.h"
#include "core/tests/test_util.h"

namespace anvil::testing {
namespace {

anvil_client* NewClient(const char* plugin_path, int load_all) {
  anvil_client_options options{};
  options.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE;
  options.plugin_path = plugin_path;
  options.load_all_plugins = load_all;
  anvil_client* client = nullptr;
  Outcome o = Take(anvil_client_create(&options, &client));
  EXPECT_EQ(o.code, ANVIL_OK) << o.message;
  return client;
}

Outcome Load(anvil_client* client, const char* name, const char* path) {
  anvil_plugin_load_args args{};
  args.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
  args.name = name;
  args.path = path;
  return Take(anvil_client_load_plugin(client, &args));
}

// The threads of this process, from /proc.
size_t ThreadCount() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// ThreadCount once it has settled: a joined thread can stay listed in /proc
// for a moment after its join returns (the kernel wakes the joiner before it
// reaps the thread), which a loaded machine makes visible. Waits until `want`
// (or, with none, until three reads 10 ms apart agree), for 5 s at most.
size_t SettledThreadCount(std::optional<size_t> want = std::nullopt) {
  size_t last = ThreadCount(), same = 0;
  for (int k = 0; k < 500; ++k) {
    if (want ? last == *want : same == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const size_t now = ThreadCount();
    same = now == last ? same + 1 : 0;
    last = now;
  }
  return last;
}

// The last client's destroy waits for the host threads it started: a
// process done with Anvil has none of them left running.
TEST(Client, TheLastClientLeavesNoThreadBehind) {
  // ThreadSanitizer starts a thread of its own at the first thread a
  // process creates: have that happen before counting.
  std::thread([] {}).join();
  const size_t before = SettledThreadCount();
  anvil_client_options options{};
  options.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE;
  options.plugin_path = ANVIL_TEST_PLUGIN_DIR;
  options.load_all_plugins = 0;
  anvil_client* client = nullptr;
  ANVIL_ASSERT_OK(anvil_client_create(&options, &client));
  anvil_plugin_load_args load{};
  load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
  load.name = "test";
  ANVIL_ASSERT_OK(anvil_client_load_plugin(client, &load));
  anvil_device* device = nullptr;
  ANVIL_ASSERT_OK(anvil_client_device(client, 0, &device));
  // A transfer runs on the host threads, so they exist.
  const float data[4] = {1, 2, 3, 4};
  const int64_t dims[] = {4};
  anvil_buffer_from_host_args args{};
  args.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
  args.device = device;
  args.data = data;
  args.element_type = ANVIL_F32;
  args.dims = dims;
  args.num_dims = 1;
  anvil_buffer* buffer = nullptr;
  ANVIL_ASSERT_OK(anvil_buffer_from_host(client, &args, &buffer, nullptr));
  EXPECT_GT(ThreadCount(), before);
  ANVIL_ASSERT_OK(anvil_buffer_destroy(buffer));
  ANVIL_ASSERT_OK(anvil_client_destroy(client));
  EXPECT_EQ(SettledThreadCount(before), before);
}

TEST(Client, VersionAndLifecycle) {
  anvil_version v = anvil_get_abi_version();
  EXPECT_EQ(v.major, static_cast<uint32_t>(ANVIL_ABI_MAJOR));
  EXPECT_EQ(v.minor, static_cast<uint32_t>(ANVIL_ABI_MINOR));
  anvil_client* client = NewClient(ANVIL_TEST_PLUGIN_DIR, 0);
  size_t devices = 99;
  ANVIL_EXPECT_OK(anvil_client_device_count(client, &devices));
  EXPECT_EQ(devices, 0u);
  ANVIL_EXPECT_OK(anvil_client_destroy(client));
  ANVIL_EXPECT_OK(anvil_client_destroy(nullptr));
}

TEST(Client, LoadAllListsPluginsAndFailures) {
  anvil_client* client = NewClient(ANVIL_TEST_PLUGIN_DIR, 1);
  size_t plugins = 0, failures = 0;
  ANVIL_ASSERT_OK(anvil_client_plugin_count(client, &plugins));
  ANVIL_ASSERT_OK(anvil_client_plugin_failure_count(client, &failures));
  EXPECT_EQ(plugins, 3u);   // test, test_minor3, test_old
  EXPECT_EQ(failures, 3u);  // garbage, nosymbol, test_major
  std::string reasons;
  for (size_t i = 0; i < failures; ++i) {
    const char* path = nullptr;
    const char* reason = nullptr;
    ANVIL_ASSERT_OK(anvil_client_plugin_failure(client, i, &path, &reason));
    reasons += std::string(reason) + "\n";
  }
  EXPECT_NE(reasons.find("libanvil_plugin_garbage.so: cannot load"), std::string::npos) << reasons;
  EXPECT_NE(reasons.find("libanvil_plugin_nosymbol.so: not an Anvil plugin: it does not export anvil_plugin_get_api"),
            std::string::npos)
      << reasons;
  EXPECT_NE(reasons.find("plugin ABI 99." + std::to_string(ANVIL_PLUGIN_ABI_MINOR) + " is incompatible with this core's plugin ABI 0." + std::to_string(ANVIL_PLUGIN_ABI_MINOR)), std::string::npos)
      << reasons;
  size_t devices = 0;
  ANVIL_ASSERT_OK(anvil_client_device_count(client, &devices));
  EXPECT_EQ(devices, 6u);
  ANVIL_EXPECT_OK(anvil_client_destroy(client));
}

TEST(Client, LoadErrorsNameTheFileAndTheReason) {
  anvil_client* client = NewClient(ANVIL_TEST_PLUGIN_DIR, 0);
  Outcome missing = Load(client, "nonexistent", nullptr);
  EXPECT_EQ(missing.code, ANVIL_NOT_FOUND);
  EXPECT_NE(missing.message.find("libanvil_plugin_nonexistent.so is not in the search path"), std::string::npos)
      << missing.message;
  EXPECT_EQ(Load(client, nullptr, "/no/such/file.so").code, ANVIL_NOT_FOUND);
  Outcome nosymbol = Load(client, "nosymbol", nullptr);
  EXPECT_EQ(nosymbol.code, ANVIL_FAILED_PRECONDITION);
  EXPECT_NE(nosymbol.message.find("does not export anvil_plugin_get_api"), std::string::npos) << nosymbol.message;
  Outcome garbage = Load(client, "garbage", nullptr);
  EXPECT_EQ(garbage.code, ANVIL_FAILED_PRECONDITION);
  // The loader's own reason, not just an error code.
  EXPECT_NE(garbage.message.find("libanvil_plugin_garbage.so: cannot load: "), std::string::npos) << garbage.message;
  EXPECT_NE(garbage.message.find("invalid ELF header"), std::string::npos) << garbage.message;
  Outcome major = Load(client, "test_major", nullptr);
  EXPECT_EQ(major.code, ANVIL_FAILED_PRECONDITION);
  EXPECT_NE(major.message.find("plugin ABI 99." + std::to_string(ANVIL_PLUGIN_ABI_MINOR) + " is incompatible with this core's plugin ABI 0." + std::to_string(ANVIL_PLUGIN_ABI_MINOR)), std::string::npos)
      << major.message;
  EXPECT_EQ(Load(client, "test", nullptr).code, ANVIL_OK);
  Outcome twice = Load(client, "test", nullptr);
  EXPECT_EQ(twice.code, ANVIL_ALREADY_EXISTS) << twice.message;
  EXPECT_EQ(Load(client, "test", "/also/a/path").code, ANVIL_INVALID_ARGUMENT);
  ANVIL_EXPECT_OK(anvil_client_destroy(client));
}

TEST(Client, DevicesAndProperties) {
  anvil_client* client = NewClient(ANVIL_TEST_PLUGIN_DIR, 0);
  ASSERT_EQ(Load(client, "test", nullptr).code, ANVIL_OK);
  anvil_device* device = nullptr;
  ANVIL_ASSERT_OK(anvil_client_device(client, 1, &device));
  anvil_device_properties p{};
  p.struct_size = ANVIL_DEVICE_PROPERTIES_STRUCT_SIZE;
  ANVIL_ASSERT_OK(anvil_device_get_properties(device, &p));
  EXPECT_STREQ(p.plugin, "test");
  EXPECT_STREQ(p.name, "test-device-1");
  EXPECT_EQ(p.index_in_plugin, 1);
  // A caller built against a header with fewer fields gets only those.
  anvil_device_properties old{};
  old.struct_size = offsetof(anvil_device_properties, kind);
  old.memory_bytes = 7;
  ANVIL_ASSERT_OK(anvil_device_get_properties(device, &old));
  EXPECT_STREQ(old.plugin, "test");
  EXPECT_EQ(old.memory_bytes, 7u);
  EXPECT_EQ(Take(anvil_client_device(client, 9, &device)).code, ANVIL_OUT_OF_RANGE);
  ANVIL_EXPECT_OK(anvil_client_destroy(client));
}

TEST(Client, NullHandlesAndStructSizesAreInvalidArguments) {
  anvil_client* client = nullptr;
  anvil_client_options bad{};
  bad.struct_size = 3;
  EXPECT_EQ(Take(anvil_client_create(&bad, &client)).code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(Take(anvil_client_create(nullptr, nullptr)).code, ANVIL_INVALID_ARGUMENT);
  size_t n = 0;
  EXPECT_EQ(Take(anvil_client_device_count(nullptr, &n)).code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(Take(anvil_client_load_plugin(nullptr, nullptr)).code, ANVIL_INVALID_ARGUMENT);
  client = NewClient(ANVIL_TEST_PLUGIN_DIR, 0);
  anvil_plugin_load_args load{};
  load.struct_size = 1;
  load.name = "test";
  Outcome small = Take(anvil_client_load_plugin(client, &load));
  EXPECT_EQ(small.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_NE(small.message.find("struct_size is 1"), std::string::npos) << small.message;
  anvil_compile_args compile{};
  compile.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
  anvil_executable* exe = nullptr;
  EXPECT_EQ(Take(anvil_client_compile(client, &compile, &exe)).code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(Take(anvil_buffer_to_host(nullptr, nullptr, 0, nullptr)).code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(Take(anvil_event_await(nullptr)).code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(Take(anvil_executable_execute(nullptr, nullptr, nullptr, nullptr)).code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(anvil_status_get_code(nullptr), ANVIL_OK);
  EXPECT_STREQ(anvil_status_get_message(nullptr), "");
  ANVIL_EXPECT_OK(anvil_buffer_destroy(nullptr));
  ANVIL_EXPECT_OK(anvil_event_destroy(nullptr));
  ANVIL_EXPECT_OK(anvil_executable_destroy(nullptr));
  ANVIL_EXPECT_OK(anvil_client_destroy(client));
}

TEST(Client, RefusesToGoBeforeItsBuffersAndExecutables) {
  anvil_client* client = NewClient(ANVIL_TEST_PLUGIN_DIR, 0);
  ASSERT_EQ(Load(client, "test", nullptr).code, ANVIL_OK);
  anvil_device* device = nullptr;
  ANVIL_ASSERT_OK(anvil_client_device(client, 0, &device));
  float value = 1;
  int64_t dims[] = {1};
  anvil_buffer_from_host_args args{};
  args.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
  args.device = device;
  args.data = &value;
  args.element_type = ANVIL_F32;
  args.dims = dims;
  args.num_dims = 1;
  anvil_buffer* buffer = nullptr;
  ANVIL_ASSERT_OK(anvil_buffer_from_host(client, &args, &buffer, nullptr));
  Outcome early = Take(anvil_client_destroy(client));
  EXPECT_EQ(early.code, ANVIL_FAILED_PRECONDITION);
  EXPECT_EQ(early.message, "anvil_client_destroy: destroy the client's 1 buffer(s) and 0 executable(s) first");
  ANVIL_EXPECT_OK(anvil_buffer_destroy(buffer));
  ANVIL_EXPECT_OK(anvil_client_destroy(client));
}

// A plugin built against an older minor has a shorter table: what it lacks is
// UNIMPLEMENTED, named, and nothing crashes.
TEST(Client, OlderMinorPluginAnswersUnimplemented) {
  anvil_client* client = NewClient(ANVIL_TEST_PLUGIN_DIR, 0);
  ASSERT_EQ(Load(client, "test_old", nullptr).code, ANVIL_OK);
  anvil_device* device = nullptr;
  ANVIL_ASSERT_OK(anvil_client_device(client, 0, &device));
  const std::string hlo = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n";
  anvil_compile_args args{};
  args.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
  args.program = hlo.data();
  args.program_size = hlo.size();
  args.format = "hlo";
  args.device = device;
  anvil_executable* exe = nullptr;
  ANVIL_ASSERT_OK(anvil_client_compile(client, &args, &exe));
  char* bytes = nullptr;
  size_t size = 0;
  Outcome serialized = Take(anvil_executable_serialize(exe, &bytes, &size));
  EXPECT_EQ(serialized.code, ANVIL_UNIMPLEMENTED);
  EXPECT_EQ(serialized.message, "plugin 'test_old' (ABI 0.0) predates executable_serialize");
  ANVIL_EXPECT_OK(anvil_executable_destroy(exe));
  ANVIL_EXPECT_OK(anvil_client_destroy(client));
}

}  // namespace
}  // namespace anvil::testing
