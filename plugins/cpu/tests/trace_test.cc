// Chrome traces through the C ABI (ANVIL_TRACE and the client option): the
// file is valid JSON once the client is gone, holds core's compile,
// transfer and execution spans and the CPU plugin's kernel spans; a file
// that cannot be written costs a warning, never an error.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "anvil/anvil.h"
#include "conformance/testkit/abi_session.h"
#include "plugins/cpu/tests/chrome_trace.h"

namespace {

using anvil::testing::Count;
using anvil::testing::Event;
using anvil::testing::ReadTrace;

constexpr char kProgram[] = R"(HloModule traced
ENTRY e {
  x = f32[64] parameter(0)
  y = f32[64] parameter(1)
  a = f32[64] add(x, y)
  m = f32[64] multiply(a, x)
  ROOT s = f32[64] sort(m), dimensions={0}, to_apply=lt
}
lt {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT c = pred[] compare(p, q), direction=LT
}
)";

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("anvil_trace_" + std::to_string(getpid()) + "_" + name)).string();
}

// Compiles and runs kProgram once in a fresh session.
void RunOnce() {
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(kProgram, &exe));
  std::vector<float> x(64), y(64);
  for (int k = 0; k < 64; ++k) {
    x[k] = static_cast<float>(k % 7);
    y[k] = static_cast<float>(k % 5);
  }
  anvil_buffer* bx = session.FromHost(x.data(), ANVIL_F32, {64});
  anvil_buffer* by = session.FromHost(y.data(), ANVIL_F32, {64});
  std::vector<anvil_buffer*> out = session.Execute(exe, {bx, by}, 1);
  ASSERT_EQ(out.size(), 1u);
  std::vector<float> sorted = session.ToHost<float>(out[0], 64);
  EXPECT_LE(sorted.front(), sorted.back());
  for (anvil_buffer* b : {bx, by, out[0]}) ANVIL_TESTKIT_EXPECT_OK(anvil_buffer_destroy(b));
  ANVIL_TESTKIT_EXPECT_OK(anvil_executable_destroy(exe));
}

TEST(CpuTrace, AnvilTraceWritesCompileTransferExecuteAndKernelSpans) {
  const std::string path = TempPath("env.json");
  std::filesystem::remove(path);
  setenv("ANVIL_TRACE", path.c_str(), 1);
  RunOnce();
  unsetenv("ANVIL_TRACE");
  ASSERT_TRUE(std::filesystem::exists(path)) << "no trace written to " << path;
  const std::vector<Event> events = ReadTrace(path);
  for (const char* span : {"anvil_client_compile", "parse", "verify", "canonicalize", "plugin compile"}) {
    EXPECT_EQ(Count(events, "X", "compile", span), 1) << span;
  }
  EXPECT_EQ(Count(events, "b", "transfer", "copy to device"), 2);
  EXPECT_EQ(Count(events, "e", "transfer", "copy to device"), 2);
  EXPECT_EQ(Count(events, "b", "transfer", "copy to host"), 1);
  EXPECT_EQ(Count(events, "b", "execute", "execute"), 1);
  EXPECT_EQ(Count(events, "e", "execute", "execute"), 1);
  // The plugin's own spans: its compile phases and one per kernel it ran.
  EXPECT_EQ(Count(events, "X", "kernel", "cpu: plan"), 1);
  for (const char* phase : {"cpu: plan fusion", "cpu: plan buffers", "cpu: plan kernels", "cpu: plan steps"}) {
    EXPECT_EQ(Count(events, "X", "kernel", phase), 1) << phase;
  }
  EXPECT_EQ(Count(events, "X", "kernel", "sort"), 1);
  EXPECT_GE(Count(events, "X", "kernel", ""), 3);
  // Every thread that recorded a span is named.
  for (const Event& e : events) {
    if (e.at("ph") != "X") continue;
    bool named = false;
    for (const Event& m : events) named |= m.at("ph") == "M" && m.at("tid") == e.at("tid");
    EXPECT_TRUE(named) << "thread " << e.at("tid") << " has no name";
  }
  std::filesystem::remove(path);
}

TEST(CpuTrace, TheClientOptionNamesTheFileAndTwoClientsShareIt) {
  const std::string path = TempPath("option.json");
  std::filesystem::remove(path);
  anvil_client_options options{};
  options.trace_path = path.c_str();
  {
    anvil::testkit::AbiSession first("cpu", options);
    ASSERT_TRUE(first.ok()) << first.error();
    {
      anvil::testkit::AbiSession second("cpu", options);
      ASSERT_TRUE(second.ok()) << second.error();
      anvil_executable* exe = nullptr;
      ANVIL_TESTKIT_ASSERT_OK(second.Compile(kProgram, &exe));
      ANVIL_TESTKIT_EXPECT_OK(anvil_executable_destroy(exe));
    }
    // The first client still traces into the file: it is written when it goes.
    EXPECT_FALSE(std::filesystem::exists(path));
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(Count(ReadTrace(path), "X", "compile", "anvil_client_compile"), 1);
  std::filesystem::remove(path);
}

TEST(CpuTrace, AFileThatCannotBeWrittenCostsOnlyAWarning) {
  const std::string path = TempPath("no_such_dir") + "/trace.json";
  setenv("ANVIL_TRACE", path.c_str(), 1);
  RunOnce();  // the session's client goes without an error
  unsetenv("ANVIL_TRACE");
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
}

}  // namespace
