// The execution checks a GPU plugin's tests run through the C ABI on a
// host-memory stand-in for its runtime (the CUDA plugin's
// host_memory_cuda_driver.cc, the ROCm plugin's host_memory_hip_runtime.cc):
// programs compile with the real compiler, their code objects load, and
// executions allocate, launch, copy and read back as they would on a GPU,
// except that kernels compute nothing. So these check what does not depend
// on a kernel: data that moves by copies only, loops and their condition
// reads, the compile cache, argument checks, and that every launch saw live
// addresses and nothing is left allocated, loaded or open afterwards.
// Header-only, for the plugins' test files.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "anvil/anvil.h"
#include "conformance/testkit/abi_session.h"
#include "plugins/cpu/tests/chrome_trace.h"
#include "plugins/gpu/tests/test_programs.h"

namespace anvil::gpu::testing {

// Which plugin, and how to reach its stand-in: the variable naming the
// stand-in library, and the prefix of what it exports
// (<prefix>_counts, <prefix>_allocations_made).
struct StandIn {
  const char* plugin;       // "cuda"
  const char* library_env;  // "ANVIL_CUDA_DRIVER_LIBRARY"
  const char* exports;      // "anvil_fake_cuda"
  const char* named;        // "the CUDA plugin", as its messages say
};

struct Counts {
  long allocations = 0, modules = 0, streams = 0, launches = 0, bad_addresses = 0, bad_calls = 0;
};

// A function the stand-in (already loaded by the plugin) exports.
template <typename Fn>
Fn StandInFunction(const StandIn& s, const std::string& name) {
  const char* library = std::getenv(s.library_env);
  void* handle = library ? dlopen(library, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  EXPECT_NE(handle, nullptr) << "the stand-in is not loaded";
  if (!handle) return nullptr;
  auto fn = reinterpret_cast<Fn>(dlsym(handle, name.c_str()));
  EXPECT_NE(fn, nullptr) << name;
  dlclose(handle);  // still loaded: the plugin keeps it
  return fn;
}

// What the stand-in has seen.
inline Counts StandInCounts(const StandIn& s) {
  Counts c;
  auto counts = StandInFunction<void (*)(long*, long*, long*, long*, long*, long*)>(s, std::string(s.exports) + "_counts");
  if (counts) counts(&c.allocations, &c.modules, &c.streams, &c.launches, &c.bad_addresses, &c.bad_calls);
  return c;
}

inline long AllocationsMade(const StandIn& s) {
  auto made = StandInFunction<long (*)()>(s, std::string(s.exports) + "_allocations_made");
  return made ? made() : -1;
}

inline constexpr const char* kPassThrough = R"(HloModule pass
ENTRY e {
  x = f32[4] parameter(0)
  e = f32[4] exponential(x)
  ROOT t = (f32[4], f32[4]) tuple(x, e)
})";

inline void ExpectTheStandInIsTheOneDevice(const StandIn& s) {
  testkit::AbiSession session(s.plugin);
  ASSERT_TRUE(session.ok()) << session.error();
  EXPECT_EQ(session.device_count(), 1u);
}

// A program of one f32[4] parameter whose first output is that parameter
// (moved by copies only), and how many outputs it has.
struct CopyProgram {
  const char* text;
  size_t outputs;
};

// Each program runs and its first output arrives; afterwards at least
// `launches` more launches happened, every one on live memory, and nothing
// is left.
inline void ExpectCopiesArriveAndNothingIsLeft(const StandIn& s, const std::vector<CopyProgram>& programs,
                                               long launches) {
  const std::vector<float> x = {1.5f, -2.0f, 3.25f, 0.0f};
  long launches_before = 0;
  {
    testkit::AbiSession session(s.plugin);
    ASSERT_TRUE(session.ok()) << session.error();
    launches_before = StandInCounts(s).launches;  // the stand-in is loaded now
    for (const auto& [program, outputs] : programs) {
      anvil_executable* exe = nullptr;
      ANVIL_TESTKIT_ASSERT_OK(session.Compile(program, &exe));
      anvil_buffer* in = session.FromHost(x.data(), ANVIL_F32, {4});
      std::vector<anvil_buffer*> out = session.Execute(exe, {in}, outputs);
      ASSERT_EQ(out.size(), outputs);
      // A tuple's first element that is the parameter is copied out; a loop
      // state (whose condition reads false in zero-filled memory: the
      // kernels ran nothing) is the parameter copied in and out.
      EXPECT_EQ(session.ToHost<float>(out[0], 4), x) << program;
      for (anvil_buffer* b : out) anvil_buffer_destroy(b);
      anvil_buffer_destroy(in);
      anvil_executable_destroy(exe);
    }
  }
  const Counts c = StandInCounts(s);
  EXPECT_GE(c.launches - launches_before, launches);
  EXPECT_EQ(c.bad_addresses, 0);
  EXPECT_EQ(c.bad_calls, 0);
  // Arenas, tables, constants, buffers, modules and streams all released.
  EXPECT_EQ(c.allocations, 0);
  EXPECT_EQ(c.modules, 0);
  EXPECT_EQ(c.streams, 0);
}

// Executions wait for the device on the plugin's completion thread, never
// on the thread that issues them nor on core's host threads: while the
// stand-in keeps its streams busy, more executions than core has host
// threads are issued, every one of them has launched its kernels and none
// is done; once the device is idle again, all complete and nothing is left.
inline void ExpectExecutionsQueueWhileTheDeviceIsBusy(const StandIn& s) {
  const std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f};
  {
    testkit::AbiSession session(s.plugin);
    ASSERT_TRUE(session.ok()) << session.error();
    auto hold = StandInFunction<void (*)(int)>(s, std::string(s.exports) + "_hold_streams");
    auto waiting = StandInFunction<long (*)()>(s, std::string(s.exports) + "_waiting");
    ASSERT_TRUE(hold && waiting);
    anvil_executable* exe = nullptr;
    ANVIL_TESTKIT_ASSERT_OK(session.Compile(kPassThrough, &exe));
    anvil_buffer* in = session.FromHost(x.data(), ANVIL_F32, {4});
    // One execution with the device idle: how many launches one makes.
    const long before = StandInCounts(s).launches;
    for (anvil_buffer* b : session.Execute(exe, {in}, 2)) anvil_buffer_destroy(b);
    const long per_execution = StandInCounts(s).launches - before;
    ASSERT_GT(per_execution, 0);

    struct Release {  // the device goes idle again on every way out
      void (*hold)(int);
      ~Release() { hold(0); }
    } release{hold};
    hold(1);
    const size_t executions = std::thread::hardware_concurrency() + 2;
    std::vector<anvil_event*> done(executions, nullptr);
    std::vector<anvil_buffer*> outputs(2 * executions, nullptr);
    anvil_execute_args run{};
    run.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
    run.inputs = &in;
    run.num_inputs = 1;
    for (size_t k = 0; k < executions; ++k) {
      ANVIL_TESTKIT_EXPECT_OK(anvil_executable_execute(exe, &run, &outputs[2 * k], &done[k]));
    }
    EXPECT_EQ(StandInCounts(s).launches - before - per_execution, static_cast<long>(executions) * per_execution)
        << "executions waited for a thread while the device was busy";
    // The completion thread is the one waiting, for the first execution.
    for (int tries = 0; waiting() == 0 && tries < 30000; ++tries) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(waiting(), 1);
    for (anvil_event* e : done) {
      int32_t ready = 1;
      ANVIL_TESTKIT_EXPECT_OK(anvil_event_is_ready(e, &ready));
      EXPECT_EQ(ready, 0) << "an execution completed while its device was busy";
    }
    hold(0);
    for (anvil_event* e : done) {
      ANVIL_TESTKIT_EXPECT_OK(anvil_event_await(e));
      ANVIL_TESTKIT_EXPECT_OK(anvil_event_destroy(e));
    }
    for (size_t k = 0; k < executions; ++k) EXPECT_EQ(session.ToHost<float>(outputs[2 * k], 4), x);
    for (anvil_buffer* b : outputs) anvil_buffer_destroy(b);
    anvil_buffer_destroy(in);
    anvil_executable_destroy(exe);
  }
  const Counts c = StandInCounts(s);
  EXPECT_EQ(c.bad_addresses, 0);
  EXPECT_EQ(c.bad_calls, 0);
  EXPECT_EQ(c.allocations, 0);
  EXPECT_EQ(c.streams, 0);
}

