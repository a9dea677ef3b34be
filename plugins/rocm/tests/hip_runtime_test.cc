// HipRuntime on fake runtimes (fake_hip_runtime.cc) for the enumeration
// paths a machine without a GPU never takes, and on a missing library.
#include "plugins/rocm/hip_runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace anvil::rocm {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(HipRuntimeTest, EveryThreadGetsTheOneProcessRuntime) {
  std::vector<const HipRuntime*> seen(8);
  std::vector<std::thread> threads;
  for (auto& slot : seen) threads.emplace_back([&slot] { slot = &HipRuntime::Get(); });
  for (auto& thread : threads) thread.join();
  for (const HipRuntime* runtime : seen) EXPECT_EQ(runtime, &HipRuntime::Get());
}

TEST(HipRuntimeTest, AMissingLibraryNamesTheFirstOneTried) {
  HipRuntime runtime({"/nonexistent/libamdhip64.so.5", "/nonexistent/libamdhip64.so"});
  EXPECT_FALSE(runtime.loaded());
  EXPECT_TRUE(runtime.DeviceList().devices.empty());
  const std::string& reason = runtime.DeviceList().reason;
  EXPECT_TRUE(reason.starts_with("/nonexistent/libamdhip64.so.5 not found (/nonexistent/libamdhip64.so.5: ")) << reason;
  EXPECT_TRUE(Contains(reason, "): ROCm's HIP runtime is not installed")) << reason;
}

TEST(HipRuntimeTest, TheNextLibraryIsTriedWhenTheFirstIsMissing) {
  HipRuntime runtime({"/nonexistent/libamdhip64.so.5", ANVIL_FAKE_HIP_LIBRARY});
  EXPECT_TRUE(runtime.loaded()) << runtime.DeviceList().reason;
}

class FakeHipRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("ANVIL_FAKE_HIP_INIT");
    unsetenv("ANVIL_FAKE_HIP_DEVICES");
  }
};

TEST_F(FakeHipRuntimeTest, ListsEachDeviceWithItsGfxVersionAndMemory) {
  HipRuntime runtime({ANVIL_FAKE_HIP_LIBRARY});
  const HipDeviceList& list = runtime.DeviceList();
  ASSERT_TRUE(runtime.loaded()) << list.reason;
  EXPECT_EQ(list.reason, "");
  EXPECT_EQ(list.runtime_version, 50221153);
  ASSERT_EQ(list.devices.size(), 2u);
  EXPECT_EQ(list.devices[0].name, "Fake MI210");
  EXPECT_EQ(list.devices[0].major, 9);
  EXPECT_EQ(list.devices[0].total_memory, 64ull << 30);
  EXPECT_EQ(list.devices[1].name, "Fake RX 7900");
  EXPECT_EQ(list.devices[1].ordinal, 1);
  EXPECT_EQ(list.devices[1].major, 11);
  EXPECT_EQ(list.devices[1].minor, 0);
  EXPECT_EQ(list.devices[1].total_memory, 24ull << 30);
}

TEST_F(FakeHipRuntimeTest, ZeroDevicesIsSaidInWords) {
  setenv("ANVIL_FAKE_HIP_DEVICES", "0", 1);
  HipRuntime runtime({ANVIL_FAKE_HIP_LIBRARY});
  EXPECT_TRUE(runtime.loaded());
  EXPECT_TRUE(runtime.DeviceList().devices.empty());
  EXPECT_EQ(runtime.DeviceList().reason, "no AMD GPU: the HIP runtime lists none");
}

TEST_F(FakeHipRuntimeTest, AHipInitFailureSaysThereIsNoAmdGpu) {
  setenv("ANVIL_FAKE_HIP_INIT", "101", 1);
  HipRuntime runtime({ANVIL_FAKE_HIP_LIBRARY});
  EXPECT_TRUE(runtime.DeviceList().devices.empty());
  EXPECT_EQ(runtime.DeviceList().reason,
            "hipInit failed: hipErrorInvalidDevice: no AMD GPU (or /dev/kfd is missing or not accessible to this "
            "user)");
  setenv("ANVIL_FAKE_HIP_INIT", "100", 1);
  HipRuntime again({ANVIL_FAKE_HIP_LIBRARY});
  EXPECT_TRUE(again.DeviceList().reason.starts_with(
      "hipInit failed: hipErrorNoDevice (fake: no ROCm-capable device is detected): no AMD GPU"))
      << again.DeviceList().reason;
}

TEST_F(FakeHipRuntimeTest, AMissingEntryPointIsNamed) {
  HipRuntime runtime({ANVIL_FAKE_HIP_WITHOUT_LAUNCH_LIBRARY});
  EXPECT_FALSE(runtime.loaded());
  EXPECT_TRUE(runtime.DeviceList().devices.empty());
  const std::string& reason = runtime.DeviceList().reason;
  EXPECT_TRUE(Contains(reason, "libanvil_fake_hip_without_launch.so has no hipModuleLaunchKernel: the HIP runtime is "
                               "older than this plugin supports"))
      << reason;
}

TEST_F(FakeHipRuntimeTest, CallErrorsNameTheCallTheErrorAndItsText) {
  HipRuntime runtime({ANVIL_FAKE_HIP_LIBRARY});
  ASSERT_TRUE(runtime.loaded());
  EXPECT_TRUE(runtime.Check(kHipSuccess, "hipMalloc").ok());
  void* pointer = nullptr;
  hlo::Status s = runtime.Check(runtime.api().hipMalloc(&pointer, 1 << 20), "hipMalloc");
  EXPECT_EQ(s.code(), hlo::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "hipMalloc: hipErrorOutOfMemory: fake: out of memory");
  EXPECT_EQ(runtime.Check(12345, "hipFree").message(), "hipFree: hipErrorUnknown: unrecognised error code");
}

}  // namespace
}  // namespace anvil::rocm
