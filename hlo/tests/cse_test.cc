#include "hlo/cse.h"

#include <gtest/gtest.h>

#include "hlo/canonicalize.h"
#include "hlo/hlo_parser.h"

namespace anvil::hlo {
namespace {

std::unique_ptr<Module> Parsed(const std::string& text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

std::unique_ptr<Module> Canonical(const std::string& text) {
  auto m = Parsed(text);
  if (!m) return nullptr;
  Status s = Canonicalize(*m);
  EXPECT_TRUE(s.ok()) << s.message();
  return m;
}

int CountOf(const Computation& c, Opcode opcode) {
  int n = 0;
  for (const auto& i : c.instructions) n += i->opcode == opcode;
  return n;
}

// JAX's erfc squares its argument twice and takes its absolute value twice;
// the copies go, and with them a copy of everything computed only from them.
TEST(Cse, MergesRepeatedWorkWhateverItsMetadata) {
  auto m = Canonical(R"(HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  s1 = f32[8] multiply(x, x), metadata={op_name="first"}
  s2 = f32[8] multiply(x, x), metadata={op_name="second"}
  a1 = f32[8] abs(s1)
  a2 = f32[8] abs(s2)
  c1 = f32[] constant(2)
  c2 = f32[] constant(2)
  b1 = f32[8] broadcast(c1), dimensions={}
  b2 = f32[8] broadcast(c2), dimensions={}
  p1 = f32[8] add(a1, b1)
  p2 = f32[8] add(a2, b2)
  ROOT r = (f32[8], f32[8]) tuple(p1, p2)
}
)");
  ASSERT_TRUE(m);
  const Computation& e = *m->entry;
  EXPECT_EQ(CountOf(e, Opcode::kMultiply), 1);
  EXPECT_EQ(CountOf(e, Opcode::kAbs), 1);
  EXPECT_EQ(CountOf(e, Opcode::kConstant), 1);  // both broadcasts fold to it
  EXPECT_EQ(CountOf(e, Opcode::kAdd), 1);
  EXPECT_EQ(e.root->operands[0], e.root->operands[1]);
}

// Anything that makes two results differ keeps both: operands, operand
// order, attributes, shapes (layouts included) and constants' values.
TEST(Cse, KeepsWhatDiffers) {
  auto m = Parsed(R"(HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  d1 = f32[2,3] subtract(x, y)
  d2 = f32[2,3] subtract(y, x)
  t1 = f32[3,2] transpose(x), dimensions={1,0}
  t2 = f32[3,2]{0,1} transpose(x), dimensions={1,0}
  l1 = pred[2,3] compare(x, y), direction=LT
  l2 = pred[2,3] compare(x, y), direction=GT
  k1 = f32[] constant(1)
  k2 = f32[] constant(-1)
  k3 = s32[] constant(1)
  ROOT r = (f32[2,3], f32[2,3], f32[3,2], f32[3,2], pred[2,3], pred[2,3], f32[], f32[], s32[]) tuple(d1, d2, t1, t2, l1, l2, k1, k2, k3)
}
)");
  ASSERT_TRUE(m);
  EXPECT_EQ(EliminateCommonSubexpressions(*m), 0);
}

// Random numbers, side effects, custom-calls and elided constants (each
// filled with data of its own) are never merged, nor a reduce whose
// computation draws random numbers; two reduces whose computations are
// copies of each other are.
TEST(Cse, NeverMergesWhatMayDifferBetweenCopies) {
  auto m = Parsed(R"(HloModule m
add_a {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add_b {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT t = f32[] add(p, q)
}
noisy {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  n = f32[] rng(lo, hi), distribution=rng_uniform
  s = f32[] add(a, b)
  ROOT t = f32[] add(s, n)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = f32[] constant(0)
  one = f32[] constant(1)
  r1 = f32[4] rng(zero, one), distribution=rng_uniform
  r2 = f32[4] rng(zero, one), distribution=rng_uniform
  c1 = f32[4] custom-call(x), custom_call_target="f"
  c2 = f32[4] custom-call(x), custom_call_target="f"
  e1 = f32[4] constant({...})
  e2 = f32[4] constant({...})
  s1 = f32[] reduce(x, zero), dimensions={0}, to_apply=add_a
  s2 = f32[] reduce(x, zero), dimensions={0}, to_apply=add_b
  n1 = f32[] reduce(x, zero), dimensions={0}, to_apply=noisy
  n2 = f32[] reduce(x, zero), dimensions={0}, to_apply=noisy
  ROOT r = (f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[], f32[], f32[], f32[]) tuple(r1, r2, c1, c2, e1, e2, s1, s2, n1, n2)
}
)");
  ASSERT_TRUE(m);
  EXPECT_EQ(EliminateCommonSubexpressions(*m), 1);  // s2, into s1
  const auto& ops = m->entry->root->operands;
  EXPECT_EQ(ops[7], ops[6]);
  for (int k : {0, 2, 4, 8}) EXPECT_NE(ops[k], ops[k + 1]) << k;
}

// A root that repeats an earlier instruction becomes that instruction.
TEST(Cse, ReplacesARepeatedRoot) {
  auto m = Canonical(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  a = f32[4] exponential(x)
  b = f32[4] add(a, a)
  ROOT c = f32[4] exponential(x)
}
)");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry->root->name, "a");
  EXPECT_EQ(m->entry->instructions.size(), 2u);
}

}  // namespace
}  // namespace anvil::hlo