inline void ExpectARepeatedExecutionReusesItsArenaAndTables(const StandIn& s) {
  const std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f};
  testkit::AbiSession session(s.plugin);
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(kCountedLoop, &exe));
  anvil_buffer* in = session.FromHost(x.data(), ANVIL_F32, {4});
  long before = 0;
  for (int run = 0; run < 3; ++run) {
    if (run == 1) before = AllocationsMade(s);
    std::vector<anvil_buffer*> out = session.Execute(exe, {in}, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(session.ToHost<float>(out[0], 4), x);
    anvil_buffer_destroy(out[0]);
  }
  // Runs 2 and 3 allocated their output buffers only.
  EXPECT_EQ(AllocationsMade(s) - before, 2);
  anvil_buffer_destroy(in);
  anvil_executable_destroy(exe);
}

// The compile cache: a second client loads the code objects the first
// stored (no compiler), and runs them; a corrupt entry compiles again.
inline void ExpectASecondClientLoadsTheCachedCodeAndRunsIt(const StandIn& s) {
  namespace fs = std::filesystem;
  const std::string dir =
      (fs::temp_directory_path() / ("anvil_" + std::string(s.plugin) + "_cache_" + std::to_string(getpid()))).string();
  const std::string trace = dir + ".trace.json";
  fs::remove_all(dir);
  const std::vector<float> x = {0.5f, 1.5f, -2.5f, 8.0f};
  auto run = [&]() -> int {
    fs::remove(trace);
    {
      anvil_client_options options{};
      options.cache_dir = dir.c_str();
      options.trace_path = trace.c_str();
      testkit::AbiSession session(s.plugin, options);
      EXPECT_TRUE(session.ok()) << session.error();
      if (!session.ok()) return -1;
      anvil_executable* exe = nullptr;
      EXPECT_EQ(testkit::TakeMessage(session.Compile(kCountedLoop, &exe)), "");
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
  // Every entry corrupted near its end (inside the code objects): compiled again.
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".exe") continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-20, std::ios::end);
    f.put('\x5a');
  }
  EXPECT_EQ(run(), 0);
  EXPECT_EQ(StandInCounts(s).bad_calls, 0);
  fs::remove_all(dir);
  fs::remove(trace);
}

inline void ExpectAnInputOfTheWrongSizeIsRefused(const StandIn& s) {
  testkit::AbiSession session(s.plugin);
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
  const std::string message = testkit::TakeMessage(status);
  EXPECT_NE(message.find("input 0"), std::string::npos) << message;
  if (done) anvil_event_destroy(done);
  anvil_buffer_destroy(in);
  anvil_executable_destroy(exe);
}

inline void ExpectAProgramWithoutKernelsForItsTypesSaysWhich(const StandIn& s) {
  testkit::AbiSession session(s.plugin);
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  // f8E8M0FNU (powers of two only, no sign) has no kernels yet.
  const std::string message = testkit::TakeMessage(session.Compile(
      "HloModule m\nENTRY e {\n  a = f8e8m0fnu[4] parameter(0)\n  ROOT c = f32[4] convert(a)\n}\n", &exe));
  EXPECT_EQ(exe, nullptr);
  EXPECT_NE(message.find(s.named), std::string::npos) << message;
  EXPECT_NE(message.find("f8e8m0fnu"), std::string::npos) << message;
}

}  // namespace anvil::gpu::testing
