#include "hlo/canonicalize.h"

#include <gtest/gtest.h>

#include "hlo/hlo_parser.h"
#include "hlo/printer.h"
#include "hlo/rng_values.h"

namespace anvil::hlo {
namespace {

std::unique_ptr<Module> Canonical(const std::string& text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return nullptr;
  Status s = Canonicalize(**m);
  EXPECT_TRUE(s.ok()) << s.message();
  return std::move(m).value();
}

TEST(Canonicalize, InlinesNestedCallsAndDropsTheirComputations) {
  auto m = Canonical(R"(HloModule m
inner {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
outer {
  y = f32[2] parameter(0)
  c = f32[2] call(y), to_apply=inner
  ROOT s = f32[2] add(c, y)
}
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] call(p), to_apply=outer
}
)");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->computations.size(), 1u);
  std::string text = Print(*m);
  EXPECT_EQ(text.find("call("), std::string::npos) << text;
  EXPECT_EQ(m->entry->root->opcode, Opcode::kAdd);
  EXPECT_EQ(m->entry->root->operands[0]->opcode, Opcode::kNegate);
}

// An rng's values are keyed by its name (hlo/rng_values). Run as calls, as
// the evaluator runs an uninlined program, both calls of `draw` key their
// rng by `r`; inlined, the copies are renamed (the caller has an `r`), and
// each keeps `r` as its key, so the program draws what it drew before.
TEST(Canonicalize, InlinedRngsKeepTheirCalleesKey) {
  const std::string text = R"(HloModule m
draw {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[8] rng(a, b), distribution=rng_uniform
}
ENTRY e {
  p = f32[] parameter(0)
  r = f32[] negate(p)
  c1 = f32[8] call(p, r), to_apply=draw
  c2 = f32[8] call(p, r), to_apply=draw
  ROOT t = (f32[8], f32[8]) tuple(c1, c2)
})";
  auto original = ParseHloModule(text);
  ASSERT_TRUE(original.ok()) << original.status().message();
  auto callee_key = RngValues::Of(*(*original)->FindComputation("draw")->root);
  ASSERT_TRUE(callee_key.ok());
  auto m = Canonical(text);
  ASSERT_TRUE(m);
  int rngs = 0;
  for (const auto& i : m->entry->instructions) {
    if (i->opcode != Opcode::kRng) continue;
    ++rngs;
    EXPECT_NE(i->name, "r");
    auto v = RngValues::Of(*i);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->key(), callee_key->key()) << i->name;
  }
  EXPECT_EQ(rngs, 2);
}

TEST(Canonicalize, KeepsSideEffectsDropsDeadCode) {
  auto m = Canonical(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  dead = f32[2] negate(p)
  check = () custom-call(p), custom_call_target="check.expect_eq", custom_call_has_side_effect=true
  ROOT r = f32[2] abs(p)
}
)");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry->Find("dead"), nullptr);
  EXPECT_NE(m->entry->Find("check"), nullptr);
}

TEST(Canonicalize, FoldsConstantArithmetic) {
  auto m = Canonical(R"(HloModule m
ENTRY e {
  a = s32[3] constant({1, 2, 2147483647})
  b = s32[3] constant({10, 20, 1})
  s = s32[3] add(a, b)
  two = f32[] constant(2)
  t = f32[3] broadcast(two), dimensions={}
  h = f32[3] constant({0.5, 1.5, -3})
  m = f32[3] multiply(t, h)
  c = pred[3] compare(a, b), direction=LT
  t1 = pred[3] constant({true, true, false})
  t2 = pred[3] constant({true, false, false})
  o = pred[3] add(t1, t2)
  ROOT r = (s32[3], f32[3], pred[3], pred[3]) tuple(s, m, c, o)
}
)");
  ASSERT_TRUE(m);
  const auto& ops = m->entry->root->operands;
  ASSERT_EQ(ops[0]->opcode, Opcode::kConstant);
  EXPECT_EQ(ops[0]->literal->ToString(), "{11, 22, -2147483648}");  // wraps
  ASSERT_EQ(ops[1]->opcode, Opcode::kConstant);
  EXPECT_EQ(ops[1]->literal->ToString(), "{1, 3, -6}");
  EXPECT_EQ(ops[2]->literal->ToString(), "{true, true, false}");
  EXPECT_EQ(ops[3]->literal->ToString(), "{true, true, false}");  // pred add is or
  // Three constants (both pred results fold to one value, which CSE keeps
  // once) and the tuple.
  EXPECT_EQ(m->entry->instructions.size(), 4u);
  EXPECT_EQ(ops[2], ops[3]);
}

