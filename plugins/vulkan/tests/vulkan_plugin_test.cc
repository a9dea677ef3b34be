// The Vulkan plugin through the public C ABI, on whichever Vulkan device the
// machine has (Mesa's lavapipe on CI, which installs mesa-vulkan-drivers), and
// its kernels (GLSL compiled by shaderc) through SPIRV-Tools' validator.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "anvil/anvil.h"
#include "conformance/testkit/abi_session.h"
#include "hlo/hlo_parser.h"
#include "hlo/kernel_plan.h"
#include "plugins/vulkan/glsl_dialect.h"
#include "plugins/vulkan/spirv_compiler.h"

namespace {

using anvil::hlo::ElementType;
using anvil::hlo::Opcode;

#define EXPECT_OK(expr) ANVIL_TESTKIT_EXPECT_OK(expr)
#define ASSERT_OK(expr) ANVIL_TESTKIT_ASSERT_OK(expr)

// Kernels of one program, generated and compiled without a device.
std::vector<anvil::gpu::KernelSource> KernelsOf(const std::string& hlo, const anvil::vulkan::ShaderFeatures& features) {
  auto module = anvil::hlo::ParseHloModule(hlo, {"test", 1});
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return {};
  auto plan = anvil::hlo::PlanKernels(**module);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  if (!plan.ok()) return {};
  std::vector<anvil::gpu::KernelSource> kernels;
  const anvil::vulkan::GlslTarget target{anvil::vulkan::GlslDialect(features), {}};
  for (const auto& c : plan->computations) {
    for (const auto& step : c.steps) {
      if (step.kind != anvil::hlo::PlanStep::Kind::kKernel) continue;
      auto shaders = target.Emit(step.kernel);
      EXPECT_TRUE(shaders.ok()) << shaders.status().message();
      if (shaders.ok()) kernels.push_back(std::move(*shaders));
    }
  }
  return kernels;
}

anvil::vulkan::ShaderFeatures AllFeatures() {
  anvil::vulkan::ShaderFeatures f;
  f.float64 = f.int64 = f.int16 = f.float16 = f.int8 = f.storage8 = f.storage16 = true;
  return f;
}

TEST(VulkanCodegen, EveryKindOfKernelCompilesAndValidates) {
  // One program with a kernel of each kind, on several element types.
  const std::string hlo = R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
less { a = s32[] parameter(0)  b = s32[] parameter(1)  c = f16[] parameter(2)  d = f16[] parameter(3)
       ROOT l = pred[] compare(a, b), direction=LT }
maxs { a = s64[] parameter(0)  b = s64[] parameter(1)  ROOT m = s64[] maximum(a, b) }
ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT g = pred[] compare(a, b), direction=GE }
ENTRY e {
  x = f32[4,6] parameter(0)
  y = f32[6,3] parameter(1)
  i = s32[8] parameter(2)
  h = f16[8] parameter(3)
  l = s64[5,2] parameter(4)
  img = f32[1,5,5,2] parameter(5)
  k = f32[3,3,2,4] parameter(6)
  c = c64[3] parameter(7)
  zero = f32[] constant(0)
  e = f32[4,6] exponential(x)
  t = f32[6,4] transpose(e), dimensions={1,0}
  d = f32[4,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[4] reduce(e, zero), dimensions={1}, to_apply=add
  conv = f32[1,5,5,4] convolution(img, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  pool = f32[1,3,3,2] reduce-window(img, zero), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=add
  ssc = f32[1,5,5,2] select-and-scatter(img, pool, zero), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, select=ge, scatter=add
  sorted = (s32[8], f16[8]) sort(i, h), dimensions={0}, to_apply=less
  lmin = s64[] constant(-9223372036854775808)
  lm = s64[5] reduce(l, lmin), dimensions={1}, to_apply=maxs
  cs = c64[3] sqrt(c)
  ROOT out = (f32[6,4], f32[4,3], f32[4], f32[1,5,5,4], f32[1,5,5,2], (s32[8], f16[8]), s64[5], c64[3]) tuple(t, d, r, conv, ssc, sorted, lm, cs)
})";
  const auto kernels = KernelsOf(hlo, AllFeatures());
  ASSERT_GE(kernels.size(), 8u);
  size_t passes = 0;
  for (const auto& k : kernels) {
    for (const auto& pass : k.passes) {
      auto words = anvil::vulkan::CompileGlsl(pass.text, "test");
      ASSERT_TRUE(words.ok()) << words.status().message();
      EXPECT_TRUE(anvil::vulkan::ValidateSpirv(*words).ok());
      ++passes;
    }
  }
  EXPECT_GE(passes, 9u);  // sort has two passes
}

TEST(VulkanCodegen, TheValidatorCatchesABrokenModule) {
  const auto kernels = KernelsOf("HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a)\n}\n",
                                 AllFeatures());
  ASSERT_EQ(kernels.size(), 1u);
  auto words = anvil::vulkan::CompileGlsl(kernels[0].passes.at(0).text, "negate");
  ASSERT_TRUE(words.ok()) << words.status().message();
  std::vector<uint32_t> broken = *words;
  broken.resize(broken.size() - 2);  // cut off the function's end
  EXPECT_FALSE(anvil::vulkan::ValidateSpirv(broken).ok());
}

// lavapipe ends an invocation's loops after 65535 iterations in all,
// silently; the emitter refuses a kernel whose invocations would each run
// more (here a cumulative sum of 100000 positions, a scan down one line),
// naming both numbers, where a device without the limit compiles it.
// Each result of this reduce-window sums its own window of 70000 positions
// (not a scan, which the emitter cuts into chunks).
constexpr char kWindowsOf70000[] =
    "HloModule m\nENTRY e {\n  a = f32[100000] parameter(0)\n  z = f32[] constant(0)\n"
    "  ROOT s = f32[30001] reduce-window(a, z), window={size=70000}, to_apply=add\n}\n"
    "add { x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y) }\n";

TEST(VulkanCodegen, AKernelLoopingPastTheDevicesLimitIsRefused) {
  auto module = anvil::hlo::ParseHloModule(kWindowsOf70000, {"test", 1});
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto plan = anvil::hlo::PlanKernels(**module);
  ASSERT_TRUE(plan.ok());
  const auto& kernel = plan->computations.at(0).steps.at(0).kernel;
  const anvil::vulkan::GlslTarget limited{anvil::vulkan::GlslDialect(AllFeatures()), {64, 65535}};
  auto refused = limited.Emit(kernel);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), anvil::hlo::StatusCode::kUnimplemented);
  EXPECT_NE(refused.status().message().find("about 70000 loop iterations in one invocation"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("after 65535"), std::string::npos) << refused.status().message();
  const anvil::vulkan::GlslTarget unlimited{anvil::vulkan::GlslDialect(AllFeatures()), {64, 0}};
  EXPECT_TRUE(unlimited.Emit(kernel).ok());
}

