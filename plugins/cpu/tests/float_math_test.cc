// The CPU plugin's f32 exp, expm1, tanh, log, log1p and erf
// (single-precision polynomials), logistic (from the f32 exp) and erfc (a
// chlo custom-call; polynomials and the f32 exp), float_functions.h,
// through the C ABI: exp, expm1, log and log1p within one ulp, tanh,
// logistic and erf within two, erfc within four, of the value rounded
// from double over a dense sweep (the exp and tanh polynomials were also
// checked on every float, as were expm1, log, log1p, logistic, erf and erfc), and exact on
// the special values (signed zeros, tiny values, saturation, overflow,
// underflow to zero, infinities, NaN).
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

// Runs `op` (an HLO unary op on f32, with `attributes` after its operand)
// over `x` through the C ABI and returns the results.
std::vector<float> RunUnary(const std::string& op, const std::vector<float>& x, const std::string& attributes = "") {
  const int64_t n = static_cast<int64_t>(x.size());
  anvil::testkit::AbiSession session("cpu");
  EXPECT_TRUE(session.ok()) << session.error();
  if (!session.ok()) return {};
  const std::string shape = "f32[" + std::to_string(n) + "]";
  anvil_executable* exe = nullptr;
  anvil_status* status = session.Compile(
      "HloModule t\nENTRY e {\n  x = " + shape + " parameter(0)\n  ROOT y = " + shape + " " + op + "(x)" + attributes + "\n}\n", &exe);
  EXPECT_EQ(status, nullptr) << (status ? anvil_status_get_message(status) : "");
  if (status) {
    anvil_status_free(status);
    return {};
  }
  anvil_buffer* in = session.FromHost(x.data(), ANVIL_F32, {n});
  std::vector<anvil_buffer*> out = session.Execute(exe, {in}, 1);
  std::vector<float> y = session.ToHost<float>(out[0], static_cast<size_t>(n));
  anvil_buffer_destroy(in);
  anvil_buffer_destroy(out[0]);
  anvil_executable_destroy(exe);
  return y;
}

// A dense sweep of [-limit, limit] and the special values.
std::vector<float> Sweep(float limit) {
  std::vector<float> x;
  for (int k = -200000; k <= 200000; ++k) x.push_back(static_cast<float>(k) * (limit / 200000));
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-5f, 0x1p-13f, -0x1p-13f, 0x1.fffffep-14f, 9.0f, 9.1f, 20.0f, 88.7f,
                  88.8f, -87.4f, -103.9f, -104.0f, 100.0f, -100.0f, std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}) {
    x.push_back(v);
  }
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  return x;
}

// `y` within `ulps` of `reference` computed in double and rounded; NaN must
// give NaN, and exact values (zeros, infinities, values that saturate, and
// with `tiny_exact` the values at tiny x) must come out exactly, sign
// included.
void ExpectWithinUlps(int64_t ulps, const std::vector<float>& x, const std::vector<float>& y,
                      double (*reference)(double), bool tiny_exact = true) {
  ASSERT_EQ(x.size(), y.size());
  int64_t worst = 0;
  float worst_at = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    const float expected = static_cast<float>(reference(static_cast<double>(x[k])));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(y[k])) << x[k];
      continue;
    }
    if (expected == 0 || std::isinf(expected) || std::isinf(x[k]) || (tiny_exact && std::fabs(x[k]) < 1e-20f)) {
      EXPECT_EQ(std::signbit(y[k]), std::signbit(expected)) << x[k];
      EXPECT_EQ(y[k], expected) << x[k];
    }
    const int64_t d = UlpDistance(y[k], expected);
    if (d > worst) {
      worst = d;
      worst_at = x[k];
    }
  }
  EXPECT_LE(worst, ulps) << "at x = " << worst_at;
}

double Logistic(double x) { return 1 / (1 + std::exp(-x)); }

TEST(CpuFloatMath, TanhIsWithinTwoUlpsOfTheCorrectlyRoundedValue) {
  const std::vector<float> x = Sweep(12);
  ExpectWithinUlps(2, x, RunUnary("tanh", x), [](double v) { return std::tanh(v); });
}

TEST(CpuFloatMath, ExpIsWithinOneUlpOfTheCorrectlyRoundedValue) {
  // Overflow above 88.72, subnormal results below -87.34, zero below -103.97.
  const std::vector<float> x = Sweep(110);
  ExpectWithinUlps(1, x, RunUnary("exponential", x), [](double v) { return std::exp(v); });
}

