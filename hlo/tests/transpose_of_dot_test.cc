#include "hlo/transpose_of_dot.h"

#include <gtest/gtest.h>

#include "hlo/canonicalize.h"
#include "hlo/evaluator.h"
#include "hlo/hlo_parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

namespace anvil::hlo {
namespace {

// A weight gradient as JAX computes it: g^T x, contracting the batch, then
// transposed into w's [in, out] layout.
const char kWeightGradient[] = R"(HloModule m
ENTRY e {
  g = f32[6,3] parameter(0)
  x = f32[6,4] parameter(1)
  d = f32[3,4] dot(g, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}, operand_precision={high,highest}
  ROOT t = f32[4,3] transpose(d), dimensions={1,0}
}
)";

Literal Counting(const Shape& shape, int64_t start) {
  Literal l(shape);
  for (int64_t k = 0; k < l.element_count(); ++k) l.SetF32(k, static_cast<float>((k * 7 + start) % 11) - 5.0f);
  return l;
}

TEST(TransposeOfDot, ATransposedProductBecomesTheSwappedProductWithTheSameValues) {
  auto before = ParseHloModule(kWeightGradient);
  auto after = ParseHloModule(kWeightGradient);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(FoldTransposesOfDots(**after), 1);
  RemoveDeadCode(**after);
  ASSERT_TRUE(Verify(**after).ok()) << Verify(**after).message();
  const std::string text = Print(**after);
  EXPECT_NE(text.find("f32[4,3]{1,0} dot(%x, %g), lhs_contracting_dims={0}, rhs_contracting_dims={0}, "
                      "operand_precision={highest,high}"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("transpose"), std::string::npos) << text;
  const Literal g = Counting((*before)->entry->parameters[0]->shape, 1);
  const Literal x = Counting((*before)->entry->parameters[1]->shape, 2);
  auto want = EvaluateModule(**before, {&g, &x});
  auto got = EvaluateModule(**after, {&g, &x});
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_EQ(*got, *want);
}

TEST(TransposeOfDot, ProductsReadElsewhereOrWithBatchesAndOtherPermutationsStay) {
  const char* const programs[] = {
      // The product is read by something else too.
      R"(HloModule m
ENTRY e {
  a = f32[3,5] parameter(0)
  b = f32[5,4] parameter(1)
  d = f32[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[4,3] transpose(d), dimensions={1,0}
  ROOT r = (f32[4,3], f32[3,4]) tuple(t, d)
}
)",
      // A batched product.
      R"(HloModule m
ENTRY e {
  a = f32[2,3,5] parameter(0)
  b = f32[2,5,3] parameter(1)
  d = f32[2,3,3] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT t = f32[2,3,3] transpose(d), dimensions={0,2,1}
}
)",
      // A transpose of something else.
      R"(HloModule m
ENTRY e {
  a = f32[3,5] parameter(0)
  ROOT t = f32[5,3] transpose(a), dimensions={1,0}
}
)"};
  for (const char* program : programs) {
    auto m = ParseHloModule(program);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(FoldTransposesOfDots(**m), 0) << program;
  }
}

}  // namespace
}  // namespace anvil::hlo
