#include "hlo/shape.h"

#include <gtest/gtest.h>

#include "hlo/hlo_parser.h"

namespace anvil::hlo {
namespace {

TEST(Shape, PrintsInBothSpellings) {
  Shape s(ElementType::kF32, {2, 3});
  EXPECT_EQ(s.ToString(), "f32[2,3]{1,0}");
  EXPECT_EQ(s.ToMlirString(), "tensor<2x3xf32>");
  EXPECT_EQ(Shape::Scalar(ElementType::kC64).ToMlirString(), "tensor<complex<f32>>");
  Shape t = Shape::Tuple({Shape::Scalar(ElementType::kS32), Shape::Token()});
  EXPECT_EQ(t.ToString(), "(s32[], token[])");
  EXPECT_EQ(t.ToMlirString(), "tuple<tensor<i32>, !stablehlo.token>");
  EXPECT_EQ(s.ElementCount(), 6);
}

TEST(Shape, ParsesLayoutsAsWritten) {
  auto s = ParseHloShape("f32[2,3]{0,1}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->layout().minor_to_major, (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(s->HasDefaultLayout());
  auto tiled = ParseHloShape("bf16[8,128]{1,0:T(8,128)(2,1)}");
  ASSERT_TRUE(tiled.ok()) << tiled.status().message();
  EXPECT_EQ(tiled->layout().tail, "T(8,128)(2,1)");
  EXPECT_EQ(tiled->ToString(), "bf16[8,128]{1,0:T(8,128)(2,1)}");
  auto plain = ParseHloShape("s8[4,5]");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->HasDefaultLayout());
  auto bounded = ParseHloShape("f32[<=8,2]");
  ASSERT_TRUE(bounded.ok());
  EXPECT_TRUE(bounded->IsDynamicDim(0));
  EXPECT_EQ(bounded->ToString(false), "f32[<=8,2]");
}

TEST(Shape, CompatibleIgnoresLayout) {
  auto a = ParseHloShape("f32[2,3]{0,1}");
  auto b = ParseHloShape("f32[2,3]{1,0}");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->Compatible(*b));
  EXPECT_FALSE(*a == *b);
  EXPECT_FALSE(a->Compatible(Shape(ElementType::kF32, {3, 2})));
}

TEST(Shape, RejectsMalformed) {
  EXPECT_FALSE(ParseHloShape("f32[2,").ok());
  EXPECT_FALSE(ParseHloShape("f32[2]{0,1}").ok());
  EXPECT_FALSE(ParseHloShape("f32[?]").ok());
  EXPECT_FALSE(ParseHloShape("q32[2]").ok());
}

}  // namespace
}  // namespace anvil::hlo
