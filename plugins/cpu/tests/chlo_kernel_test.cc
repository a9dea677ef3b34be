// The CPU plugin's chlo kernels (kernels_chlo.cc) through the C ABI, bit for
// bit: next_after steps one value of the element's own format (the
// conformance runner's ULP-bounded comparison would let a step the wrong
// way pass), and lgamma and erf of f32 are the double function rounded
// once, as the evaluator computes them.
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

// Runs custom-call `target` over the operands (each of `count` elements of
// `type`, spelled `spelling` in HLO) and returns the result.
template <typename T>
std::vector<T> RunChlo(const std::string& target, const char* spelling, anvil_element_type type,
                       const std::vector<std::vector<T>>& operands) {
  const int64_t n = static_cast<int64_t>(operands.at(0).size());
  anvil::testkit::AbiSession session("cpu");
  EXPECT_TRUE(session.ok()) << session.error();
  if (!session.ok()) return {};
  const std::string shape = std::string(spelling) + "[" + std::to_string(n) + "]";
  std::string hlo = "HloModule t\nENTRY e {\n";
  std::string names;
  for (size_t k = 0; k < operands.size(); ++k) {
    hlo += "  p" + std::to_string(k) + " = " + shape + " parameter(" + std::to_string(k) + ")\n";
    names += (k ? ", p" : "p") + std::to_string(k);
  }
  hlo += "  ROOT r = " + shape + " custom-call(" + names + "), custom_call_target=\"" + target + "\"\n}\n";
  anvil_executable* exe = nullptr;
  anvil_status* status = session.Compile(hlo, &exe);
  EXPECT_EQ(status, nullptr) << (status ? anvil_status_get_message(status) : "");
  if (status) {
    anvil_status_free(status);
    return {};
  }
  std::vector<anvil_buffer*> in;
  for (const auto& o : operands) in.push_back(session.FromHost(o.data(), type, {n}));
  std::vector<anvil_buffer*> out = session.Execute(exe, in, 1);
  std::vector<T> result = session.ToHost<T>(out.at(0), static_cast<size_t>(n));
  for (anvil_buffer* b : in) anvil_buffer_destroy(b);
  anvil_buffer_destroy(out[0]);
  anvil_executable_destroy(exe);
  return result;
}

template <typename T>
void ExpectSameBits(const std::vector<T>& actual, const std::vector<T>& expected, const std::vector<T>& x) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t k = 0; k < actual.size(); ++k) {
    if (std::isnan(expected[k])) {
      EXPECT_TRUE(std::isnan(actual[k])) << "at x = " << x[k];
      continue;
    }
    EXPECT_EQ(std::memcmp(&actual[k], &expected[k], sizeof(T)), 0)
        << "at x = " << x[k] << ": " << actual[k] << ", expected " << expected[k];
  }
}

template <typename T>
void CheckNextAfter(const char* spelling, anvil_element_type type) {
  constexpr T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> x = {1, 1, 0, -0.0, 0, -1, -1, 2, 3, nan, 1, std::numeric_limits<T>::max(), -inf, 1e-30f};
  const std::vector<T> y = {2, 0, 1, -1, -0.0, -2, 0, 2, nan, 1, inf, inf, 0, -1};
  std::vector<T> expected;
  for (size_t k = 0; k < x.size(); ++k) expected.push_back(std::nextafter(x[k], y[k]));
  ExpectSameBits(RunChlo<T>("chlo.next_after", spelling, type, {x, y}), expected, x);
}

TEST(CpuChloKernels, NextAfterStepsOneValueOfTheElementsFormat) {
  CheckNextAfter<float>("f32", ANVIL_F32);
  CheckNextAfter<double>("f64", ANVIL_F64);
}

TEST(CpuChloKernels, LgammaAndErfOfF32AreTheDoubleFunctionRoundedOnce) {
  std::vector<float> x;
  for (int k = -400; k <= 400; ++k) x.push_back(static_cast<float>(k) * 0.0173f);
  for (float v : {0.0f, -0.0f, 1.0f, 2.0f, -3.0f, 1e-30f, 30.0f, std::numeric_limits<float>::infinity()}) x.push_back(v);
  std::vector<float> lgamma, erf;
  for (float v : x) {
    lgamma.push_back(static_cast<float>(std::lgamma(static_cast<double>(v))));
    erf.push_back(static_cast<float>(std::erf(static_cast<double>(v))));
  }
  ExpectSameBits(RunChlo<float>("chlo.lgamma", "f32", ANVIL_F32, {x}), lgamma, x);
  ExpectSameBits(RunChlo<float>("chlo.erf", "f32", ANVIL_F32, {x}), erf, x);
}

}  // namespace
