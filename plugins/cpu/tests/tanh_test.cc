// The CPU plugin's f32 tanh (computed in double from one exp) through the C
// ABI: within one ulp of tanh rounded from double over a dense sweep, and
// exact on the special values (signed zeros, tiny values, saturation,
// infinities, NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "anvil/anvil.h"
#include "conformance/testkit/abi_session.h"

namespace {

int64_t UlpDistance(float a, float b) {
  int32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  // Map the sign-magnitude order onto integers so that -0 and +0 are adjacent.
  auto ordered = [](int32_t v) { return v < 0 ? int64_t{INT32_MIN} - v : int64_t{v}; };
  return std::llabs(ordered(x) - ordered(y));
}

TEST(CpuTanh, WithinOneUlpOfTheCorrectlyRoundedValue) {
  std::vector<float> x;
  for (int k = -200000; k <= 200000; ++k) x.push_back(static_cast<float>(k) * 6e-5f);  // [-12, 12]
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-5f, 0x1p-13f, -0x1p-13f, 0x1.fffffep-14f, 9.0f, 9.1f, 20.0f, 100.0f,
                  -100.0f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}) {
    x.push_back(v);
  }
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  const int64_t n = static_cast<int64_t>(x.size());
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  const std::string shape = "f32[" + std::to_string(n) + "]";
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(
      "HloModule t\nENTRY e {\n  x = " + shape + " parameter(0)\n  ROOT t = " + shape + " tanh(x)\n}\n", &exe));
  anvil_buffer* in = session.FromHost(x.data(), ANVIL_F32, {n});
  std::vector<anvil_buffer*> out = session.Execute(exe, {in}, 1);
  std::vector<float> y = session.ToHost<float>(out[0], static_cast<size_t>(n));
  int64_t worst = 0;
  float worst_at = 0;
  for (int64_t k = 0; k < n; ++k) {
    const float expected = static_cast<float>(std::tanh(static_cast<double>(x[k])));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(y[k]));
      continue;
    }
    const int64_t d = UlpDistance(y[k], expected);
    if (d > worst) {
      worst = d;
      worst_at = x[k];
    }
    if (x[k] == 0 || std::isinf(x[k]) || std::fabs(x[k]) < 1e-20f) {
      EXPECT_EQ(std::signbit(y[k]), std::signbit(x[k])) << x[k];
      EXPECT_EQ(y[k], expected) << x[k];
    }
  }
  EXPECT_LE(worst, 1) << "at x = " << worst_at;
  anvil_buffer_destroy(in);
  anvil_buffer_destroy(out[0]);
  anvil_executable_destroy(exe);
}

}  // namespace
