// The CUDA plugin's execution path through the C ABI, on the host-memory
// stand-in driver (host_memory_cuda_driver.cc, named by
// ANVIL_CUDA_DRIVER_LIBRARY): programs compile with the real NVRTC for the
// stand-in's sm_90, their cubins load, and executions allocate, launch,
// copy and read back as they would on a GPU, except that kernels compute
// nothing. So these tests check what does not depend on a kernel: data
// that moves by copies only, loops and their condition reads, argument
// checks, and that every launch saw live addresses and nothing is left
// allocated, loaded or open afterwards. scripts/device_check.sh runs the
// corpus on a real GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "anvil/anvil.h"
#include "conformance/testkit/abi_session.h"
#include "plugins/cpu/tests/chrome_trace.h"
#include "plugins/gpu/tests/test_programs.h"

namespace {

// The NVRTC the build found, before the plugin (and its one NVRTC search)
// is loaded by the first test.
const bool kNvrtcPinned = setenv("ANVIL_NVRTC_LIBRARY", ANVIL_TEST_NVRTC_LIBRARY, 1) == 0;

using anvil::testkit::AbiSession;
using anvil::testkit::TakeMessage;
// The loop state starts as the parameter; zero-filled memory makes the
// condition read false at once (the stand-in runs no kernel).
constexpr const char* kLoop = anvil::gpu::testing::kCountedLoop;

struct Counts {
  long allocations = 0, modules = 0, streams = 0, launches = 0, bad_addresses = 0, bad_calls = 0;
};

// A function the stand-in (already loaded by the plugin) exports.
template <typename Fn>
Fn FakeFunction(const char* name) {
  const char* library = std::getenv("ANVIL_CUDA_DRIVER_LIBRARY");
  void* handle = library ? dlopen(library, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  EXPECT_NE(handle, nullptr) << "the stand-in driver is not loaded";
  if (!handle) return nullptr;
  auto fn = reinterpret_cast<Fn>(dlsym(handle, name));
  EXPECT_NE(fn, nullptr) << name;
  dlclose(handle);  // still loaded: the plugin keeps it
  return fn;
}

// What the stand-in has seen.
Counts FakeCounts() {
  Counts c;
  auto counts = FakeFunction<void (*)(long*, long*, long*, long*, long*, long*)>("anvil_fake_cuda_counts");
  if (counts) counts(&c.allocations, &c.modules, &c.streams, &c.launches, &c.bad_addresses, &c.bad_calls);
  return c;
}

long AllocationsMade() {
  auto made = FakeFunction<long (*)()>("anvil_fake_cuda_allocations_made");
  return made ? made() : -1;
}

constexpr const char* kPassThrough = R"(HloModule pass
ENTRY e {
  x = f32[4] parameter(0)
  e = f32[4] exponential(x)
  ROOT t = (f32[4], f32[4]) tuple(x, e)
})";

TEST(CudaExecution, TheStandInIsTheOneDevice) {
  ASSERT_TRUE(kNvrtcPinned);
  AbiSession session("cuda");
  ASSERT_TRUE(session.ok()) << session.error();
  EXPECT_EQ(session.device_count(), 1u);
}

TEST(CudaExecution, ValuesMovedByCopiesArriveAndEveryLaunchSawLiveMemory) {
  const std::vector<float> x = {1.5f, -2.0f, 3.25f, 0.0f};
  {
    AbiSession session("cuda");
    ASSERT_TRUE(session.ok()) << session.error();
    for (const char* program : {kPassThrough, kLoop}) {
      anvil_executable* exe = nullptr;
      ANVIL_TESTKIT_ASSERT_OK(session.Compile(program, &exe));
      anvil_buffer* in = session.FromHost(x.data(), ANVIL_F32, {4});
      const size_t outputs = program == kPassThrough ? 2 : 1;
      std::vector<anvil_buffer*> out = session.Execute(exe, {in}, outputs);
      ASSERT_EQ(out.size(), outputs);
      // The tuple's first element is the parameter, copied out; the loop
      // state (whose condition reads false in zero-filled memory: the
      // kernels ran nothing) is the parameter copied in and out.
      EXPECT_EQ(session.ToHost<float>(out[0], 4), x) << program;
      for (anvil_buffer* b : out) anvil_buffer_destroy(b);
      anvil_buffer_destroy(in);
      anvil_executable_destroy(exe);
    }
  }
  const Counts c = FakeCounts();
  EXPECT_GE(c.launches, 2);  // exp; the loop's condition
  EXPECT_EQ(c.bad_addresses, 0);
  EXPECT_EQ(c.bad_calls, 0);
  // Arenas, tables, constants, buffers, modules and streams all released.
  EXPECT_EQ(c.allocations, 0);
  EXPECT_EQ(c.modules, 0);
  EXPECT_EQ(c.streams, 0);
}

TEST(CudaExecution, ARepeatedExecutionReusesItsArenaAndTables) {
  const std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f};
  AbiSession session("cuda");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(kLoop, &exe));
  anvil_buffer* in = session.FromHost(x.data(), ANVIL_F32, {4});
  long before = 0;
  for (int run = 0; run < 3; ++run) {
    if (run == 1) before = AllocationsMade();
    std::vector<anvil_buffer*> out = session.Execute(exe, {in}, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(session.ToHost<float>(out[0], 4), x);
    anvil_buffer_destroy(out[0]);
  }
  // Runs 2 and 3 allocated their output buffers only.
  EXPECT_EQ(AllocationsMade() - before, 2);
  anvil_buffer_destroy(in);
  anvil_executable_destroy(exe);
}

