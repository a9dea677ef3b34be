// The Vulkan plugin through the public C ABI, on whichever Vulkan device the
// machine has (Mesa's lavapipe on CI, which installs mesa-vulkan-drivers), and
// its SPIR-V kernels through SPIRV-Tools' validator.
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
#include "plugins/vulkan/spirv_elementwise.h"

namespace {

using anvil::hlo::ElementType;
using anvil::hlo::Opcode;

#define EXPECT_OK(expr) ANVIL_TESTKIT_EXPECT_OK(expr)
#define ASSERT_OK(expr) ANVIL_TESTKIT_ASSERT_OK(expr)

TEST(SpirvElementwise, EveryKernelValidates) {
  const Opcode unary[] = {Opcode::kCopy, Opcode::kNegate, Opcode::kAbs, Opcode::kExp, Opcode::kLog, Opcode::kSqrt,
                          Opcode::kRsqrt, Opcode::kTanh, Opcode::kSin, Opcode::kCos, Opcode::kFloor, Opcode::kCeil};
  const Opcode binary[] = {Opcode::kAdd, Opcode::kSubtract, Opcode::kMultiply, Opcode::kDivide, Opcode::kMaximum,
                           Opcode::kMinimum, Opcode::kAnd, Opcode::kOr, Opcode::kXor};
  int kernels = 0;
  for (ElementType t : {ElementType::kF32, ElementType::kS32, ElementType::kU32}) {
    for (Opcode op : unary) {
      if (!anvil::vulkan::HasElementwiseKernel(op, t, 1)) continue;
      auto words = anvil::vulkan::EmitElementwise({op, t, {false}});
      EXPECT_TRUE(words.ok()) << anvil::hlo::OpcodeName(op) << ": " << words.status().message();
      ++kernels;
    }
    for (Opcode op : binary) {
      if (!anvil::vulkan::HasElementwiseKernel(op, t, 2)) continue;
      for (bool scalar : {false, true}) {
        auto words = anvil::vulkan::EmitElementwise({op, t, {false, scalar}});
        EXPECT_TRUE(words.ok()) << anvil::hlo::OpcodeName(op) << ": " << words.status().message();
        ++kernels;
      }
    }
  }
  EXPECT_GE(kernels, 40);
  // Integer division has HLO-defined answers for x/0 that a plain OpSDiv
  // does not give: refused, with the op and type named.
  auto refused = anvil::vulkan::EmitElementwise({Opcode::kDivide, ElementType::kS32, {false, false}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("divide on s32"), std::string::npos) << refused.status().message();
}

TEST(SpirvElementwise, TheValidatorCatchesABrokenModule) {
  auto words = anvil::vulkan::EmitElementwise({Opcode::kAdd, ElementType::kF32, {false, false}});
  ASSERT_TRUE(words.ok());
  std::vector<uint32_t> broken = *words;
  broken.resize(broken.size() - 2);  // cut off the function's end
  EXPECT_FALSE(anvil::vulkan::ValidateSpirv(broken).ok());
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
      "HloModule m\nENTRY e {\n  a = f32[4,4] parameter(0)\n"
      "  ROOT t = f32[4,4] transpose(a), dimensions={1,0}\n}\n";
  anvil_executable* exe = nullptr;
  anvil_status* status = Compile(hlo, &exe);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(anvil_status_get_code(status), ANVIL_UNIMPLEMENTED);
  const std::string message = anvil::testkit::TakeMessage(status);
  EXPECT_NE(message.find("transpose"), std::string::npos) << message;
}

}  // namespace