TEST(VulkanCodegen, ATypeTheDeviceLacksIsRefusedNamingTheFeature) {
  anvil::vulkan::ShaderFeatures no_f64 = AllFeatures();
  no_f64.float64 = false;
  auto module = anvil::hlo::ParseHloModule(
      "HloModule m\nENTRY e {\n  a = f64[4] parameter(0)\n  ROOT n = f64[4] negate(a)\n}\n", {"test", 1});
  ASSERT_TRUE(module.ok());
  auto plan = anvil::hlo::PlanKernels(**module);
  ASSERT_TRUE(plan.ok());
  const anvil::vulkan::GlslTarget target{anvil::vulkan::GlslDialect(no_f64), {}};
  auto shaders = target.Emit(plan->computations.at(0).steps.at(0).kernel);
  ASSERT_FALSE(shaders.ok());
  EXPECT_EQ(shaders.status().code(), anvil::hlo::StatusCode::kUnimplemented);
  EXPECT_NE(shaders.status().message().find("f64 needs the Vulkan feature shaderFloat64"), std::string::npos)
      << shaders.status().message();
}

class VulkanPluginTest : public ::testing::Test {
 protected:
  // CI installs Mesa's lavapipe: no device here is a failure, not a skip.
  void SetUp() override { ASSERT_TRUE(session_.ok()) << session_.error() << " (see the plugin's message above)"; }

