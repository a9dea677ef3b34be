// How the runner compares a plugin's results with the evaluator's.
#include "conformance/checks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "conformance/inputs.h"

namespace anvil::conformance {
namespace {

hlo::Literal F32(const std::vector<float>& values) {
  hlo::Literal l(hlo::Shape(hlo::ElementType::kF32, {static_cast<int64_t>(values.size())}));
  for (size_t k = 0; k < values.size(); ++k) l.SetF32(static_cast<int64_t>(k), values[k]);
  return l;
}

TEST(CompareResults, IntegersMustBeExact) {
  hlo::Literal a(hlo::Shape(hlo::ElementType::kS32, {2})), b(hlo::Shape(hlo::ElementType::kS32, {2}));
  a.SetInt(1, 7);
  b.SetInt(1, 7);
  EXPECT_TRUE(CompareResults(a, b).ok());
  b.SetInt(1, 8);
  EXPECT_FALSE(CompareResults(a, b).ok());
}

TEST(CompareResults, FloatsWithinTheAbsoluteFloorOrAFewUlp) {
  // 1e-6 apart on values of magnitude 1: inside 256 ULP of the largest value.
  EXPECT_TRUE(CompareResults(F32({1.0f, 0.5f}), F32({1.0f, 0.500001f})).ok());
  // 1e-3 apart: too far for a short sum.
  EXPECT_FALSE(CompareResults(F32({1.0f, 0.5f}), F32({1.0f, 0.501f})).ok());
  // NaN against NaN is the same answer.
  EXPECT_TRUE(CompareResults(F32({NAN}), F32({NAN})).ok());
}

TEST(CompareResults, TheFloorGrowsWithTheSquareRootOfTheLongestSum) {
  // 3e-4 apart: 8 sqrt(n) ULP of 1.0 reaches it once n is about 1e6.
  EXPECT_FALSE(CompareResults(F32({1.0f, 0.5f}), F32({1.0f, 0.5003f}), 1024).ok());
  EXPECT_TRUE(CompareResults(F32({1.0f, 0.5f}), F32({1.0f, 0.5003f}), 1 << 20).ok());
}

TEST(CompareResults, NarrowFloatsAreHeldToTheirOwnUlpsNotToAFloorOfThem) {
  hlo::Literal actual(hlo::Shape(hlo::ElementType::kBF16, {3})), expected(hlo::Shape(hlo::ElementType::kBF16, {3}));
  for (int64_t k = 0; k < 3; ++k) {
    actual.SetDouble(k, 4.0);
    expected.SetDouble(k, 4.0);
  }
  // One bf16 ULP (2^-5 at 4) is a rounding of the same wide result: close.
  actual.SetDouble(1, 4.03125);
  EXPECT_TRUE(CompareResults(actual, expected).ok());
  // 1.0 off at a scale of 4: 256 bf16 ULPs of the largest value (8.0)
  // would let it through; the f32-based floor does not.
  actual.SetDouble(1, 5.0);
  EXPECT_FALSE(CompareResults(actual, expected).ok());
}

TEST(CompareResults, NamesTheElementThatIsTooFar) {
  // Element 0 is 100 ULP off but inside the absolute floor; element 2 is not.
  const hlo::Status s = CompareResults(F32({1e-6f, 1.0f, 0.25f}), F32({1.00001e-6f, 1.0f, 0.3f}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("element 2 is 0.25, expected 0.3"), std::string::npos) << s.message();
}

TEST(MaxAbsDifference, LargestGapAndNaNs) {
  EXPECT_EQ(MaxAbsDifference(F32({1.0f, 2.0f, 3.0f}), F32({1.0f, 2.5f, 2.75f})), 0.5);
  EXPECT_EQ(MaxAbsDifference(F32({NAN, 1.0f}), F32({NAN, 1.0f})), 0.0);
  EXPECT_TRUE(std::isinf(MaxAbsDifference(F32({NAN}), F32({1.0f}))));
}

TEST(NudgedByOneUlp, MovesEveryFiniteNonzeroFloatUpOneUlp) {
  std::vector<hlo::Literal> args;
  args.push_back(F32({1.0f, -0.75f, 0.0f, INFINITY}));
  const auto moved = NudgedByOneUlp(std::move(args));
  EXPECT_EQ(moved[0].GetDouble(0), std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(moved[0].GetDouble(1), std::nextafter(-0.75f, -1.0f));  // up in magnitude
  EXPECT_EQ(moved[0].GetDouble(2), 0.0);
  EXPECT_TRUE(std::isinf(moved[0].GetDouble(3)));
}

}  // namespace
}  // namespace anvil::conformance
