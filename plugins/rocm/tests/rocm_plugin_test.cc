// libanvil_plugin_rocm.so through the plugin ABI, as core loads it: zero
// devices here (or the GPUs there are), the compile-only targets (the gfx11
// stand-in found beside the plugin) and a program compiled for each.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include "anvil/anvil_plugin.h"

namespace {

struct Plugin {
  const anvil_plugin_api* api = nullptr;
  anvil_plugin_context* context = nullptr;
  Plugin() {
    void* handle = dlopen(ANVIL_ROCM_PLUGIN, RTLD_NOW | RTLD_LOCAL);  // never closed, as core keeps plugins
    if (!handle) return;
    auto get = reinterpret_cast<const anvil_plugin_api* (*)()>(dlsym(handle, "anvil_plugin_get_api"));
    api = get ? get() : nullptr;
    static anvil_plugin_host_executor host{};
    host.struct_size = ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_host_executor, enqueue);
    host.enqueue = [](void*, void (*fn)(void*), void* arg) { std::thread(fn, arg).detach(); };
    if (api && api->context_create(&host, &context)) context = nullptr;
  }
  ~Plugin() {
    if (context) api->context_destroy(context);
  }
  // "" for no error; else the message (and the error freed).
  std::string Message(anvil_plugin_error* error) const {
    if (!error) return "";
    std::string m = api->error_message(error);
    api->error_destroy(error);
    return m;
  }
};

const char* kProgram = R"(HloModule m
ENTRY e {
  x = f32[4,6] parameter(0)
  y = f32[6,3] parameter(1)
  d = f32[4,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[4,3] tanh(d)
})";

TEST(RocmPlugin, ListsTheCompileOnlyTargetsAndCompilesForEach) {
  Plugin plugin;
  ASSERT_NE(plugin.context, nullptr) << dlerror();
  size_t targets = 0;
  ASSERT_EQ(plugin.Message(plugin.api->target_count(plugin.context, &targets)), "");
  ASSERT_EQ(targets, 2u);
  const char* names[2] = {};
  for (size_t t = 0; t < targets; ++t) {
    ASSERT_EQ(plugin.Message(plugin.api->target_name(plugin.context, t, &names[t])), "");
    EXPECT_EQ(plugin.Message(plugin.api->target_compile(plugin.context, t, kProgram, strlen(kProgram), "")), "")
        << names[t];
  }
  EXPECT_STREQ(names[0], "gfx90a");
  EXPECT_STREQ(names[1], "gfx1100");
  EXPECT_NE(plugin.Message(plugin.api->target_name(plugin.context, 2, &names[0])).find("2 compile-only targets"),
            std::string::npos);
  const char* bad = "HloModule m\nENTRY e {\n  a = f32[4] parameter(0\n}\n";
  EXPECT_NE(plugin.Message(plugin.api->target_compile(plugin.context, 0, bad, strlen(bad), "")).find("canonical:"),
            std::string::npos);
}

TEST(RocmPlugin, CompilingForADeviceItDoesNotHaveSaysHowManyItHasAndWhy) {
  Plugin plugin;
  ASSERT_NE(plugin.context, nullptr) << dlerror();
  size_t devices = 0;
  ASSERT_EQ(plugin.Message(plugin.api->device_count(plugin.context, &devices)), "");
  anvil_plugin_executable* executable = nullptr;
  std::string m = plugin.Message(
      plugin.api->executable_compile(plugin.context, devices, kProgram, strlen(kProgram), "", &executable));
  EXPECT_NE(m.find("the ROCm plugin has " + std::to_string(devices) + " devices"), std::string::npos) << m;
  if (devices == 0) {
    EXPECT_NE(m.find("no AMD GPU"), std::string::npos) << m;  // the reason, here
  }
}

}  // namespace