  anvil_status* Compile(const std::string& hlo, anvil_executable** out) { return session_.Compile(hlo, out); }
  anvil_buffer* FromHost(const void* data, anvil_element_type type, int64_t n) {
    return session_.FromHost(data, type, {n});
  }
  template <typename T>
  std::vector<T> ToHost(anvil_buffer* buffer, size_t n) {
    return session_.ToHost<T>(buffer, n);
  }
  std::vector<anvil_buffer*> Run(anvil_executable* exe, std::vector<anvil_buffer*> inputs, size_t outputs) {
    return session_.Execute(exe, std::move(inputs), outputs);
  }

  anvil::testkit::AbiSession session_{"vulkan"};
};

TEST_F(VulkanPluginTest, ListsItsDeviceWithProperties) {
  anvil_device_properties properties{};
  properties.struct_size = ANVIL_DEVICE_PROPERTIES_STRUCT_SIZE;
  ASSERT_OK(anvil_device_get_properties(session_.device(), &properties));
  EXPECT_STREQ(properties.plugin, "vulkan");
  EXPECT_STREQ(properties.kind, "vulkan");
  EXPECT_GT(std::strlen(properties.name), 0u);
  EXPECT_GT(properties.memory_bytes, 0u);
}

TEST_F(VulkanPluginTest, RunsElementwiseFloatProgramsWithScalarBroadcasts) {
  const std::string hlo =
      "HloModule m\nENTRY e {\n  a = f32[1000] parameter(0)\n  b = f32[1000] parameter(1)\n"
      "  two = f32[] constant(2)\n  t = f32[1000] broadcast(two), dimensions={}\n"
      "  s = f32[1000] add(a, b)\n  m = f32[1000] multiply(s, t)\n  x = f32[1000] maximum(m, a)\n"
      "  n = f32[1000] negate(x)\n  ROOT r = (f32[1000], f32[1000]) tuple(n, s)\n}\n";
  anvil_executable* exe = nullptr;
  ASSERT_OK(Compile(hlo, &exe));
  std::vector<float> a(1000), b(1000);
  for (int k = 0; k < 1000; ++k) {
    a[k] = static_cast<float>(k) * 0.5f - 100.0f;
    b[k] = static_cast<float>(k % 7) - 3.0f;
  }
  a[5] = NAN;  // maximum propagates NaN
  anvil_buffer* in_a = FromHost(a.data(), ANVIL_F32, 1000);
  anvil_buffer* in_b = FromHost(b.data(), ANVIL_F32, 1000);
  auto out = Run(exe, {in_a, in_b}, 2);
  auto n = ToHost<float>(out[0], 1000);
  auto s = ToHost<float>(out[1], 1000);
  for (int k = 0; k < 1000; ++k) {
    const float sum = a[k] + b[k];
    const float expected = -std::fmax(sum * 2.0f, a[k]);
    if (k == 5) {
      EXPECT_TRUE(std::isnan(s[k]));
      EXPECT_TRUE(std::isnan(n[k]));
    } else {
      EXPECT_EQ(s[k], sum) << k;
      EXPECT_EQ(n[k], expected) << k;
    }
  }
  for (anvil_buffer* buffer : {in_a, in_b, out[0], out[1]}) EXPECT_OK(anvil_buffer_destroy(buffer));
  EXPECT_OK(anvil_executable_destroy(exe));
}

