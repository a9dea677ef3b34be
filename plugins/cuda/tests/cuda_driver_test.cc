// CudaDriver on this machine's driver, whatever it is, and on fake drivers
// (fake_cuda_driver.cc) for the enumeration paths a machine without a GPU
// never takes.
#include "plugins/cuda/cuda_driver.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace anvil::cuda {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CudaDriverTest, ListsDevicesOrSaysWhyThereAreNone) {
  const CudaDeviceList& list = CudaDriver::Get().DeviceList();
  for (const CudaDeviceInfo& device : list.devices) {
    EXPECT_FALSE(device.name.empty());
    EXPECT_GE(device.compute_major, 3) << device.name;
    EXPECT_GT(device.total_memory, 0u) << device.name;
  }
  if (list.devices.empty()) {
    EXPECT_FALSE(list.reason.empty());
    // Asked on its own: where the loader has no libcuda.so.1, the reason
    // must say that is what is missing.
    if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
      EXPECT_TRUE(list.reason.starts_with("libcuda.so.1 not found (libcuda.so.1: ")) << list.reason;
      EXPECT_TRUE(Contains(list.reason, "): no NVIDIA driver is installed")) << list.reason;
    }
  } else {
    EXPECT_TRUE(list.reason.empty()) << list.reason;
    EXPECT_TRUE(CudaDriver::Get().loaded());
  }
}

TEST(CudaDriverTest, EveryThreadGetsTheOneProcessDriver) {
  std::vector<const CudaDriver*> seen(8);
  std::vector<std::thread> threads;
  for (auto& slot : seen) threads.emplace_back([&slot] { slot = &CudaDriver::Get(); });
  for (auto& thread : threads) thread.join();
  for (const CudaDriver* driver : seen) EXPECT_EQ(driver, &CudaDriver::Get());
}

TEST(CudaDriverTest, AMissingLibraryNamesItself) {
  CudaDriver driver("/nonexistent/libcuda.so.1");
  EXPECT_FALSE(driver.loaded());
  EXPECT_TRUE(driver.DeviceList().devices.empty());
  const std::string& reason = driver.DeviceList().reason;
  EXPECT_TRUE(reason.starts_with("/nonexistent/libcuda.so.1 not found (/nonexistent/libcuda.so.1: ")) << reason;
  EXPECT_TRUE(Contains(reason, "): no NVIDIA driver is installed")) << reason;
}

// Each test sets the variables the fake reads; ctest runs each in its own
// process, and a run of the whole binary resets them.
class FakeCudaDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("ANVIL_FAKE_CUDA_INIT");
    unsetenv("ANVIL_FAKE_CUDA_DEVICES");
  }
};

TEST_F(FakeCudaDriverTest, ListsEachDeviceWithItsComputeCapabilityAndMemory) {
  CudaDriver driver(ANVIL_FAKE_CUDA_LIBRARY);
  const CudaDeviceList& list = driver.DeviceList();
  ASSERT_TRUE(driver.loaded()) << list.reason;
  EXPECT_EQ(list.reason, "");
  EXPECT_EQ(list.driver_version, 13000);
  ASSERT_EQ(list.devices.size(), 2u);
  EXPECT_EQ(list.devices[0].name, "Fake A100");
  EXPECT_EQ(list.devices[0].sm(), 80);
  EXPECT_EQ(list.devices[0].total_memory, 40ull << 30);
  EXPECT_EQ(list.devices[1].name, "Fake H100");
  EXPECT_EQ(list.devices[1].ordinal, 1);
  EXPECT_EQ(list.devices[1].compute_major, 9);
  EXPECT_EQ(list.devices[1].compute_minor, 0);
  EXPECT_EQ(list.devices[1].total_memory, 80ull << 30);
}

TEST_F(FakeCudaDriverTest, ZeroDevicesIsSaidInWords) {
  setenv("ANVIL_FAKE_CUDA_DEVICES", "0", 1);
  CudaDriver driver(ANVIL_FAKE_CUDA_LIBRARY);
  EXPECT_TRUE(driver.loaded());
  EXPECT_TRUE(driver.DeviceList().devices.empty());
  EXPECT_EQ(driver.DeviceList().reason, "the driver reports no CUDA device");
}

TEST_F(FakeCudaDriverTest, ACuInitFailureGivesTheDriversNameAndText) {
  setenv("ANVIL_FAKE_CUDA_INIT", "100", 1);
  CudaDriver driver(ANVIL_FAKE_CUDA_LIBRARY);
  EXPECT_TRUE(driver.DeviceList().devices.empty());
  EXPECT_EQ(driver.DeviceList().reason,
            "cuInit failed: CUDA_ERROR_NO_DEVICE (fake: no CUDA-capable device is detected)");
}

TEST_F(FakeCudaDriverTest, AMissingEntryPointIsNamed) {
  CudaDriver driver(ANVIL_FAKE_CUDA_WITHOUT_LAUNCH_LIBRARY);
  EXPECT_FALSE(driver.loaded());
  EXPECT_TRUE(driver.DeviceList().devices.empty());
  const std::string& reason = driver.DeviceList().reason;
  EXPECT_TRUE(Contains(reason, "libanvil_fake_cuda_without_launch.so has no cuLaunchKernel: the NVIDIA driver is "
                               "older than this runtime supports"))
      << reason;
}

TEST_F(FakeCudaDriverTest, CallErrorsNameTheCallTheErrorAndItsText) {
  CudaDriver driver(ANVIL_FAKE_CUDA_LIBRARY);
  ASSERT_TRUE(driver.loaded());
  EXPECT_TRUE(driver.Check(kCudaSuccess, "cuMemAlloc").ok());
  CUdeviceptr pointer = 0;
  hlo::Status s = driver.Check(driver.api().cuMemAlloc(&pointer, 1 << 20), "cuMemAlloc");
  EXPECT_EQ(s.code(), hlo::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY: fake: out of memory");
  // A code the driver cannot name falls back to our table, then to the number.
  s = driver.Check(35, "cuInit");
  EXPECT_EQ(s.code(), hlo::StatusCode::kInternal);
  EXPECT_EQ(s.message(),
            "cuInit: CUDA_ERROR_INSUFFICIENT_DRIVER: CUDA driver version is insufficient for CUDA runtime version");
  EXPECT_EQ(driver.Check(12345, "cuStreamCreate").message(), "cuStreamCreate: CUresult 12345: unrecognised error code");
}

}  // namespace
}  // namespace anvil::cuda
