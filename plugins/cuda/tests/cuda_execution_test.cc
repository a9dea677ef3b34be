// The CUDA plugin's execution path through the C ABI, on the host-memory
// stand-in driver (host_memory_cuda_driver.cc, named by
// ANVIL_CUDA_DRIVER_LIBRARY): programs compile with the real NVRTC for the
// stand-in's sm_90 and their cubins load and run
// (plugins/gpu/tests/stand_in_execution.h says what is checked).
// scripts/device_check.sh runs the corpus on a real GPU.
#include <gtest/gtest.h>

#include <cstdlib>

#include "plugins/gpu/tests/stand_in_execution.h"

namespace {

using namespace anvil::gpu::testing;

// The NVRTC the build found, before the plugin (and its one NVRTC search)
// is loaded by the first test.
const bool kNvrtcPinned = setenv("ANVIL_NVRTC_LIBRARY", ANVIL_TEST_NVRTC_LIBRARY, 1) == 0;

const StandIn kCuda{"cuda", "ANVIL_CUDA_DRIVER_LIBRARY", "anvil_fake_cuda", "the CUDA plugin"};

TEST(CudaExecution, TheStandInIsTheOneDevice) {
  ASSERT_TRUE(kNvrtcPinned);
  ExpectTheStandInIsTheOneDevice(kCuda);
}

TEST(CudaExecution, ValuesMovedByCopiesArriveAndEveryLaunchSawLiveMemory) {
  // exp; the loop's condition
  ExpectCopiesArriveAndNothingIsLeft(kCuda, {{kPassThrough, 2}, {kCountedLoop, 1}}, 2);
}

TEST(CudaExecution, ExecutionsQueueWhileTheDeviceIsBusy) { ExpectExecutionsQueueWhileTheDeviceIsBusy(kCuda); }

TEST(CudaExecution, ARepeatedExecutionReusesItsArenaAndTables) { ExpectARepeatedExecutionReusesItsArenaAndTables(kCuda); }

TEST(CudaExecution, ASecondClientLoadsTheCachedCubinsAndRunsThem) {
  ExpectASecondClientLoadsTheCachedCodeAndRunsIt(kCuda);
}

TEST(CudaExecution, AnInputOfTheWrongSizeIsRefused) { ExpectAnInputOfTheWrongSizeIsRefused(kCuda); }

TEST(CudaExecution, AProgramWithoutKernelsForItsTypesSaysWhich) {
  ExpectAProgramWithoutKernelsForItsTypesSaysWhich(kCuda);
}

}  // namespace