// Positive floats from subnormals to the largest, densely on [-4, 4] (where
// the reductions turn), and the special values.
std::vector<float> LogSweep() {
  std::vector<float> x = Sweep(4);
  // Every 4099th positive float by its bits: about 520,000 values across
  // every binade, subnormals included.
  for (uint32_t bits = 1; bits < 0x7f800000u; bits += 4099) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    x.push_back(v);
  }
  for (float v : {0.70710677f, 0.70710683f, 1.4142135f, 1.4142137f, 0.99999994f, 1.0000001f, -1.0f, -0.99999994f,
                  -1.0000001f, 0x1p-126f, 0x1.fffffcp-127f}) {
    x.push_back(v);
  }
  return x;
}

TEST(CpuFloatMath, LogIsWithinOneUlpOfTheCorrectlyRoundedValue) {
  const std::vector<float> x = LogSweep();
  ExpectWithinUlps(1, x, RunUnary("log", x), [](double v) { return std::log(v); }, /*tiny_exact=*/false);
}

TEST(CpuFloatMath, Log1pIsWithinOneUlpOfTheCorrectlyRoundedValue) {
  std::vector<float> x = LogSweep();
  for (float v = 1e-30f; v < 1.0f; v *= 1.001f) x.push_back(-v);  // down to -1, where 1 + x cancels
  ExpectWithinUlps(1, x, RunUnary("log-plus-one", x), [](double v) { return std::log1p(v); });
}

TEST(CpuFloatMath, Expm1IsWithinOneUlpOfTheCorrectlyRoundedValue) {
  // Rounds to -1 below about -17.3; overflow above 88.72.
  std::vector<float> x = Sweep(110);
  // Small magnitudes of both signs, where e^x - 1 must not cancel, down to
  // those returned as x itself.
  for (float v = 1e-30f; v < 1.0f; v *= 1.001f) {
    x.push_back(v);
    x.push_back(-v);
  }
  for (float v : {0x1p-25f, -0x1p-25f, 0x1.fffffep-26f, 0x1p-23f, 0.34657359f, -0.34657359f, 0.34657362f, 88.0f,
                  88.000008f, 88.72283f, 88.72284f, -17.0f, -17.5f, -30.0f, -30.000002f}) {
    x.push_back(v);
  }
  ExpectWithinUlps(1, x, RunUnary("exponential-minus-one", x), [](double v) { return std::expm1(v); });
}

TEST(CpuFloatMath, LogisticIsWithinTwoUlpsOfTheCorrectlyRoundedValue) {
  const std::vector<float> x = Sweep(110);
  ExpectWithinUlps(2, x, RunUnary("logistic", x), &Logistic);
}

TEST(CpuFloatMath, ErfIsWithinTwoUlpsOfTheCorrectlyRoundedValue) {
  // Two polynomials meet at 1; erf rounds to 1 above 3.92.
  std::vector<float> x = LogSweep();
  for (float v : {1.0f, 1.0000001f, 0.99999994f, 3.92f, 3.9200001f, 3.9199998f, 4.0f, 5.0f, -1.0000001f, -3.92f}) {
    x.push_back(v);
  }
  for (float v = 1e-30f; v < 1.0f; v *= 1.001f) x.push_back(-v);
  // Tiny values are 1.128 x, not x: rounded twice, not exact.
  ExpectWithinUlps(2, x, RunUnary("erf", x), [](double v) { return std::erf(v); }, /*tiny_exact=*/false);
}

TEST(CpuFloatMath, ErfcIsWithinFourUlpsOfTheCorrectlyRoundedValue) {
  // 1 - erf below 0.5; e^-x^2 times a polynomial from there (one to 2, one
  // beyond) to 10.1, above which erfc rounds to 0 (subnormal from 9.2).
  std::vector<float> x = Sweep(11);
  for (uint32_t bits = 1; bits < 0x7f800000u; bits += 4099) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    x.push_back(v);
    x.push_back(-v);
  }
  for (float v : {0.5f, 0.49999997f, 0.50000006f, 2.0f, 1.9999999f, 2.0000002f, 9.2f, 10.0f, 10.05f, 10.1f, 10.100001f,
                  -3.92f, -10.0f}) {
    x.push_back(v);
  }
  const std::vector<float> y = RunUnary("custom-call", x, ", custom_call_target=\"chlo.erfc\"");
  ExpectWithinUlps(4, x, y, [](double v) { return std::erfc(v); }, /*tiny_exact=*/false);
}

}  // namespace
