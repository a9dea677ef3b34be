#include "hlo/evaluator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "hlo/hlo_parser.h"
#include "hlo/stablehlo_parser.h"

namespace anvil::hlo {
namespace {

// Evaluates the entry of `text` (no parameters) and prints the result.
std::string EvalText(const std::string& text) {
  auto m = ParseHloModule(text);
  if (!m.ok()) return "parse: " + m.status().message();
  auto r = EvaluateModule(**m, {});
  if (!r.ok()) return "eval: " + r.status().message();
  return r->ToString();
}

std::string Entry(const std::string& body) { return "HloModule m\nENTRY e {\n" + body + "\n}\n"; }

TEST(Evaluator, IntegerArithmeticWrapsAndDividesLikeXla) {
  EXPECT_EQ(EvalText(Entry("  a = s8[4] constant({127, -128, 7, -7})\n  b = s8[4] constant({1, -1, 0, 2})\n"
                      "  ROOT r = s8[4] add(a, b)")),
            "{-128, 127, 7, -5}");
  EXPECT_EQ(EvalText(Entry("  a = s32[4] constant({7, -7, 5, -2147483648})\n  b = s32[4] constant({2, 2, 0, -1})\n"
                      "  ROOT r = s32[4] divide(a, b)")),
            "{3, -3, -1, -2147483648}");
  EXPECT_EQ(EvalText(Entry("  a = s32[3] constant({7, -7, 5})\n  b = s32[3] constant({2, 2, 0})\n"
                      "  ROOT r = s32[3] remainder(a, b)")),
            "{1, -1, 5}");
  EXPECT_EQ(EvalText(Entry("  a = u8[3] constant({1, 128, 255})\n  b = u8[3] constant({1, 1, 9})\n"
                      "  ROOT r = u8[3] shift-left(a, b)")),
            "{2, 0, 0}");
  EXPECT_EQ(EvalText(Entry("  a = s8[2] constant({-128, 64})\n  b = s8[2] constant({9, 1})\n"
                      "  ROOT r = s8[2] shift-right-arithmetic(a, b)")),
            "{-1, 32}");
}

TEST(Evaluator, FloatsFollowIeee) {
  EXPECT_EQ(EvalText(Entry("  a = f32[3] constant({1, -0, nan})\n  b = f32[3] constant({0, 0, 1})\n"
                      "  ROOT r = f32[3] maximum(a, b)")),
            "{1, 0, nan}");
  EXPECT_EQ(EvalText(Entry("  a = f32[2] constant({1, -1})\n  b = f32[2] constant({0, 0})\n  ROOT r = f32[2] divide(a, b)")),
            "{inf, -inf}");
  // 0.333984375 and 0.427734375 exactly, printed as the shortest text that reads back.
  EXPECT_EQ(EvalText(Entry("  a = bf16[2] constant({1, 3})\n  b = bf16[2] constant({3, 7})\n  ROOT r = bf16[2] divide(a, b)")),
            "{0.33398438, 0.42773438}");
  EXPECT_EQ(EvalText(Entry("  a = f32[4] constant({1e10, -1e10, nan, 2.7})\n  ROOT r = s8[4] convert(a)")),
            "{127, -128, 0, 2}");
  EXPECT_EQ(EvalText(Entry("  a = f32[2] constant({1.00048828125, 100000})\n"
                      "  ROOT r = f32[2] reduce-precision(a), exponent_bits=5, mantissa_bits=10")),
            "{1, inf}");
}

TEST(Evaluator, ComparesWithTotalOrder) {
  EXPECT_EQ(EvalText(Entry("  a = f32[3] constant({-0, nan, 1})\n  b = f32[3] constant({0, nan, 2})\n"
                      "  ROOT r = pred[3] compare(a, b), direction=LT, type=TOTALORDER")),
            "{true, false, true}");
  EXPECT_EQ(EvalText(Entry("  a = f32[2] constant({nan, 1})\n  ROOT r = pred[2] compare(a, a), direction=EQ")),
            "{false, true}");
}

TEST(Evaluator, ShapeOps) {
  EXPECT_EQ(EvalText(Entry("  a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n  ROOT t = s32[3,2] transpose(a), dimensions={1,0}")),
            "{{1, 4}, {2, 5}, {3, 6}}");
  EXPECT_EQ(EvalText(Entry("  a = s32[2] constant({1, 2})\n  ROOT b = s32[2,3] broadcast(a), dimensions={0}")),
            "{{1, 1, 1}, {2, 2, 2}}");
  EXPECT_EQ(EvalText(Entry("  a = s32[5] iota(), iota_dimension=0\n  ROOT s = s32[2] slice(a), slice={[1:5:2]}")), "{1, 3}");
  EXPECT_EQ(EvalText(Entry("  a = s32[2] constant({1, 2})\n  z = s32[] constant(0)\n  ROOT p = s32[6] pad(a, z), padding=1_0_2")),
            "{0, 1, 0, 0, 2, 0}");
  EXPECT_EQ(EvalText(Entry("  a = s32[4] constant({1, 2, 3, 4})\n  i = s32[] constant(3)\n"
                      "  ROOT d = s32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}")),
            "{3, 4}");  // start clamped into range
  EXPECT_EQ(EvalText(Entry("  a = s32[3,2] constant({{1, 2}, {3, 4}, {5, 6}})\n  i = s32[2,1] constant({{2}, {0}})\n"
                      "  ROOT g = s32[2,2] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, "
                      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}")),
            "{{5, 6}, {1, 2}}");
}

TEST(Evaluator, ReduceDotSortWhile) {
  const std::string add = "add {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT s = s32[] add(x, y)\n}\n";
  EXPECT_EQ(EvalText("HloModule m\n" + add + "ENTRY e {\n  a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
                "  z = s32[] constant(0)\n  ROOT r = s32[2] reduce(a, z), dimensions={1}, to_apply=add\n}\n"),
            "{6, 15}");
  EXPECT_EQ(EvalText("HloModule m\n" + add + "ENTRY e {\n  a = s32[4] constant({1, 2, 3, 4})\n  z = s32[] constant(0)\n"
                "  ROOT r = s32[3] reduce-window(a, z), window={size=2 pad=0_1}, to_apply=add\n}\n"),
            "{3, 5, 7}");
  EXPECT_EQ(EvalText(Entry("  a = f32[2,2] constant({{1, 2}, {3, 4}})\n  b = f32[2,2] constant({{5, 6}, {7, 8}})\n"
                      "  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}")),
            "{{19, 22}, {43, 50}}");
  EXPECT_EQ(EvalText("HloModule m\nlt {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  c = s32[] parameter(2)\n"
                "  d = s32[] parameter(3)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n"
                "ENTRY e {\n  k = s32[4] constant({3, 1, 3, 0})\n  v = s32[4] constant({0, 1, 2, 3})\n"
                "  s = (s32[4], s32[4]) sort(k, v), dimensions={0}, is_stable=true, to_apply=lt\n"
                "  ROOT r = s32[4] get-tuple-element(s), index=1\n}\n"),
            "{3, 1, 0, 2}");
  EXPECT_EQ(EvalText("HloModule m\ncond {\n  s = (s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                "  n = s32[] constant(10)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
                "body {\n  s = (s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                "  one = s32[] constant(3)\n  j = s32[] add(i, one)\n  ROOT t = (s32[]) tuple(j)\n}\n"
                "ENTRY e {\n  z = s32[] constant(0)\n  t = (s32[]) tuple(z)\n"
                "  w = (s32[]) while(t), condition=cond, body=body\n  ROOT r = s32[] get-tuple-element(w), index=0\n}\n"),
            "12");
}

TEST(Evaluator, CholeskyAndKnownCustomCalls) {
  EXPECT_EQ(EvalText(Entry("  a = f64[2,2] constant({{4, 2}, {2, 3}})\n  ROOT l = f64[2,2] cholesky(a), lower=true")),
            "{{2, 0}, {1, 1.4142135623730951}}");
  EXPECT_EQ(EvalText(Entry("  a = f64[2,2] constant({{4, 2}, {2, 3}})\n  ROOT u = f64[2,2] cholesky(a), lower=false")),
            "{{2, 1}, {0, 1.4142135623730951}}");
  // Not positive definite (the second pivot is 3 - 4 = -1): all NaN, as
  // LAPACK's potrf reports it and the CPU plugin's kernel gives it.
  EXPECT_EQ(EvalText(Entry("  a = f64[2,2] constant({{1, 2}, {2, 3}})\n  ROOT l = f64[2,2] cholesky(a), lower=true")),
            "{{nan, nan}, {nan, nan}}");
  EXPECT_EQ(EvalText(Entry("  a = f32[2] constant({1, 0})\n"
                           "  ROOT c = f32[2] custom-call(a), custom_call_target=\"xla_builder.math.Acos\"")),
            "{0, 1.5707964}");
  EXPECT_EQ(EvalText(Entry("  a = s32[2] constant({7, 8})\n"
                           "  ROOT m = s32[2] custom-call(a), custom_call_target=\"MoveToHost\"")),
            "{7, 8}");
}

TEST(Evaluator, RngBitGeneratorsMatchTheRandom123KnownAnswers) {
  // Threefry-2x32-20 and Philox-4x32-10 on Random123's "pi digits" known-answer
  // inputs; XLA's generators are these functions of (counter, key).
  EXPECT_EQ(EvalText(Entry("  s = u64[2] constant({247824715720788526, 9629550131187509896})\n"
                           "  ROOT r = (u64[2], u64[]) rng-bit-generator(s), algorithm=rng_three_fry")),
            "({247824715720788526, 9629550131187509897}, 5205589014174907036)");
  EXPECT_EQ(EvalText(Entry("  s = u64[3] constant({2999170649027065890, 9629550131187509896, 247824715720788526})\n"
                           "  ROOT r = (u64[3], u32[4]) rng-bit-generator(s), algorithm=rng_philox")),
            "({2999170649027065890, 9629550131187509897, 247824715720788526}, "
            "{3513581065, 2499661035, 1342301216, 605187745})");
  // DEFAULT is PHILOX; a two-word state counts with (word 1, word 0).
  EXPECT_EQ(EvalText(Entry("  s = u64[2] constant({0, 18446744073709551615})\n"
                           "  ROOT r = (u64[2], u8[5]) rng-bit-generator(s), algorithm=rng_default")),
            EvalText(Entry("  s = u64[3] constant({0, 18446744073709551615, 0})\n"
                           "  t = (u64[3], u8[5]) rng-bit-generator(s), algorithm=rng_philox\n"
                           "  w = u64[3] get-tuple-element(t), index=0\n"
                           "  k = u64[1] slice(w), slice={[0:1]}\n  c = u64[1] slice(w), slice={[1:2]}\n"
                           "  n = u64[2] concatenate(k, c), dimensions={0}\n"
                           "  b = u8[5] get-tuple-element(t), index=1\n  ROOT r = (u64[2], u8[5]) tuple(n, b)")));
}

TEST(Evaluator, RngBitGeneratorFillsFloatsWithItsBits) {
  // A float output holds the stream's bits (the spec's "random bits"), not
  // the words converted to floats: the same as a u32 output bitcast.
  for (const char* algorithm : {"rng_three_fry", "rng_philox"}) {
    const std::string state = "  s = u64[2] constant({42, 7})\n";
    EXPECT_EQ(EvalText(Entry(state + "  t = (u64[2], f32[3,2]) rng-bit-generator(s), algorithm=" + algorithm +
                             "\n  ROOT b = f32[3,2] get-tuple-element(t), index=1")),
              EvalText(Entry(state + "  t = (u64[2], u32[3,2]) rng-bit-generator(s), algorithm=" + algorithm +
                             "\n  u = u32[3,2] get-tuple-element(t), index=1\n"
                             "  ROOT b = f32[3,2] bitcast-convert(u)")))
        << algorithm;
  }
}

TEST(Evaluator, RngStateAdvancesEachTimeItsOpRuns) {
  // Each op has its own state from 0x7012395 (117515157); one inside a loop
  // body advances on every trip.
  EXPECT_EQ(EvalText("HloModule m\n"
                     "body {\n  p = (s32[], u64[2]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
                     "  one = s32[] constant(1)\n  n = s32[] add(i, one)\n"
                     "  s = u64[2] rng-get-and-update-state(), delta=10\n  ROOT t = (s32[], u64[2]) tuple(n, s)\n}\n"
                     "cond {\n  p = (s32[], u64[2]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
                     "  three = s32[] constant(3)\n  ROOT lt = pred[] compare(i, three), direction=LT\n}\n"
                     "ENTRY e {\n  zero = s32[] constant(0)\n  z = u64[2] constant({0, 0})\n"
                     "  init = (s32[], u64[2]) tuple(zero, z)\n"
                     "  w = (s32[], u64[2]) while(init), condition=cond, body=body\n"
                     "  last = u64[2] get-tuple-element(w), index=1\n"
                     "  first = u64[2] rng-get-and-update-state(), delta=7\n"
                     "  ROOT r = (u64[2], u64[2]) tuple(last, first)\n}\n"),
            "({117515177, 0}, {117515157, 0})");
}

TEST(Evaluator, BuilderMatrixDiagonalChecksItsDeclaredShape) {
  EXPECT_EQ(EvalText(Entry("  x = f32[2,2,3] constant({{{1, 2, 3}, {4, 5, 6}}, {{7, 8, 9}, {10, 11, 12}}})\n"
                           "  ROOT d = f32[2,2] custom-call(x), "
                           "custom_call_target=\"xla_builder.matrix.GetMatrixDiagonalViaGather\"")),
            "{{1, 5}, {7, 11}}");
  EXPECT_EQ(EvalText(Entry("  x = f32[2,2] constant({{1, 2}, {3, 4}})\n"
                           "  ROOT d = f32[2,2] custom-call(x), "
                           "custom_call_target=\"xla_builder.matrix.GetMatrixDiagonalViaGather\"")),
            "eval: %d in e: declared f32[2,2], but the diagonal of f32[2,2] is f32[2]");
}

TEST(Evaluator, RngDrawsFromItsDistribution) {
  auto m = ParseHloModule(Entry(
      "  a = f32[] constant(2)\n  b = f32[] constant(3)\n  u = f32[4096] rng(a, b), distribution=rng_uniform\n"
      "  m = f32[] constant(5)\n  d = f32[] constant(2)\n  n = f32[4096] rng(m, d), distribution=rng_normal\n"
      "  lo = s32[] constant(-3)\n  hi = s32[] constant(4)\n  i = s32[4096] rng(lo, hi), distribution=rng_uniform\n"
      "  ROOT r = (f32[4096], f32[4096], s32[4096]) tuple(u, n, i)"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto r = EvaluateModule(**m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Literal& u = r->tuple_elements()[0];
  const Literal& n = r->tuple_elements()[1];
  const Literal& i = r->tuple_elements()[2];
  double sum = 0, sum_sq = 0, uniform_sum = 0;
  std::vector<int> seen(7, 0);
  for (int64_t k = 0; k < 4096; ++k) {
    ASSERT_GE(u.GetDouble(k), 2.0);
    ASSERT_LT(u.GetDouble(k), 3.0);
    uniform_sum += u.GetDouble(k);
    sum += n.GetDouble(k);
    sum_sq += n.GetDouble(k) * n.GetDouble(k);
    ASSERT_GE(i.GetInt(k), -3);
    ASSERT_LT(i.GetInt(k), 4);
    ++seen[i.GetInt(k) + 3];
  }
  EXPECT_NEAR(uniform_sum / 4096, 2.5, 0.02);
  const double mean = sum / 4096;
  EXPECT_NEAR(mean, 5.0, 0.1);
  EXPECT_NEAR(std::sqrt(sum_sq / 4096 - mean * mean), 2.0, 0.1);
  for (int count : seen) EXPECT_GT(count, 450);  // 4096 / 7 = 585 each
  // The same program gives the same values on every run.
  auto again = EvaluateModule(**m, {});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again == *r);
}

TEST(Evaluator, PolygammaAndZeta) {
  auto m = ParseHloModule(Entry(
      "  n = f64[4] constant({0, 1, 1, 2})\n  x = f64[4] constant({1, 1, 0.5, 2})\n"
      "  ROOT p = f64[4] custom-call(n, x), custom_call_target=\"xla_builder.math.Polygamma\""));
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto r = EvaluateModule(**m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  // psi(1) = -gamma, psi'(1) = pi^2/6, psi'(1/2) = pi^2/2, psi''(2) = -2 (zeta(3) - 1).
  EXPECT_NEAR(r->GetDouble(0), -0.57721566490153286, 1e-15);
  EXPECT_NEAR(r->GetDouble(1), M_PI * M_PI / 6, 1e-14);
  EXPECT_NEAR(r->GetDouble(2), M_PI * M_PI / 2, 1e-13);
  EXPECT_NEAR(r->GetDouble(3), -2 * (1.2020569031595942 - 1), 1e-14);
}

TEST(Evaluator, BackendAndBuilderCustomCalls) {
  EXPECT_EQ(EvalText(Entry(
                "  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n  b = f32[3,2] constant({{1, 0}, {0, 1}, {1, 1}})\n"
                "  ROOT mm = f32[2,2] custom-call(a, b), custom_call_target=\"xla_builder.matrix.Einsum\", "
                "backend_config=\"ij,jk->ik\"")),
            "{{4, 5}, {10, 11}}");
  EXPECT_EQ(EvalText(Entry("  s = f32[3] constant({1, 2, 3})\n  ROOT d = f32[3,3] custom-call(s, s), "
                           "custom_call_target=\"xla_builder.matrix.Einsum\", backend_config=\"i,i->ii\"")),
            "{{1, 0, 0}, {0, 4, 0}, {0, 0, 9}}");
  // cuBLAS's GEMM is a dot scaled by alpha, plus beta times its third operand.
  EXPECT_EQ(EvalText(Entry(
                "  a = f32[2,2] constant({{1, 2}, {3, 4}})\n  c = f32[2,2] constant({{1, 1}, {1, 1}})\n"
                "  ROOT g = f32[2,2] custom-call(a, a, c), custom_call_target=\"__cublas$gemm\", backend_config="
                "\"{\\\"gemm_backend_config\\\":{\\\"alpha_real\\\":2,\\\"beta\\\":1,\\\"dot_dimension_numbers\\\":"
                "{\\\"lhs_contracting_dimensions\\\":[\\\"1\\\"],\\\"rhs_contracting_dimensions\\\":[\\\"0\\\"]}}}\"")),
            "{{15, 21}, {31, 45}}");
  // TridiagonalSolver: each rhs row solved; A x reproduces it.
  auto tri = ParseHloModule(Entry(
      "  l = f64[1,4] constant({{0, 1, 1, 1}})\n  d = f64[1,4] constant({{4, 4, 4, 4}})\n"
      "  u = f64[1,4] constant({{1, 1, 1, 0}})\n  x = f64[2,4] constant({{1, 2, 3, 4}, {-1, 0, 0, 5}})\n"
      "  ROOT s = f64[2,4] custom-call(l, d, u, x), custom_call_target=\"xla_builder.tridiagonal.TridiagonalSolver\""));
  ASSERT_TRUE(tri.ok()) << tri.status().message();
  auto solved = EvaluateModule(**tri, {});
  ASSERT_TRUE(solved.ok()) << solved.status().message();
  const double rhs[2][4] = {{1, 2, 3, 4}, {-1, 0, 0, 5}};
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < 4; ++j) {
      double ax = 4 * solved->GetDouble(r * 4 + j);
      if (j > 0) ax += solved->GetDouble(r * 4 + j - 1);
      if (j < 3) ax += solved->GetDouble(r * 4 + j + 1);
      EXPECT_NEAR(ax, rhs[r][j], 1e-12) << r << "," << j;
    }
  }
  // copy-start/copy-done: the copy is done by the time it starts.
  EXPECT_EQ(EvalText(Entry("  a = f32[2] constant({1, 2})\n  s = (f32[2], f32[2], u32[]) copy-start(a)\n"
                           "  ROOT d = f32[2] copy-done(s)")),
            "{1, 2}");
}

TEST(Evaluator, IncompleteGammaAndBeta) {
  auto m = ParseHloModule(Entry(
      "  a = f64[3] constant({1, 0.5, 3})\n  b = f64[3] constant({1, 0.5, 4})\n  x = f64[3] constant({0.3, 0.5, 0.9})\n"
      "  i = f64[3] custom-call(a, b, x), custom_call_target=\"xla_builder.math.RegularizedIncompleteBeta\"\n"
      "  g = f64[3] custom-call(a, x), custom_call_target=\"xla_builder.math.IgammaGradA\"\n"
      "  r = f64[3] custom-call(a, x), custom_call_target=\"xla_builder.math.RandomGammaGrad\"\n"
      "  ROOT t = (f64[3], f64[3], f64[3]) tuple(i, g, r)"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto r = EvaluateModule(**m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Literal& beta = r->tuple_elements()[0];
  EXPECT_NEAR(beta.GetDouble(0), 0.3, 1e-14);      // I_x(1, 1) = x
  EXPECT_NEAR(beta.GetDouble(1), 0.5, 1e-14);      // symmetric
  EXPECT_NEAR(beta.GetDouble(2), 0.99873, 1e-12);  // binomial tail: 1 - P(Bin(6, 0.9) <= 2)
  // P(1, x) = 1 - e^-x, and P(a, x) falls as a grows; the sample gradient is
  // -dP/da over the density x^(a-1) e^-x / Gamma(a).
  const Literal& grad = r->tuple_elements()[1];
  const Literal& sample = r->tuple_elements()[2];
  for (int k = 0; k < 3; ++k) EXPECT_LT(grad.GetDouble(k), 0) << k;
  EXPECT_NEAR(sample.GetDouble(0), -grad.GetDouble(0) / std::exp(-0.3), 1e-12);
}

TEST(Evaluator, SaysWhatItCannotRun) {
  EXPECT_EQ(EvalText(Entry("  a = f32[4] constant({1, 2, 3, 4})\n  ROOT r = f32[4] custom-call(a), custom_call_target=\"foo\"")),
            "eval: %r in e: the evaluator does not run custom-call \"foo\"");
  EXPECT_EQ(EvalText(Entry("  a = f32[4] parameter(0)\n  ROOT r = f32[4] negate(a)")), "eval: e takes 1 arguments, got 0");
  EXPECT_EQ(EvalText(Entry("  ROOT c = f32[4] constant({...})")),
            "eval: %c in e: constant %c is elided ({...}); fill it before evaluating");
}

}  // namespace
}  // namespace anvil::hlo
