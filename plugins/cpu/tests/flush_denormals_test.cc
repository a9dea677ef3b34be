// The CPU plugin's compile option flush_denormals (compile_options.h,
// float_mode.h), through the C ABI: by default a product below the
// smallest normal float is the subnormal IEEE gives; with the option it is
// zero (FTZ) and a subnormal operand reads as zero (DAZ), on every element
// of an array large enough that the arena's helper threads compute part of
// it, and on OpenMP's team where oneDNN computes a convolution or a large
// dot; the mode lasts for the execution only; it survives the compile
// cache; and an unknown option or value is INVALID_ARGUMENT naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <unistd.h>

#include <filesystem>
#include <initializer_list>
#include <string>
#include <utility>
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

// Programs whose steps run oneDNN on OpenMP's team, or on one thread each
// where a kernel splits its work across the arena: a pointwise convolution
// that oneDNN runs on the team, and a dot large enough for oneDNN's own
// threads (2^30 multiply-adds); and alone, so that no other step sets the
// team's mode first, a 1-D convolution of a dilated input at stride 2,
// which oneDNN is not asked for (im2col and an sgemm). Each output is a
// sum of products of 1e-30 and 1e-10, each product subnormal (64 of them,
// or 1024 in the dot's): nonzero under IEEE, zero when denormals are
// flushed, on every thread.
constexpr int64_t kImage = 96, kChannels = 64, kLine = 16384, kDotSide = 1024;
std::string Dims(std::initializer_list<int64_t> dims) {
  std::string s = "f32[";
  for (int64_t d : dims) s += (s.size() > 4 ? "," : "") + std::to_string(d);
  return s + "]";
}

struct TeamProgram {
  std::string text;
  std::vector<std::vector<int64_t>> inputs, results;
};

std::vector<TeamProgram> TeamPrograms() {
  const std::vector<int64_t> image = {2, kImage, kImage, kChannels}, pointwise = {1, 1, kChannels, kChannels},
                             square = {kDotSide, kDotSide}, line = {1, kLine, kChannels},
                             taps = {1, kChannels, kChannels};
  TeamProgram onednn{"HloModule m\nENTRY e {\n  x = " + Dims({2, kImage, kImage, kChannels}) +
                         " parameter(0)\n  w = " + Dims({1, 1, kChannels, kChannels}) + " parameter(1)\n  a = " +
                         Dims({kDotSide, kDotSide}) + " parameter(2)\n  b = " + Dims({kDotSide, kDotSide}) +
                         " parameter(3)\n  c = " + Dims({2, kImage, kImage, kChannels}) +
                         " convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f\n  d = " +
                         Dims({kDotSide, kDotSide}) +
                         " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  ROOT t = (" +
                         Dims({2, kImage, kImage, kChannels}) + ", " + Dims({kDotSide, kDotSide}) +
                         ") tuple(c, d)\n}\n",
                     {image, pointwise, square, square},
                     {image, square}};
  TeamProgram im2col{"HloModule m\nENTRY e {\n  l = " + Dims({1, kLine, kChannels}) + " parameter(0)\n  w = " +
                         Dims({1, kChannels, kChannels}) + " parameter(1)\n  c = " + Dims({1, kLine, kChannels}) +
                         " convolution(l, w), window={size=1 stride=2 lhs_dilate=2}, dim_labels=b0f_0io->b0f\n  "
                         "ROOT t = (" +
                         Dims({1, kLine, kChannels}) + ") tuple(c)\n}\n",
                     {line, taps},
                     {line}};
  return {onednn, im2col};
}

int64_t Elements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// How many elements of each of the program's results are zero. Its first
// input is 1e-30 everywhere, and the others 1e-10 (the dot's second
// operand too).
std::vector<int64_t> Zeros(anvil::testkit::AbiSession& session, const TeamProgram& program, const char* options) {
  anvil_executable* exe = nullptr;
  anvil_status* status = session.Compile(program.text, &exe, options);
  EXPECT_EQ(status, nullptr) << (status ? anvil_status_get_message(status) : "");
  if (status) {
    anvil_status_free(status);
    return {};
  }
  std::vector<std::vector<float>> data;
  std::vector<anvil_buffer*> in;
  for (size_t k = 0; k < program.inputs.size(); ++k) {
    const bool small = k == 0 || (program.inputs.size() == 4 && k == 2);  // x, and the dot's first operand
    data.emplace_back(static_cast<size_t>(Elements(program.inputs[k])), small ? 1e-30f : 1e-10f);
    in.push_back(session.FromHost(data.back().data(), ANVIL_F32, program.inputs[k]));
  }
  std::vector<anvil_buffer*> out = session.Execute(exe, in, program.results.size());
  std::vector<int64_t> zeros;
  for (size_t k = 0; k < out.size(); ++k) {
    const std::vector<float> v = session.ToHost<float>(out[k], static_cast<size_t>(Elements(program.results[k])));
    zeros.push_back(static_cast<int64_t>(std::count(v.begin(), v.end(), 0.0f)));
  }
  for (anvil_buffer* buffer : in) anvil_buffer_destroy(buffer);
  for (anvil_buffer* buffer : out) anvil_buffer_destroy(buffer);
  anvil_executable_destroy(exe);
  return zeros;
}

TEST(CpuFlushDenormals, TheOptionReachesOpenMpsTeamForConvolutionsAndLargeDots) {
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  // Each thread that runs executions has a team of its own, made with the
  // mode that thread had then (its threads take their creator's mode):
  // IEEE and flushed executions in turn, a few times, so that each team
  // computes in both modes, whichever of the host's threads runs each.
  for (const TeamProgram& program : TeamPrograms()) {
    std::vector<int64_t> all;
    for (const auto& dims : program.results) all.push_back(Elements(dims));
    const std::vector<int64_t> none(program.results.size(), 0);
    for (int round = 0; round < 3; ++round) {
      EXPECT_EQ(Zeros(session, program, "flush_denormals=false"), none)
          << "round " << round << ": IEEE sums of subnormal products flushed in\n" << program.text;
      EXPECT_EQ(Zeros(session, program, "flush_denormals=true"), all)
          << "round " << round << ": outputs not flushed in\n" << program.text;
    }
  }
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