TEST_F(VulkanPluginTest, RunsIntegerProgramsWithWrapAround) {
  const std::string hlo =
      "HloModule m\nENTRY e {\n  a = s32[4] parameter(0)\n  b = s32[4] parameter(1)\n"
      "  p = s32[4] multiply(a, b)\n  q = s32[4] xor(p, a)\n  ROOT r = s32[4] minimum(q, b)\n}\n";
  anvil_executable* exe = nullptr;
  ASSERT_OK(Compile(hlo, &exe));
  const int32_t a[] = {2147483647, -5, 7, 0};
  const int32_t b[] = {2, 3, -9, 100};
  anvil_buffer* in_a = FromHost(a, ANVIL_S32, 4);
  anvil_buffer* in_b = FromHost(b, ANVIL_S32, 4);
  auto out = Run(exe, {in_a, in_b}, 1);
  auto r = ToHost<int32_t>(out[0], 4);
  for (int k = 0; k < 4; ++k) {
    const auto p = static_cast<int32_t>(static_cast<uint32_t>(a[k]) * static_cast<uint32_t>(b[k]));
    EXPECT_EQ(r[k], std::min(p ^ a[k], b[k])) << k;
  }
  for (anvil_buffer* buffer : {in_a, in_b, out[0]}) EXPECT_OK(anvil_buffer_destroy(buffer));
  EXPECT_OK(anvil_executable_destroy(exe));
}

TEST_F(VulkanPluginTest, RunsAWhileLoopDecidedOnTheHost) {
  // Doubles v until its first element passes 1000: the condition's value is
  // read back between submissions.
  const std::string hlo = R"(HloModule m
cond {
  s = (s32[], f32[3]) parameter(0)
  v = f32[3] get-tuple-element(s), index=1
  first = f32[1] slice(v), slice={[0:1]}
  head = f32[] reshape(first)
  limit = f32[] constant(1000)
  ROOT go = pred[] compare(head, limit), direction=LT
}
body {
  s = (s32[], f32[3]) parameter(0)
  n = s32[] get-tuple-element(s), index=0
  v = f32[3] get-tuple-element(s), index=1
  one = s32[] constant(1)
  m = s32[] add(n, one)
  w = f32[3] add(v, v)
  ROOT t = (s32[], f32[3]) tuple(m, w)
}
ENTRY e {
  v = f32[3] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[3]) tuple(zero, v)
  loop = (s32[], f32[3]) while(init), condition=cond, body=body
  n = s32[] get-tuple-element(loop), index=0
  w = f32[3] get-tuple-element(loop), index=1
  ROOT r = (s32[], f32[3]) tuple(n, w)
})";
  anvil_executable* exe = nullptr;
  ASSERT_OK(Compile(hlo, &exe));
  const float v[] = {3, -1, 0.5f};
  anvil_buffer* in = FromHost(v, ANVIL_F32, 3);
  auto out = Run(exe, {in}, 2);
  EXPECT_EQ(session_.ToHost<int32_t>(out[0], 1), std::vector<int32_t>{9});  // 3 * 2^9 = 1536
  EXPECT_EQ(ToHost<float>(out[1], 3), (std::vector<float>{1536, -512, 256}));
  for (anvil_buffer* buffer : {in, out[0], out[1]}) EXPECT_OK(anvil_buffer_destroy(buffer));
  EXPECT_OK(anvil_executable_destroy(exe));
}

TEST_F(VulkanPluginTest, ArraysLargerThanTheStorageBufferRange) {
  // 48 Mi floats: 192 MiB per array, past lavapipe's 128 MiB
  // maxStorageBufferRange (kernels reach memory by device address).
  const int64_t n = int64_t{48} << 20;
  const std::string hlo = "HloModule m\nENTRY e {\n  a = f32[" + std::to_string(n) + "] parameter(0)\n  ROOT r = f32[" +
                          std::to_string(n) + "] add(a, a)\n}\n";
  anvil_executable* exe = nullptr;
  ASSERT_OK(Compile(hlo, &exe));
  std::vector<float> a(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) a[static_cast<size_t>(k)] = static_cast<float>(k % 1000003);
  anvil_buffer* in = FromHost(a.data(), ANVIL_F32, n);
  auto out = Run(exe, {in}, 1);
  auto r = ToHost<float>(out[0], static_cast<size_t>(n));
  int64_t wrong = 0;
  for (int64_t k = 0; k < n; ++k) wrong += r[static_cast<size_t>(k)] != 2 * a[static_cast<size_t>(k)];
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(r.back(), 2 * a.back());
  for (anvil_buffer* buffer : {in, out[0]}) EXPECT_OK(anvil_buffer_destroy(buffer));
  EXPECT_OK(anvil_executable_destroy(exe));
}

