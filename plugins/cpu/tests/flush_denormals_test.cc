// The CPU plugin's compile option flush_denormals (compile_options.h,
// float_mode.h), through the C ABI: by default a product below the
// smallest normal float is the subnormal IEEE gives; with the option it is
// zero (FTZ) and a subnormal operand reads as zero (DAZ), on every element
// of an array large enough that the arena's helper threads compute part of
// it; the mode lasts for the execution only; it survives the compile
// cache; and an unknown option or value is INVALID_ARGUMENT naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "anvil/anvil.h"
#include "conformance/testkit/abi_session.h"
#include "plugins/cpu/float_mode.h"

namespace {

// 2^22 elements: split across the host threads (Parallel::For), and long
// enough that the helpers take chunks before the caller has done them all
// (with 2^20 the caller often did every chunk, and a helper that ignored
// the mode went unseen).
constexpr int64_t kN = int64_t{1} << 22;
const std::string kShape = "f32[" + std::to_string(kN) + "]";
// x * y and y + z: with x = y = 1e-20 the product (1e-40) is subnormal;
// with y = 0 and z subnormal, the sum is z, or 0 when denormals are
// flushed.
const std::string kProgram = "HloModule m\nENTRY e {\n  x = " + kShape + " parameter(0)\n  y = " + kShape +
                             " parameter(1)\n  z = " + kShape + " parameter(2)\n  p = " + kShape +
                             " multiply(x, y)\n  s = " + kShape + " add(y, z)\n  ROOT t = (" + kShape + ", " +
                             kShape + ") tuple(p, s)\n}\n";

struct Results {
  std::vector<float> product, sum;
};

Results RunProgram(anvil::testkit::AbiSession& session, const char* options) {
  anvil_executable* exe = nullptr;
  anvil_status* status = session.Compile(kProgram, &exe, options);
  EXPECT_EQ(status, nullptr) << (status ? anvil_status_get_message(status) : "");
  if (status) {
    anvil_status_free(status);
    return {};
  }
  const std::vector<float> x(kN, 1e-20f), y(kN, 1e-20f), z(kN, 1e-40f), zero(kN, 0.0f);
  anvil_buffer* bx = session.FromHost(x.data(), ANVIL_F32, {kN});
  anvil_buffer* by = session.FromHost(y.data(), ANVIL_F32, {kN});
  anvil_buffer* b0 = session.FromHost(zero.data(), ANVIL_F32, {kN});
  anvil_buffer* bz = session.FromHost(z.data(), ANVIL_F32, {kN});
  // The product of x and y; the sum of 0 and z.
  std::vector<anvil_buffer*> product = session.Execute(exe, {bx, by, bz}, 2);
  std::vector<anvil_buffer*> out = session.Execute(exe, {bx, b0, bz}, 2);
  Results r;
  r.sum = session.ToHost<float>(out[1], static_cast<size_t>(kN));
  r.product = session.ToHost<float>(product[0], static_cast<size_t>(kN));
  for (anvil_buffer* b : {bx, by, b0, bz, out[0], out[1], product[0], product[1]}) anvil_buffer_destroy(b);
  anvil_executable_destroy(exe);
  return r;
}

int CountNot(const std::vector<float>& v, float expected) {
  int wrong = 0;
  for (float f : v) wrong += f != expected;
  return wrong;
}

TEST(CpuFlushDenormals, ByDefaultSubnormalsAreIeeeGradualUnderflow) {
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  const Results r = RunProgram(session, nullptr);
  ASSERT_EQ(r.product.size(), static_cast<size_t>(kN));
  EXPECT_EQ(CountNot(r.product, 1e-20f * 1e-20f), 0);
  EXPECT_NE(1e-20f * 1e-20f, 0.0f);  // the host computes the subnormal, as the plugin must
  EXPECT_EQ(CountNot(r.sum, 1e-40f), 0);
}

TEST(CpuFlushDenormals, WithTheOptionSubnormalResultsAndOperandsAreZeroOnEveryThread) {
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  const uint32_t mode_before = anvil::cpu::FloatMode();
  const Results r = RunProgram(session, "flush_denormals=true");
  ASSERT_EQ(r.product.size(), static_cast<size_t>(kN));
  EXPECT_EQ(CountNot(r.product, 0.0f), 0);
  EXPECT_EQ(CountNot(r.sum, 0.0f), 0);
  // The caller's mode is its own again once the execution is done.
  EXPECT_EQ(anvil::cpu::FloatMode(), mode_before);
  // And an executable compiled without the option computes subnormals
  // again, in the same client, on the same threads.
  const Results ieee = RunProgram(session, "flush_denormals=false");
  EXPECT_EQ(CountNot(ieee.product, 1e-20f * 1e-20f), 0);
  EXPECT_EQ(CountNot(ieee.sum, 1e-40f), 0);
}

TEST(CpuFlushDenormals, TheOptionSurvivesTheCompileCache) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("anvil_flush_denormals_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string cache = dir.string();
  for (int client = 0; client < 2; ++client) {  // the second loads what the first stored
    anvil_client_options options{};
    options.cache_dir = cache.c_str();
    anvil::testkit::AbiSession session("cpu", options);
    ASSERT_TRUE(session.ok()) << session.error();
    const Results r = RunProgram(session, "flush_denormals=true");
    EXPECT_EQ(CountNot(r.product, 0.0f), 0) << "client " << client;
  }
  fs::remove_all(dir);
}

TEST(CpuFlushDenormals, AnUnknownOptionOrValueIsInvalidArgumentNamingIt) {
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  for (const char* options : {"flush_denormal=true", "flush_denormals=yes"}) {
    anvil_executable* exe = nullptr;
    anvil_status* status = session.Compile(kProgram, &exe, options);
    ASSERT_NE(status, nullptr) << options;
    EXPECT_EQ(anvil_status_get_code(status), ANVIL_INVALID_ARGUMENT);
    const std::string message = anvil_status_get_message(status);
    EXPECT_NE(message.find(std::string(options) == "flush_denormals=yes" ? "'yes'" : "'flush_denormal'"),
              std::string::npos)
        << message;
    anvil_status_free(status);
  }
}

}  // namespace