// The compile cache: a second client loads the cubins the first stored
// (no NVRTC), and runs them; a corrupt entry compiles again.
TEST(CudaExecution, ASecondClientLoadsTheCachedCubinsAndRunsThem) {
  namespace fs = std::filesystem;
  const std::string dir = (fs::temp_directory_path() / ("anvil_cuda_cache_" + std::to_string(getpid()))).string();
  const std::string trace = dir + ".trace.json";
  fs::remove_all(dir);
  const std::vector<float> x = {0.5f, 1.5f, -2.5f, 8.0f};
  auto run = [&]() -> int {
    fs::remove(trace);
    {
      anvil_client_options options{};
      options.cache_dir = dir.c_str();
      options.trace_path = trace.c_str();
      AbiSession session("cuda", options);
      EXPECT_TRUE(session.ok()) << session.error();
      if (!session.ok()) return -1;
      anvil_executable* exe = nullptr;
      EXPECT_EQ(TakeMessage(session.Compile(kLoop, &exe)), "");
      if (!exe) return -1;
      anvil_buffer* in = session.FromHost(x.data(), ANVIL_F32, {4});
      std::vector<anvil_buffer*> out = session.Execute(exe, {in}, 1);
      EXPECT_EQ(out.size(), 1u);
      if (out.size() == 1) {
        EXPECT_EQ(session.ToHost<float>(out[0], 4), x);
        anvil_buffer_destroy(out[0]);
      }
      anvil_buffer_destroy(in);
      anvil_executable_destroy(exe);
    }
    return anvil::testing::Count(anvil::testing::ReadTrace(trace), "X", "compile", "cache hit");
  };
  EXPECT_EQ(run(), 0);
  EXPECT_EQ(run(), 1);
  // Every entry corrupted near its end (inside the cubins): compiled again.
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".exe") continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-20, std::ios::end);
    f.put('\x5a');
  }
  EXPECT_EQ(run(), 0);
  EXPECT_EQ(FakeCounts().bad_calls, 0);
  fs::remove_all(dir);
  fs::remove(trace);
}

TEST(CudaExecution, AnInputOfTheWrongSizeIsRefused) {
  AbiSession session("cuda");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(kPassThrough, &exe));
  const std::vector<float> y(8, 1.0f);
  anvil_buffer* in = session.FromHost(y.data(), ANVIL_F32, {8});
  anvil_buffer* inputs[] = {in};
  anvil_execute_args args{ANVIL_EXECUTE_ARGS_STRUCT_SIZE, inputs, 1, nullptr};
  anvil_buffer* outputs[2] = {nullptr, nullptr};
  anvil_event* done = nullptr;
  anvil_status* status = anvil_executable_execute(exe, &args, outputs, &done);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(anvil_status_get_code(status), ANVIL_INVALID_ARGUMENT);
  const std::string message = TakeMessage(status);
  EXPECT_NE(message.find("input 0"), std::string::npos) << message;
  if (done) anvil_event_destroy(done);
  anvil_buffer_destroy(in);
  anvil_executable_destroy(exe);
}

TEST(CudaExecution, AProgramWithoutKernelsForItsTypesSaysWhich) {
  AbiSession session("cuda");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  const std::string message = TakeMessage(session.Compile(
      "HloModule m\nENTRY e {\n  a = f8e4m3fn[4] parameter(0)\n  ROOT n = f8e4m3fn[4] negate(a)\n}\n", &exe));
  EXPECT_EQ(exe, nullptr);
  EXPECT_NE(message.find("the CUDA plugin"), std::string::npos) << message;
  EXPECT_NE(message.find("f8e4m3fn"), std::string::npos) << message;
}

}  // namespace