// JAX's `x % 13` guards its divisor with where(13 == 0, 1, 13) in a call;
// inlined, the compares (their type written out) and the select fold, so
// that the divisor plugins see is the constant 13.
TEST(Canonicalize, FoldsTypedComparesAndSelects) {
  auto m = Canonical(R"(HloModule m
where {
  p = pred[] parameter(0)
  x = s32[] parameter(1)
  y = s32[] parameter(2)
  ROOT s = s32[] select(p, x, y)
}
ENTRY e {
  d = s32[] constant(13)
  zero = s32[] constant(0)
  one = s32[] constant(1)
  z = pred[] compare(d, zero), direction=EQ, type=SIGNED
  divisor = s32[] call(z, one, d), to_apply=where
  negative = pred[] compare(divisor, zero), direction=LT, type=SIGNED
  u = u32[2] constant({1, 4294967295})
  v = u32[2] constant({2, 3})
  lt = pred[2] compare(u, v), direction=LT, type=UNSIGNED
  f = f32[2] constant({1, 2})
  g = f32[2] constant({5, 6})
  picked = f32[2] select(lt, f, g)
  total = pred[2] compare(f, g), direction=LT, type=TOTALORDER
  wrong = pred[2] compare(u, v), direction=LT, type=SIGNED
  ROOT r = (s32[], pred[], f32[2], pred[2], pred[2]) tuple(divisor, negative, picked, total, wrong)
}
)");
  ASSERT_TRUE(m);
  const auto& ops = m->entry->root->operands;
  ASSERT_EQ(ops[0]->opcode, Opcode::kConstant);
  EXPECT_EQ(ops[0]->literal->ToString(), "13");
  ASSERT_EQ(ops[1]->opcode, Opcode::kConstant);
  EXPECT_EQ(ops[1]->literal->ToString(), "false");
  ASSERT_EQ(ops[2]->opcode, Opcode::kConstant);
  EXPECT_EQ(ops[2]->literal->ToString(), "{1, 6}");  // 1 < 2 unsigned; 4294967295 < 3 not
  // A total order, and a type that is not the operands' own, are the
  // evaluator's to compute.
  EXPECT_EQ(ops[3]->opcode, Opcode::kCompare);
  EXPECT_EQ(ops[4]->opcode, Opcode::kCompare);
}

// A constant of more than kMaxSplatConstantElements equal elements (XLA
// HLO text writes them out) becomes a broadcast of its value, keeping its
// name and layout; other constants stay as they are.
TEST(Canonicalize, BroadcastsLargeSplats) {
  std::string ones = "{", mixed = "{";
  for (int k = 0; k < 2048; ++k) {
    ones += std::string(k ? ", " : "") + "7";
    mixed += std::string(k ? ", " : "") + (k == 2047 ? "8" : "7");
  }
  ones += "}";
  mixed += "}";
  auto m = Canonical("HloModule m\nENTRY e {\n  a = s32[2048]{0} constant(" + ones + ")\n  b = s32[2048]{0} constant(" +
                     mixed + ")\n  c = s32[4]{0} constant({7, 7, 7, 7})\n  ROOT r = (s32[2048], s32[2048], s32[4]) tuple(a, b, c)\n}\n");
  ASSERT_TRUE(m);
  const auto& ops = m->entry->root->operands;
  ASSERT_EQ(ops[0]->opcode, Opcode::kBroadcast);
  EXPECT_EQ(ops[0]->name, "a");
  EXPECT_EQ(ops[0]->shape.ToString(), "s32[2048]{0}");
  ASSERT_EQ(ops[0]->operands.size(), 1u);
  EXPECT_EQ(ops[0]->operands[0]->opcode, Opcode::kConstant);
  EXPECT_EQ(ops[0]->operands[0]->literal->ToString(), "7");
  EXPECT_EQ(ops[1]->opcode, Opcode::kConstant);  // one element differs
  EXPECT_EQ(ops[2]->opcode, Opcode::kConstant);  // small
  // Printed and parsed again, the module is the same.
  auto again = ParseHloModule(Print(*m));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(Equal(*m, **again));
}

TEST(Canonicalize, FlattensTupleParameters) {
  auto m = Canonical(R"(HloModule m
ENTRY e {
  p = (f32[2], (s32[], f32[2])) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  inner = (s32[], f32[2]) get-tuple-element(p), index=1
  b = f32[2] get-tuple-element(inner), index=1
  ROOT r = f32[2] add(a, b)
}
)");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->entry->parameters.size(), 3u);
  EXPECT_EQ(m->entry->parameters[0]->shape.ToString(false), "f32[2]");
  EXPECT_EQ(m->entry->parameters[1]->shape.ToString(false), "s32[]");
  EXPECT_EQ(m->entry->parameters[2]->parameter_number, 2);
  // The root reads the leaves directly once gte(tuple) folds away.
  EXPECT_EQ(m->entry->root->operands[0], m->entry->parameters[0]);
  EXPECT_EQ(m->entry->root->operands[1], m->entry->parameters[2]);
  // And the result still parses and verifies.
  auto again = ParseHloModule(Print(*m));
  ASSERT_TRUE(again.ok()) << again.status().message();
}

}  // namespace
}  // namespace anvil::hlo
