// HipRuntime on this machine's libamdhip64 (registered only where CMake
// found one): every entry point's name is checked against the real
// library's exports, and without an AMD GPU the reason says so.
#include <gtest/gtest.h>

#include "plugins/rocm/hip_runtime.h"

namespace anvil::rocm {
namespace {

TEST(HipRealRuntimeTest, ResolvesEveryEntryPointAndListsDevicesOrSaysWhy) {
  HipRuntime runtime({ANVIL_HIP_RUNTIME_LIBRARY});
  ASSERT_TRUE(runtime.loaded()) << runtime.DeviceList().reason;
  const HipDeviceList& list = runtime.DeviceList();
  for (const HipDeviceInfo& device : list.devices) {
    EXPECT_FALSE(device.name.empty());
    EXPECT_GE(device.major, 8) << device.name;
    EXPECT_GT(device.total_memory, 0u) << device.name;
  }
  if (list.devices.empty()) {
    EXPECT_TRUE(list.reason.find("no AMD GPU") != std::string::npos) << list.reason;
  } else {
    EXPECT_EQ(list.reason, "");
  }
  // The process's runtime is the same library, found by soname.
  EXPECT_EQ(HipRuntime::Get().DeviceList().devices.size(), list.devices.size());
}

}  // namespace
}  // namespace anvil::rocm
