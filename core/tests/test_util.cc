#include "core/tests/test_util.h"

#include <dlfcn.h>

#include <chrono>
#include <thread>

namespace anvil::testing {

Outcome Take(anvil_status* status) {
  Outcome o{anvil_status_get_code(status), anvil_status_get_message(status)};
  anvil_status_free(status);
  return o;
}

int64_t PluginLiveMemory() {
  void* handle = dlopen(ANVIL_TEST_PLUGIN_PATH, RTLD_NOW | RTLD_NOLOAD);
  if (!handle) return -1;
  auto live = reinterpret_cast<int64_t (*)()>(dlsym(handle, "anvil_test_plugin_live_memory"));
  int64_t n = live ? live() : -1;
  dlclose(handle);
  return n;
}

int64_t SettledLiveMemory(int64_t expected) {
  int64_t n = PluginLiveMemory();
  for (int k = 0; k < 10000 && n != expected; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = PluginLiveMemory();
  }
  return n;
}

void ClientTest::SetUp() {
  anvil_client_options options{};
  options.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE;
  options.plugin_path = ANVIL_TEST_PLUGIN_DIR;
  options.load_all_plugins = 0;
  options.num_threads = 4;
  ANVIL_ASSERT_OK(anvil_client_create(&options, &client_));
  if (!load_test_plugin_) return;
  anvil_plugin_load_args load{};
  load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
  load.name = "test";
  ANVIL_ASSERT_OK(anvil_client_load_plugin(client_, &load));
  ANVIL_ASSERT_OK(anvil_client_device(client_, 0, &device_));
  SetFaults("");
}

void ClientTest::TearDown() {
  if (load_test_plugin_) SetFaults("");
  ANVIL_EXPECT_OK(anvil_client_destroy(client_));
}

void ClientTest::SetFaults(const char* spec) {
  // The client loaded the plugin already; this finds the same instance.
  void* handle = dlopen(ANVIL_TEST_PLUGIN_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto set = reinterpret_cast<void (*)(const char*)>(dlsym(handle, "anvil_test_plugin_set_faults"));
  ASSERT_NE(set, nullptr);
  set(spec);
  dlclose(handle);
}

anvil_buffer* ClientTest::FromHost(const std::vector<float>& values, std::vector<int64_t> dims,
                                   anvil_device* device) {
  anvil_buffer_from_host_args args{};
  args.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
  args.device = device ? device : device_;
  args.data = values.data();
  args.element_type = ANVIL_F32;
  args.dims = dims.data();
  args.num_dims = dims.size();
  anvil_buffer* buffer = nullptr;
  Outcome o = Take(anvil_buffer_from_host(client_, &args, &buffer, nullptr));
  EXPECT_EQ(o.code, ANVIL_OK) << o.message;
  return buffer;
}

std::vector<float> ClientTest::ToHost(anvil_buffer* buffer) {
  size_t bytes = 0;
  EXPECT_EQ(Take(anvil_buffer_byte_size(buffer, &bytes)).code, ANVIL_OK);
  std::vector<float> out(bytes / sizeof(float));
  anvil_event* done = nullptr;
  Outcome started = Take(anvil_buffer_to_host(buffer, out.data(), bytes, &done));
  EXPECT_EQ(started.code, ANVIL_OK) << started.message;
  if (started.code != ANVIL_OK) return {};
  Outcome finished = Take(anvil_event_await(done));
  anvil_event_destroy(done);
  EXPECT_EQ(finished.code, ANVIL_OK) << finished.message;
  return out;
}

anvil_executable* ClientTest::Compile(const std::string& hlo) {
  anvil_compile_args args{};
  args.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
  args.program = hlo.data();
  args.program_size = hlo.size();
  args.format = "hlo";
  args.device = device_;
  anvil_executable* exe = nullptr;
  Outcome o = Take(anvil_client_compile(client_, &args, &exe));
  EXPECT_EQ(o.code, ANVIL_OK) << o.message;
  return exe;
}

}  // namespace anvil::testing
