// The ROCm plugin's execution path through the C ABI, on the host-memory
// stand-in runtime (host_memory_hip_runtime.cc, named by
// ANVIL_HIP_RUNTIME_LIBRARY): programs compile with the real clang for the
// stand-in's gfx90a (which the test topology, tests/kfd_nodes, says it is)
// and their code objects load and run (plugins/gpu/tests/stand_in_execution.h
// says what is checked). No AMD GPU is at hand.
#include <gtest/gtest.h>

#include <cstdlib>

#include "plugins/gpu/tests/stand_in_execution.h"

namespace {

using namespace anvil::gpu::testing;

// The stand-in's topology, before the plugin (and the HIP runtime's one
// enumeration) is loaded by the first test.
const bool kTopologySet = setenv("ANVIL_KFD_TOPOLOGY", ANVIL_TEST_KFD_NODES, 1) == 0;

const StandIn kRocm{"rocm", "ANVIL_HIP_RUNTIME_LIBRARY", "anvil_fake_hip", "the ROCm plugin"};

TEST(RocmExecution, TheStandInIsTheOneDevice) {
  ASSERT_TRUE(kTopologySet);
  ExpectTheStandInIsTheOneDevice(kRocm);
}

// clang puts several kernels in one code object, each its own entry: a
// program of several kernels loads them all by name and launches each.
TEST(RocmExecution, KernelsSharingACodeObjectEachLoadByTheirEntry) {
  constexpr const char* kThreeKernels = R"(HloModule three
sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT t = f32[] add(p, q)
}
ENTRY e {
  x = f32[4] parameter(0)
  a = f32[4] exponential(x)
  r = f32[] constant(0)
  s = f32[] reduce(a, r), dimensions={0}, to_apply=sum
  b = f32[4] broadcast(s), dimensions={}
  c = f32[4] sort(b), dimensions={0}, to_apply=less
  ROOT t = (f32[4], f32[4]) tuple(x, c)
}
less {
  l = f32[] parameter(0)
  m = f32[] parameter(1)
  ROOT lt = pred[] compare(l, m), direction=LT
})";
  ExpectCopiesArriveAndNothingIsLeft(kRocm, {{kThreeKernels, 2}}, 2);
}

TEST(RocmExecution, ValuesMovedByCopiesArriveAndEveryLaunchSawLiveMemory) {
  // exp; the loop's condition
  ExpectCopiesArriveAndNothingIsLeft(kRocm, {{kPassThrough, 2}, {kCountedLoop, 1}}, 2);
}

TEST(RocmExecution, ExecutionsQueueWhileTheDeviceIsBusy) { ExpectExecutionsQueueWhileTheDeviceIsBusy(kRocm); }

TEST(RocmExecution, ARepeatedExecutionReusesItsArenaAndTables) { ExpectARepeatedExecutionReusesItsArenaAndTables(kRocm); }

TEST(RocmExecution, ASecondClientLoadsTheCachedCodeObjectsAndRunsThem) {
  ExpectASecondClientLoadsTheCachedCodeAndRunsIt(kRocm);
}

TEST(RocmExecution, AnInputOfTheWrongSizeIsRefused) { ExpectAnInputOfTheWrongSizeIsRefused(kRocm); }

TEST(RocmExecution, AProgramWithoutKernelsForItsTypesSaysWhich) {
  ExpectAProgramWithoutKernelsForItsTypesSaysWhich(kRocm);
}

}  // namespace
