#include "hlo/verifier.h"

#include <gtest/gtest.h>

#include "hlo/hlo_parser.h"

namespace anvil::hlo {
namespace {

Status VerifyEntry(const std::string& body, const std::string& extra = "") {
  auto m = ParseHloModule("HloModule m\n" + extra + "\nENTRY e {\n" + body + "\n}\n");
  if (!m.ok()) return m.status();
  return Verify(**m);
}

TEST(Verifier, AcceptsWellTypedPrograms) {
  EXPECT_TRUE(VerifyEntry("  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n"
                          "  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}")
                  .ok());
  EXPECT_TRUE(VerifyEntry("  a = f32[1,5,5,2] parameter(0)\n  k = f32[3,3,2,4] parameter(1)\n"
                          "  ROOT c = f32[1,3,3,4] convolution(a, k), window={size=3x3}, dim_labels=b01f_01io->b01f")
                  .ok());
  EXPECT_TRUE(VerifyEntry("  a = f32[3,4] parameter(0)\n  z = f32[] constant(0)\n"
                          "  ROOT p = f32[6,11] pad(a, z), padding=1_2x0_1_2")
                  .ok());
  EXPECT_TRUE(VerifyEntry("  a = f32[5,7] parameter(0)\n  i = s32[3,1] parameter(1)\n"
                          "  ROOT g = f32[3,7] gather(a, i), offset_dims={1}, collapsed_slice_dims={0},"
                          " start_index_map={0}, index_vector_dim=1, slice_sizes={1,7}")
                  .ok());
}

TEST(Verifier, RejectsDeclaredShapesThatDisagree) {
  Status s = VerifyEntry("  a = f32[2,3] parameter(0)\n  ROOT t = f32[2,3] transpose(a), dimensions={1,0}");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("declared shape f32[2,3] but the operands give f32[3,2]"), std::string::npos)
      << s.message();
  s = VerifyEntry("  a = f32[1,5,5,2] parameter(0)\n  k = f32[3,3,2,4] parameter(1)\n"
                  "  ROOT c = f32[1,5,5,4] convolution(a, k), window={size=3x3}, dim_labels=b01f_01io->b01f");
  EXPECT_NE(s.message().find("operands give f32[1,3,3,4]"), std::string::npos) << s.message();
}

TEST(Verifier, ChecksRngBounds) {
  EXPECT_TRUE(VerifyEntry("  a = f32[] constant(0)\n  b = f32[] constant(1)\n"
                          "  ROOT r = f32[4] rng(a, b), distribution=rng_uniform")
                  .ok());
  // The evaluator and the CPU kernel read the bounds as result elements.
  Status s = VerifyEntry("  a = f32[] constant(0)\n  b = f32[] constant(1)\n"
                         "  ROOT r = f64[4] rng(a, b), distribution=rng_uniform");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("rng's bounds must be scalars of its result's element type"), std::string::npos)
      << s.message();
  s = VerifyEntry("  a = s32[2] constant({0, 0})\n  b = s32[] constant(1)\n"
                  "  ROOT r = s32[4] rng(a, b), distribution=rng_uniform");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST(Verifier, RejectsUseBeforeDefinition) {
  Status s = VerifyEntry("  ROOT n = f32[2] negate(p)\n  p = f32[2] parameter(0)");
  EXPECT_NE(s.message().find("uses %p before it is defined"), std::string::npos) << s.message();
}

TEST(Verifier, ChecksWhileSignatures) {
  const std::string comps =
      "cond {\n  s = (s32[]) parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
      "body {\n  s = (s32[]) parameter(0)\n  ROOT t = (f32[]) tuple(f32[] constant(1))\n}\n";
  Status s = VerifyEntry("  i = s32[] constant(0)\n  t = (s32[]) tuple(i)\n"
                         "  ROOT w = (s32[]) while(t), condition=cond, body=body",
                         comps);
  EXPECT_NE(s.message().find("body returns (f32[]) but the loop state is (s32[])"), std::string::npos)
      << s.message();
}

TEST(Verifier, InfersReduceAndFft) {
  auto m = ParseHloModule(
      "HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
      "ENTRY e {\n  a = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n"
      "  r = reduce(a, z), dimensions={1}, to_apply=add\n  ROOT f = fft(a), fft_type=RFFT, fft_length={6}\n}\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->entry->Find("r")->shape.ToString(false), "f32[4]");
  EXPECT_EQ((*m)->entry->root->shape.ToString(false), "c64[4,4]");
}

}  // namespace
}  // namespace anvil::hlo