TEST_F(VulkanPluginTest, ExecutionsFromManyThreadsAtOnce) {
  // One executable, four threads, each executing and checking 25 times: the
  // device's queue and command pool are shared, so this is where a missing
  // lock would show.
  anvil_executable* exe = nullptr;
  ASSERT_OK(Compile("HloModule m\nENTRY e {\n  a = s32[256] parameter(0)\n  b = s32[256] parameter(1)\n"
                    "  ROOT r = s32[256] multiply(a, b)\n}\n",
                    &exe));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int run = 0; run < 25; ++run) {
        std::vector<int32_t> a(256), b(256, t + run);
        for (int k = 0; k < 256; ++k) a[k] = k;
        anvil_buffer* in_a = FromHost(a.data(), ANVIL_S32, 256);
        anvil_buffer* in_b = FromHost(b.data(), ANVIL_S32, 256);
        auto out = Run(exe, {in_a, in_b}, 1);
        auto r = ToHost<int32_t>(out[0], 256);
        for (int k = 0; k < 256; ++k) wrong += r[k] != k * (t + run);
        for (anvil_buffer* buffer : {in_a, in_b, out[0]}) {
          wrong += !anvil::testkit::TakeMessage(anvil_buffer_destroy(buffer)).empty();
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_OK(anvil_executable_destroy(exe));
}

TEST_F(VulkanPluginTest, AnOpWithoutAKernelIsUnimplementedAndNamed) {
  const std::string hlo =
      "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n"
      "  ROOT r = f32[4] all-reduce(a), replica_groups={}, to_apply=add\n}\n"
      "add { x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y) }\n";
  anvil_executable* exe = nullptr;
  anvil_status* status = Compile(hlo, &exe);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(anvil_status_get_code(status), ANVIL_UNIMPLEMENTED);
  const std::string message = anvil::testkit::TakeMessage(status);
  EXPECT_NE(message.find("no device kernel for %r (all-reduce f32[4])"), std::string::npos) << message;
}

// bf16 and f16 sums carry a double and round once to the narrow type, as
// the evaluator's do: rounded to f32 first, 1 + 2^-8 + 2^-30 (bf16) lands
// on the tie between 1 and 1 + 2^-7 and goes to even, 1, where the sum
// rounded once is 1 + 2^-7; f16 likewise with 1 + 2^-11 + 2^-24. The
// conformance tolerance cannot see one unit in the last place; the bits
// can.
TEST_F(VulkanPluginTest, NarrowSumsRoundOnceFromDouble) {
  const std::string hlo =
      "HloModule m\nENTRY e {\n  x = bf16[3] parameter(0)\n  y = f16[3] parameter(1)\n"
      "  zb = bf16[] constant(0)\n  zh = f16[] constant(0)\n"
      "  s = bf16[] reduce(x, zb), dimensions={0}, to_apply=add_bf16\n"
      "  t = f16[] reduce(y, zh), dimensions={0}, to_apply=add_f16\n"
      "  w = bf16[3] reduce-window(x, zb), window={size=3 pad=2_0}, to_apply=add_bf16\n"
      "  ROOT r = (bf16[], f16[], bf16[3]) tuple(s, t, w)\n}\n"
      "add_bf16 { a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n  ROOT s = bf16[] add(a, b) }\n"
      "add_f16 { a = f16[] parameter(0)\n  b = f16[] parameter(1)\n  ROOT s = f16[] add(a, b) }\n";
  anvil_executable* exe = nullptr;
  ASSERT_OK(Compile(hlo, &exe));
  // bf16 1, 2^-8, 2^-30; f16 1, 2^-11, 2^-24.
  const uint16_t x[3] = {0x3F80, 0x3B80, 0x3080};
  const uint16_t y[3] = {0x3C00, 0x1000, 0x0001};
  anvil_buffer* in_x = FromHost(x, ANVIL_BF16, 3);
  anvil_buffer* in_y = FromHost(y, ANVIL_F16, 3);
  auto out = Run(exe, {in_x, in_y}, 3);
  EXPECT_EQ(ToHost<uint16_t>(out[0], 1), std::vector<uint16_t>({0x3F81}));  // 1 + 2^-7
  EXPECT_EQ(ToHost<uint16_t>(out[1], 1), std::vector<uint16_t>({0x3C01}));  // 1 + 2^-10
  EXPECT_EQ(ToHost<uint16_t>(out[2], 3), std::vector<uint16_t>({0x3F80, 0x3F80, 0x3F81}));
  for (anvil_buffer* buffer : {in_x, in_y, out[0], out[1], out[2]}) EXPECT_OK(anvil_buffer_destroy(buffer));
  EXPECT_OK(anvil_executable_destroy(exe));
}

// Through the C ABI: on lavapipe, whose driver the plugin recognises, a
// reduce-window whose every result sums 70000 positions is refused at
// compile (such loops once ran and returned zeros); a device without the
// limit compiles it.
TEST_F(VulkanPluginTest, LoopsPastLavapipesLimitAreRefusedNotCutShort) {
  anvil_device_properties properties{};
  properties.struct_size = ANVIL_DEVICE_PROPERTIES_STRUCT_SIZE;
  ASSERT_OK(anvil_device_get_properties(session_.device(), &properties));
  anvil_executable* exe = nullptr;
  anvil_status* status = Compile(kWindowsOf70000, &exe);
  if (std::string(properties.name).find("llvmpipe") == std::string::npos) {
    EXPECT_EQ(status, nullptr) << anvil::testkit::TakeMessage(status);
    if (exe) anvil_executable_destroy(exe);
    return;
  }
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(anvil_status_get_code(status), ANVIL_UNIMPLEMENTED);
  const std::string message = anvil::testkit::TakeMessage(status);
  EXPECT_NE(message.find("about 70000 loop iterations in one invocation"), std::string::npos) << message;
  EXPECT_NE(message.find("lavapipe"), std::string::npos) << message;
}

// A cumulative sum of 100000 ones (JAX's cumsum of a long vector): one
// invocation walking the line would pass lavapipe's limit (it was refused),
// so the line runs in chunks, and every prefix, a whole number below
// 2^24, is exact. The reference evaluator walks each window (5 10^9
// adds), so this checks the values directly.
TEST_F(VulkanPluginTest, ScansPastLavapipesLimitRunInChunks) {
  const std::string hlo =
      "HloModule m\nENTRY e {\n  a = f32[100000] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT s = f32[100000] reduce-window(a, z), window={size=100000 pad=99999_0}, to_apply=add\n}\n"
      "add { x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y) }\n";
  anvil_executable* exe = nullptr;
  ASSERT_OK(Compile(hlo, &exe));
  const std::vector<float> ones(100000, 1.0f);
  anvil_buffer* in = FromHost(ones.data(), ANVIL_F32, 100000);
  auto out = Run(exe, {in}, 1);
  const std::vector<float> sums = ToHost<float>(out[0], 100000);
  int64_t wrong = 0, first_wrong = -1;
  for (int64_t k = 0; k < 100000; ++k) {
    if (sums[static_cast<size_t>(k)] != static_cast<float>(k + 1) && wrong++ == 0) first_wrong = k;
  }
  EXPECT_EQ(wrong, 0) << "first at " << first_wrong << ": " << sums[static_cast<size_t>(first_wrong)];
  for (anvil_buffer* buffer : {in, out[0]}) EXPECT_OK(anvil_buffer_destroy(buffer));
  EXPECT_OK(anvil_executable_destroy(exe));
}

}  // namespace
