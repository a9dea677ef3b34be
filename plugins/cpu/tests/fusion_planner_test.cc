// The CPU plugin's fusion decisions (fusion_planner.h) on small programs.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "hlo/hlo_parser.h"
#include "plugins/cpu/fusion_planner.h"
#include "plugins/cpu/parallel.h"
#include "plugins/cpu/row_chains.h"

namespace anvil::cpu {
namespace {

struct Planned {
  std::unique_ptr<hlo::Module> module;
  FusionPlan plan;
  // The members' names of each group, root last.
  std::vector<std::string> Groups() const {
    std::vector<std::string> out;
    for (const auto& g : plan.groups) {
      std::string names;
      for (const auto* m : g.members) names += (names.empty() ? "" : " ") + m->name;
      std::string inputs;
      for (const auto* i : g.inputs) inputs += (inputs.empty() ? "" : " ") + i->name;
      out.push_back(names + " <- " + inputs);
    }
    return out;
  }
};

Planned Plan(const std::string& body, const std::string& computations = "") {
  auto module = hlo::ParseHloModule("HloModule m\n" + computations + "ENTRY e {\n" + body + "}\n");
  EXPECT_TRUE(module.ok()) << module.status().message();
  Planned p;
  p.module = std::move(module).value();
  std::vector<const hlo::Instruction*> outputs;
  const hlo::Instruction* root = p.module->entry->root;
  if (root->opcode == hlo::Opcode::kTuple) {
    outputs.assign(root->operands.begin(), root->operands.end());
  } else {
    outputs.push_back(root);
  }
  p.plan = PlanElementwiseFusion(*p.module->entry, outputs);
  return p;
}

size_t IndexOf(const Planned& p, const std::string& name) {
  const auto& instructions = p.module->entry->instructions;
  for (size_t k = 0; k < instructions.size(); ++k) {
    if (instructions[k]->name == name) return k;
  }
  ADD_FAILURE() << "no instruction " << name;
  return 0;
}

TEST(FusionPlanner, AChainBecomesOneLoop) {
  Planned p = Plan(
      "  a = f32[64] parameter(0)\n  b = f32[64] parameter(1)\n  c = f32[64] parameter(2)\n"
      "  m = f32[64] multiply(a, b)\n  s = f32[64] add(m, c)\n  t = f32[64] tanh(s)\n"
      "  ROOT d = f32[64] divide(t, b)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"m s t d <- a b c"}));
}

// GELU's exact form: erf is a loop op of f32 and bf16 (float_functions.h),
// so the whole activation is one loop.
TEST(FusionPlanner, ExactGeluWithItsErfIsOneLoop) {
  Planned p = Plan(
      "  x = f32[64] parameter(0)\n  h = bf16[64] parameter(1)\n"
      "  s = f32[64] multiply(x, x)\n  e = f32[64] erf(s)\n  g = f32[64] multiply(x, e)\n"
      "  eh = bf16[64] erf(h)\n  gh = bf16[64] multiply(h, eh)\n"
      "  ROOT t = (f32[64], bf16[64]) tuple(g, gh)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"eh gh <- h", "s e g <- x"}));
}

// erfc has no opcode: only a chlo.erfc call of one f32 operand is a loop
// op (ErfcFloat); other types, targets and arities stay the chlo kernel's.
TEST(FusionPlanner, OnlyAnF32ErfcCallOfOneOperandIsALoopOp) {
  Planned p = Plan(
      "  x = f32[64] parameter(0)\n  h = bf16[64] parameter(1)\n"
      "  c = f32[64] custom-call(x), custom_call_target=\"chlo.erfc\"\n"
      "  ch = bf16[64] custom-call(h), custom_call_target=\"chlo.erfc\"\n"
      "  e = f32[64] custom-call(x), custom_call_target=\"chlo.erf\"\n"
      "  two = f32[64] custom-call(x, x), custom_call_target=\"chlo.erfc\"\n"
      "  ROOT t = (f32[64], bf16[64], f32[64], f32[64]) tuple(c, ch, e, two)\n");
  const auto& instructions = p.module->entry->instructions;
  EXPECT_TRUE(IsLoopOp(*instructions[IndexOf(p, "c")]));
  EXPECT_FALSE(IsLoopOp(*instructions[IndexOf(p, "ch")]));
  EXPECT_FALSE(IsLoopOp(*instructions[IndexOf(p, "e")]));
  EXPECT_FALSE(IsLoopOp(*instructions[IndexOf(p, "two")]));
}

TEST(FusionPlanner, ScalarBroadcastsAreSplatsInsideTheLoop) {
  Planned p = Plan(
      "  a = f32[64] parameter(0)\n  k = f32[] constant(2)\n  kb = f32[64] broadcast(k), dimensions={}\n"
      "  ROOT r = f32[64] multiply(a, kb)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"kb r <- k a"}));
}

// JAX's erf_inv: a polynomial whose coefficients are selects between two
// splats, all defined before the first op. Filled where they are defined,
// the twelve splats would need more registers than the loop has and the
// whole polynomial would run op by op; filled before their readers, it is
// one loop.
TEST(FusionPlanner, SplatsDefinedUpFrontAreFilledWhereTheyAreRead) {
  std::string body = "  x = f32[64] parameter(0)\n  w = f32[64] parameter(1)\n  c = pred[64] parameter(2)\n";
  for (int k = 0; k < 12; ++k) {
    const std::string n = std::to_string(k);
    body += "  k" + n + " = f32[] constant(" + n + ".5)\n  b" + n + " = f32[64] broadcast(k" + n + "), dimensions={}\n";
  }
  std::string acc = "x", members;
  for (int k = 0; k < 12; k += 2) {
    const std::string n = std::to_string(k), m = std::to_string(k + 1);
    body += "  s" + n + " = f32[64] select(c, b" + n + ", b" + m + ")\n  p" + n + " = f32[64] multiply(" + acc +
            ", w)\n  a" + n + " = f32[64] add(s" + n + ", p" + n + ")\n";
    acc = "a" + n;
  }
  body += "  ROOT r = f32[64] negate(" + acc + ")\n";
  Planned p = Plan(body);
  ASSERT_EQ(p.plan.groups.size(), 1u) << body;
  EXPECT_EQ(p.plan.groups[0].members.size(), 12u + 6 * 3 + 1);
}

// A threefry round (JAX's random bits): u32 adds, rotates and xors, then
// the bits made floats in [1, 2), is one loop.
TEST(FusionPlanner, RandomBitArithmeticOfU32IsOneLoop) {
  Planned p = Plan(
      "  x = u32[64] parameter(0)\n  y = u32[64] parameter(1)\n"
      "  k = u32[] constant(13)\n  kb = u32[64] broadcast(k), dimensions={}\n"
      "  j = u32[] constant(19)\n  jb = u32[64] broadcast(j), dimensions={}\n"
      "  s = u32[64] add(x, y)\n  h = u32[64] shift-left(y, kb)\n  l = u32[64] shift-right-logical(y, jb)\n"
      "  r = u32[64] or(h, l)\n  m = u32[64] xor(r, s)\n"
      "  n = u32[] constant(1065353216)\n  nb = u32[64] broadcast(n), dimensions={}\n"
      "  b = u32[64] or(m, nb)\n  ROOT f = f32[64] bitcast-convert(b)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"kb jb s h l r m nb b f <- k j x y n"}));
}

// Mixed precision: f32 made bf16, scaled by a bf16 constant, added to a
// bf16 array and made f32 again is one loop (bf16 held as f32 in it).
TEST(FusionPlanner, BF16ArithmeticBetweenConvertsIsOneLoop) {
  Planned p = Plan(
      "  x = f32[64] parameter(0)\n  h = bf16[64] parameter(1)\n"
      "  k = bf16[] constant(2)\n  kb = bf16[64] broadcast(k), dimensions={}\n"
      "  c = bf16[64] convert(x)\n  m = bf16[64] multiply(c, kb)\n  a = bf16[64] add(m, h)\n"
      "  ROOT f = f32[64] convert(a)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"kb c m a f <- k x h"}));
}

TEST(FusionPlanner, ValuesReadTwiceOrLeavingTheProgramAreStored) {
  Planned p = Plan(
      "  a = f32[64] parameter(0)\n  n = f32[64] negate(a)\n  e = f32[64] exponential(n)\n"
      "  sq = f32[64] multiply(e, e)\n  l = f32[64] log(sq)\n  x = f32[64] abs(a)\n  y = f32[64] sqrt(x)\n"
      "  ROOT r = (f32[64], f32[64], f32[64]) tuple(l, y, x)\n");
  // e is read twice, both times by sq: computed once inside sq's loop (a
  // DAG). x leaves the program (stored), so y alone is no group.
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"n e sq l <- a"}));
}

TEST(FusionPlanner, NonElementwiseOpsAndOtherTypesBreakTheLoop) {
  Planned p = Plan(
      "  a = f32[8,8] parameter(0)\n  i = f64[8,8] parameter(1)\n  n = f32[8,8] negate(a)\n"
      "  d = f32[8,8] dot(n, n), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  e = f32[8,8] exponential(d)\n  f = f32[8,8] convert(i)\n  g = f32[8,8] add(e, f)\n"
      "  ROOT h = f32[8,8] tanh(g)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"e g h <- d f"}));
}

TEST(FusionPlanner, AOneHotOfS32LabelsIsOneLoopWithTheBroadcastsInlined) {
  // JAX's one_hot: labels broadcast along the classes, compared (SIGNED)
  // with an iota broadcast along the batch, converted to f32 and used.
  Planned p = Plan(
      "  labels = s32[4] parameter(0)\n  logits = f32[4,6] parameter(1)\n"
      "  l1 = s32[4,1] broadcast(labels), dimensions={0}\n"
      "  lb = s32[4,6] broadcast(l1), dimensions={0,1}\n  io = s32[1,6] iota(), iota_dimension=1\n"
      "  ib = s32[4,6] broadcast(io), dimensions={0,1}\n"
      "  eq = pred[4,6] compare(lb, ib), direction=EQ, type=SIGNED\n  oh = f32[4,6] convert(eq)\n"
      "  ROOT m = f32[4,6] multiply(oh, logits)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"lb ib eq oh m <- l1 io logits"}));
  for (const auto& i : p.module->entry->instructions) {
    if (i->name == "lb") {
      auto run = FusedBroadcastRun(*i);
      EXPECT_TRUE(run && run->inner == 6 && run->size == 4);
    }
  }
}

// Four-byte integers are loop values: s32 and u32 compares by their own
// signedness, converts among pred, s32, u32 and f32, and the integer ops,
// division included; wider integers are not.
TEST(FusionPlanner, WhichIntegerOpsAreLoopOps) {
  Planned p = Plan(
      "  a = s32[8] parameter(0)\n  b = s32[8] parameter(1)\n  u = u32[8] parameter(2)\n  g = f32[8] parameter(3)\n"
      "  w = s64[8] parameter(4)\n  h = s16[8] parameter(5)\n  hh = s16[8] add(h, h)\n"
      "  c = pred[8] compare(a, b), direction=LT, type=SIGNED\n"
      "  cu = pred[8] compare(u, u), direction=LT, type=UNSIGNED\n"
      "  cs = pred[8] compare(u, u), direction=LT, type=SIGNED\n"
      "  f = f32[8] convert(a)\n  i = s32[8] convert(c)\n  fu = f32[8] convert(u)\n  gi = s32[8] convert(g)\n"
      "  d = s32[8] divide(a, b)\n  x = s32[8] xor(a, b)\n  ww = s64[8] add(w, w)\n"
      "  ROOT t = (pred[8], pred[8], pred[8], f32[8], s32[8], f32[8], s32[8], s32[8], s32[8], s64[8], s16[8]) "
      "tuple(c, cu, cs, f, i, fu, gi, d, x, ww, hh)\n");
  const auto& instructions = p.module->entry->instructions;
  for (const char* name : {"c", "cu", "f", "i", "fu", "x", "gi", "d", "ww"}) {
    EXPECT_TRUE(IsLoopOp(*instructions[IndexOf(p, name)])) << name;
  }
  for (const char* name : {"cs", "hh"}) {
    EXPECT_FALSE(IsLoopOp(*instructions[IndexOf(p, name)])) << name;
  }
}

// JAX's floor remainder compares the remainder's sign (a pred array) with
// the divisor's (a pred scalar, broadcast): both are loop ops, so the whole
// of `x % 13` is one loop.
TEST(FusionPlanner, PredComparesAndPredSplatsAreLoopOps) {
  Planned p = Plan(
      "  x = s32[64] parameter(0)\n  s = pred[] parameter(1)\n  k = s32[] constant(13)\n"
      "  b = s32[64] broadcast(k), dimensions={}\n  r = s32[64] remainder(x, b)\n"
      "  z = s32[] constant(0)\n  bz = s32[64] broadcast(z), dimensions={}\n"
      "  lt = pred[64] compare(r, bz), direction=LT, type=SIGNED\n"
      "  bs = pred[64] broadcast(s), dimensions={}\n"
      "  ne = pred[64] compare(lt, bs), direction=NE, type=UNSIGNED\n"
      "  sum = s32[64] add(r, b)\n  ROOT f = s32[64] select(ne, sum, r)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"b r bz lt bs ne sum f <- k x z s"}));
}

// Quantisation: f32 rounded, clipped and converted to s8 is one loop, and
// so is its dequantisation; arithmetic on s8 is not a loop op.
TEST(FusionPlanner, ConvertsToAndFromNarrowIntegersAreLoopOps) {
  Planned p = Plan(
      "  x = f32[64] parameter(0)\n  q = s8[64] parameter(1)\n  k = f32[] constant(127)\n"
      "  b = f32[64] broadcast(k), dimensions={}\n  m = f32[64] multiply(x, b)\n"
      "  r = f32[64] round-nearest-even(m)\n  c = s8[64] convert(r)\n"
      "  w = f32[64] convert(q)\n  d = f32[64] multiply(w, b)\n  a = s8[64] add(q, q)\n"
      "  ROOT t = (s8[64], f32[64], s8[64]) tuple(c, d, a)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"b w d <- k q", "b m r c <- k x"}));
  EXPECT_FALSE(IsLoopOp(*p.module->entry->instructions[IndexOf(p, "a")]));
}

// JAX's threefry numbers the elements it draws for in u64 (row * columns +
// column, iota_2x32_shape), then takes the u32 halves: iotas, u64 values
// and their splats are loop ops, so the counter is computed in the loop
// that uses it rather than in five passes over 8-byte arrays.
TEST(FusionPlanner, IotasAndU64CountersAreLoopOps) {
  Planned p = Plan(
      "  rows = u64[16,64] iota(), iota_dimension=0\n  cols = u64[16,64] iota(), iota_dimension=1\n"
      "  k = u64[] constant(64)\n  b = u64[16,64] broadcast(k), dimensions={}\n"
      "  base = u64[16,64] multiply(rows, b)\n  index = u64[16,64] add(base, cols)\n"
      "  ROOT lo = u32[16,64] convert(index)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"rows cols b base index lo <- k"}));
}

TEST(FusionPlanner, MasksAndClampsFuseAndScalarBroadcastsAreInlinedEverywhere) {
  // ReLU6 and its gradient: the zero broadcast feeds three loop ops (in two
  // groups) and is never stored; the six broadcast also feeds a reduction,
  // so it is stored for that one and inlined in the loops.
  Planned p = Plan(
      "  x = f32[64] parameter(0)\n  g = f32[64] parameter(1)\n  zero = f32[] constant(0)\n"
      "  six = f32[] constant(6)\n  z = f32[64] broadcast(zero), dimensions={}\n"
      "  s = f32[64] broadcast(six), dimensions={}\n  y = f32[64] clamp(zero, x, six)\n"
      "  above = pred[64] compare(x, z), direction=GT\n  below = pred[64] compare(x, s), direction=LT\n"
      "  inside = pred[64] and(above, below)\n  dx = f32[64] select(inside, g, z)\n"
      "  e = f32[64] exponential(y)\n  m = f32[64] maximum(e, z)\n"
      "  r = f32[] reduce(s, zero), dimensions={0}, to_apply=add\n"
      "  ROOT t = (f32[64], f32[64], f32[]) tuple(dx, m, r)\n",
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"z y e m <- zero x six", "z s above below inside dx <- zero six x g"}));
  const auto& instructions = p.module->entry->instructions;
  for (size_t k = 0; k < instructions.size(); ++k) {
    const std::string& name = instructions[k]->name;
    if (name == "z") {
      EXPECT_TRUE(p.plan.inlined_everywhere[k]);
    }
    if (name == "s") {
      EXPECT_FALSE(p.plan.inlined_everywhere[k]);  // the reduction reads it
    }
  }
}

TEST(FusionPlanner, AValueEveryReaderOfWhichIsInTheGroupJoinsIt) {
  // GELU's tanh form: h feeds four ops of one loop. h itself reads the dot
  // and a bias broadcast along the rows, inlined by index.
  Planned p = Plan(
      "  d = f32[4,8] parameter(0)\n  b = f32[8] parameter(1)\n  c = f32[] constant(0.5)\n"
      "  bb = f32[4,8] broadcast(b), dimensions={1}\n  h = f32[4,8] add(d, bb)\n"
      "  h2 = f32[4,8] multiply(h, h)\n  h3 = f32[4,8] multiply(h2, h)\n  t = f32[4,8] tanh(h3)\n"
      "  s = f32[4,8] add(t, h)\n  k = f32[4,8] broadcast(c), dimensions={}\n"
      "  ROOT r = f32[4,8] multiply(s, k)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"bb h h2 h3 t s k r <- b d c"}));
}

TEST(FusionPlanner, AValueAlsoReadOutsideTheGroupIsStored) {
  Planned p = Plan(
      "  a = f32[64] parameter(0)\n  n = f32[64] negate(a)\n  e = f32[64] exponential(n)\n"
      "  l = f32[64] reverse(n), dimensions={0}\n  s = f32[64] add(e, n)\n"
      "  ROOT r = (f32[64], f32[64]) tuple(s, l)\n");
  // n is read by s's group and by a reverse, which is no loop: n is stored.
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"e s <- n"}));
}

// The index of instruction `name` in the entry.

TEST(FusionPlanner, ACheapValueReadByLoopsIsRecomputedInEachAndNeverStored) {
  // n (a negate of a parameter) is read by two loops: each computes it. e,
  // an exponential, is read by two loops too, but costs too much to repeat:
  // stored once.
  Planned p = Plan(
      "  a = f32[64] parameter(0)\n  n = f32[64] negate(a)\n  e = f32[64] exponential(n)\n"
      "  l = f32[64] log(n)\n  s = f32[64] add(e, n)\n  t = f32[64] tanh(e)\n"
      "  ROOT r = (f32[64], f32[64], f32[64]) tuple(s, l, t)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"n s <- a e", "n l <- a", "n e <- a"}));
  EXPECT_TRUE(p.plan.inlined_everywhere[IndexOf(p, "n")]);
  EXPECT_TRUE(p.plan.FusedAway(IndexOf(p, "n"), p.module->entry->instructions[IndexOf(p, "n")].get()));
  EXPECT_FALSE(p.plan.FusedAway(IndexOf(p, "e"), p.module->entry->instructions[IndexOf(p, "e")].get()));
}

TEST(FusionPlanner, AValueReadThroughARecomputedOpJoinsTheGroupThatHoldsEveryReaderOfThatOp) {
  // m = |e| is cheap and read twice, so it is recomputed by its readers;
  // both are in r's group, so no other group reads e through it, and e
  // (read by m and u, all in the group) is computed in the loop rather
  // than stored (exact GELU's erfc, whose |x / sqrt 2| is read by a few
  // ops of one loop).
  Planned p = Plan(
      "  a = f32[64] parameter(0)\n  e = f32[64] exponential(a)\n  m = f32[64] abs(e)\n"
      "  l = f32[64] log(m)\n  t = f32[64] tanh(m)\n  u = f32[64] add(e, l)\n"
      "  ROOT r = f32[64] add(u, t)\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"e m l t u r <- a"}));
  // Read by a second group too, e is stored: that group recomputes m from it.
  Planned q = Plan(
      "  a = f32[64] parameter(0)\n  e = f32[64] exponential(a)\n  m = f32[64] abs(e)\n"
      "  l = f32[64] log(m)\n  t = f32[64] tanh(m)\n  u = f32[64] add(e, l)\n"
      "  r = f32[64] add(u, t)\n  w = f32[64] sqrt(m)\n  ROOT o = (f32[64], f32[64]) tuple(r, w)\n");
  EXPECT_EQ(q.Groups(), (std::vector<std::string>{"m w <- e", "m l t u r <- e"}));
}

TEST(FusionPlanner, ARowReduceComputesTheLoopItAloneReads) {
  // Layer norm's variance: the squares of x - mean are summed as they are
  // computed (x - mean is recomputed by the normalised result's loop too);
  // the column sum and the sum of a stored value read what is stored.
  Planned p = Plan(
      "  x = f32[8,16] parameter(0)\n  mean = f32[8] parameter(1)\n  zero = f32[] constant(0)\n"
      "  mb = f32[8,16] broadcast(mean), dimensions={0}\n  d = f32[8,16] subtract(x, mb)\n"
      "  d2 = f32[8,16] multiply(d, d)\n  v = f32[8] reduce(d2, zero), dimensions={1}, to_apply=add\n"
      "  y = f32[8,16] multiply(d, x)\n  e = f32[8,16] exponential(x)\n"
      "  c = f32[16] reduce(e, zero), dimensions={0}, to_apply=add\n"
      "  ROOT t = (f32[8], f32[8,16], f32[16], f32[8,16]) tuple(v, y, c, e)\n",
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n");
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"mb d y <- mean x", "mb d d2 <- mean x"}));
  const size_t v = IndexOf(p, "v"), d2 = IndexOf(p, "d2");
  ASSERT_GE(p.plan.reduce_group[v], 0);
  EXPECT_EQ(p.plan.groups[p.plan.reduce_group[v]].reduce, p.module->entry->instructions[v].get());
  EXPECT_TRUE(p.plan.FusedAway(d2, p.module->entry->instructions[d2].get()));
  EXPECT_EQ(p.plan.reduce_group[IndexOf(p, "c")], -1);  // a column sum, and e is an output
}

TEST(FusionPlanner, ARowReduceStoresTheLoopItComputesWhenOthersReadItOnlyAfterIt) {
  // Softmax: the exponentials are summed, then divided by the sums. A value
  // read before its reduce is stored by its own step instead.
  Planned p = Plan(
      "  x = f32[8,16] parameter(0)\n  m = f32[8] parameter(1)\n  zero = f32[] constant(0)\n"
      "  mb = f32[8,16] broadcast(m), dimensions={0}\n  d = f32[8,16] subtract(x, mb)\n"
      "  ex = f32[8,16] exponential(d)\n  s = f32[8] reduce(ex, zero), dimensions={1}, to_apply=add\n"
      "  sb = f32[8,16] broadcast(s), dimensions={0}\n  soft = f32[8,16] divide(ex, sb)\n"
      "  t = f32[8,16] tanh(x)\n  early = f32[8,16] add(t, x)\n"
      "  st = f32[8] reduce(t, zero), dimensions={1}, to_apply=add\n"
      "  ROOT r = (f32[8,16], f32[8,16], f32[8]) tuple(soft, early, st)\n",
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n");
  const int g = p.plan.reduce_group[IndexOf(p, "s")];
  ASSERT_GE(g, 0);
  EXPECT_TRUE(p.plan.groups[g].root_stored);
  EXPECT_EQ(p.plan.groups[g].members.back()->name, "ex");
  EXPECT_EQ(p.plan.reduce_group[IndexOf(p, "st")], -1);
}

TEST(FusionPlanner, OnlyRowReductionsOfF32ByOneSimpleOpReduceInBlocks) {
  Planned p = Plan(
      "  x = f32[8,16,4] parameter(0)\n  zero = f32[] constant(0)\n  i = s32[8,16] parameter(1)\n"
      "  izero = s32[] constant(0)\n"
      "  rows = f32[8] reduce(x, zero), dimensions={1,2}, to_apply=add\n"
      "  middle = f32[8,4] reduce(x, zero), dimensions={1}, to_apply=add\n"
      "  ints = s32[8] reduce(i, izero), dimensions={1}, to_apply=addi\n"
      "  ROOT t = (f32[8], f32[8,4], s32[8]) tuple(rows, middle, ints)\n",
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
      "addi {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT c = s32[] add(a, b)\n}\n");
  const auto& instructions = p.module->entry->instructions;
  EXPECT_TRUE(RowReduceInBlocks(*instructions[IndexOf(p, "rows")]));
  EXPECT_FALSE(RowReduceInBlocks(*instructions[IndexOf(p, "middle")]));
  EXPECT_FALSE(RowReduceInBlocks(*instructions[IndexOf(p, "ints")]));
}

TEST(FusionPlanner, ReducesOfLongRowsBySumMaxOrMinComputeTheirLoopsInChunks) {
  // A whole array's loss, mean((x - y)^2): one row of 2^15 elements, longer
  // than a block's, so computed and summed a chunk at a time; the same for
  // three rows, and for max. A product's order would change: its loop is
  // stored and the reduce kernel reads it. Rows of a block's length stay
  // with the blocks.
  const std::string add = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n";
  const std::string mul = "mul {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] multiply(a, b)\n}\n";
  const std::string max = "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] maximum(a, b)\n}\n";
  Planned p = Plan(
      "  x = f32[128,256] parameter(0)\n  y = f32[128,256] parameter(1)\n  zero = f32[] constant(0)\n"
      "  d = f32[128,256] subtract(x, y)\n  sq = f32[128,256] multiply(d, d)\n"
      "  loss = f32[] reduce(sq, zero), dimensions={0,1}, to_apply=add\n"
      "  z = f32[3,32768] parameter(2)\n  a = f32[3,32768] abs(z)\n"
      "  peaks = f32[3] reduce(a, zero), dimensions={1}, to_apply=max\n"
      "  t = f32[3,32768] tanh(z)\n  prod = f32[3] reduce(t, zero), dimensions={1}, to_apply=mul\n"
      "  w = f32[4,16384] parameter(3)\n  e = f32[4,16384] exponential(w)\n"
      "  blocked = f32[4] reduce(e, zero), dimensions={1}, to_apply=add\n"
      "  ROOT r = (f32[], f32[3], f32[3], f32[4]) tuple(loss, peaks, prod, blocked)\n",
      add + mul + max);
  const auto& instructions = p.module->entry->instructions;
  EXPECT_TRUE(RowReduceInChunks(*instructions[IndexOf(p, "loss")]));
  EXPECT_FALSE(RowReduceInBlocks(*instructions[IndexOf(p, "loss")]));
  EXPECT_TRUE(RowReduceInChunks(*instructions[IndexOf(p, "peaks")]));
  EXPECT_FALSE(RowReduceInChunks(*instructions[IndexOf(p, "prod")]));
  EXPECT_FALSE(RowReduceInChunks(*instructions[IndexOf(p, "blocked")]));
  EXPECT_TRUE(RowReduceInBlocks(*instructions[IndexOf(p, "blocked")]));
  const int loss = p.plan.reduce_group[IndexOf(p, "loss")];
  ASSERT_GE(loss, 0);
  EXPECT_EQ(p.plan.groups[loss].members.back()->name, "sq");
  EXPECT_FALSE(p.plan.groups[loss].root_stored);
  const int peaks = p.plan.reduce_group[IndexOf(p, "peaks")];
  ASSERT_GE(peaks, 0);
  EXPECT_EQ(p.plan.groups[peaks].members.back()->name, "a");
  EXPECT_EQ(p.plan.reduce_group[IndexOf(p, "prod")], -1);
  EXPECT_GE(p.plan.reduce_group[IndexOf(p, "blocked")], 0);
}

TEST(FusionPlanner, ReducesOfNarrowColumnsComputeTheirLoopsInChunksOfRows) {
  // An NHWC image's variance over 32 channels: (x - mean)^2 summed down
  // the columns, computed a chunk of rows at a time in the reduce's step;
  // max too. Too few rows for two chunks, a product, or one column: stored,
  // and the reduce kernel reads it.
  const std::string add = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n";
  const std::string mul = "mul {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] multiply(a, b)\n}\n";
  const std::string max = "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] maximum(a, b)\n}\n";
  Planned p = Plan(
      "  x = f32[8,32,32,32] parameter(0)\n  m = f32[32] parameter(1)\n  zero = f32[] constant(0)\n"
      "  mb = f32[8,32,32,32] broadcast(m), dimensions={3}\n  d = f32[8,32,32,32] subtract(x, mb)\n"
      "  sq = f32[8,32,32,32] multiply(d, d)\n"
      "  var = f32[32] reduce(sq, zero), dimensions={0,1,2}, to_apply=add\n"
      "  a = f32[8,32,32,32] abs(x)\n  peaks = f32[32] reduce(a, zero), dimensions={0,1,2}, to_apply=max\n"
      "  t = f32[8,32,32,32] tanh(x)\n  prod = f32[32] reduce(t, zero), dimensions={0,1,2}, to_apply=mul\n"
      "  s = f32[100,32] parameter(2)\n  e = f32[100,32] exponential(s)\n"
      "  few = f32[32] reduce(e, zero), dimensions={0}, to_apply=add\n"
      "  c = f32[8192,1] parameter(3)\n  ct = f32[8192,1] tanh(c)\n"
      "  one = f32[1] reduce(ct, zero), dimensions={0}, to_apply=add\n"
      "  ROOT r = (f32[32], f32[32], f32[32], f32[32], f32[1]) tuple(var, peaks, prod, few, one)\n",
      add + mul + max);
  const auto& instructions = p.module->entry->instructions;
  EXPECT_TRUE(ColumnReduceInChunks(*instructions[IndexOf(p, "var")]));
  EXPECT_FALSE(ColumnReduceInBlocks(*instructions[IndexOf(p, "var")]));
  EXPECT_TRUE(ColumnReduceInChunks(*instructions[IndexOf(p, "peaks")]));
  EXPECT_FALSE(ColumnReduceInChunks(*instructions[IndexOf(p, "prod")]));
  EXPECT_FALSE(ColumnReduceInChunks(*instructions[IndexOf(p, "few")]));
  // One column is a row to the unfused reduce (summed by the row rule), so
  // it is never a chunked column reduce.
  EXPECT_FALSE(ColumnReduceInChunks(*instructions[IndexOf(p, "one")]));
  const int var = p.plan.reduce_group[IndexOf(p, "var")];
  ASSERT_GE(var, 0);
  EXPECT_EQ(p.plan.groups[var].members.back()->name, "sq");
  EXPECT_GE(p.plan.reduce_group[IndexOf(p, "peaks")], 0);
  EXPECT_EQ(p.plan.reduce_group[IndexOf(p, "prod")], -1);
  EXPECT_EQ(p.plan.reduce_group[IndexOf(p, "few")], -1);
}

TEST(FusionPlanner, AColumnReduceComputesTheLoopItReadsWhenEachThreadHasColumns) {
  // Softmax over axis 0: the exponentials are summed by columns as they
  // are computed, and stored by that step for the divide. A column reduce
  // with fewer columns than kMinColumnsPerThread per thread reads what a
  // loop of its own stores, as does one over a middle dimension.
  const std::string wide = std::to_string(std::max(kNarrowColumns, kMinColumnsPerThread * Parallel::Threads()));
  const std::string narrow = std::to_string(kMinColumnsPerThread * Parallel::Threads() - 16);
  Planned p = Plan(
      "  x = f32[8," + wide + "] parameter(0)\n  m = f32[" + wide + "] parameter(1)\n  zero = f32[] constant(0)\n"
      "  mb = f32[8," + wide + "] broadcast(m), dimensions={1}\n  d = f32[8," + wide + "] subtract(x, mb)\n"
      "  ex = f32[8," + wide + "] exponential(d)\n  s = f32[" + wide + "] reduce(ex, zero), dimensions={0}, to_apply=add\n"
      "  sb = f32[8," + wide + "] broadcast(s), dimensions={1}\n  soft = f32[8," + wide + "] divide(ex, sb)\n"
      "  n = f32[8," + narrow + "] parameter(2)\n  t = f32[8," + narrow + "] tanh(n)\n"
      "  sn = f32[" + narrow + "] reduce(t, zero), dimensions={0}, to_apply=add\n"
      "  y = f32[4,8," + wide + "] parameter(3)\n  ty = f32[4,8," + wide + "] tanh(y)\n"
      "  middle = f32[4," + wide + "] reduce(ty, zero), dimensions={1}, to_apply=add\n"
      "  ROOT r = (f32[8," + wide + "], f32[" + narrow + "], f32[4," + wide + "]) tuple(soft, sn, middle)\n",
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n");
  const auto& instructions = p.module->entry->instructions;
  EXPECT_TRUE(ColumnReduceInBlocks(*instructions[IndexOf(p, "s")]));
  EXPECT_FALSE(RowReduceInBlocks(*instructions[IndexOf(p, "s")]));
  EXPECT_FALSE(ColumnReduceInBlocks(*instructions[IndexOf(p, "sn")]));
  EXPECT_FALSE(ColumnReduceInBlocks(*instructions[IndexOf(p, "middle")]));
  const int g = p.plan.reduce_group[IndexOf(p, "s")];
  ASSERT_GE(g, 0);
  EXPECT_TRUE(p.plan.groups[g].root_stored);
  EXPECT_EQ(p.plan.groups[g].members.back()->name, "ex");
  EXPECT_EQ(p.plan.reduce_group[IndexOf(p, "sn")], -1);
  EXPECT_EQ(p.plan.reduce_group[IndexOf(p, "middle")], -1);
}

TEST(FusionPlanner, TransposesThatReadFewLinesPerTileAreReadInPlaceByTheirLoops) {
  // t moves the operand's last dimension to second-to-last, with 32 to the
  // result's last: the add reads it in place. Its operand e, an
  // exponential, is stored (the transpose reads it out of order), though
  // the transpose is its only reader. u's last dimension (100) is too long
  // to read in place, and s swaps leading dimensions (runs of 16).
  Planned p = Plan(
      "  x = f32[4,32,16] parameter(0)\n  e = f32[4,32,16] exponential(x)\n"
      "  t = f32[4,16,32] transpose(e), dimensions={0,2,1}\n  a = f32[4,16,32] add(t, t)\n"
      "  y = f32[100,16] parameter(1)\n  u = f32[16,100] transpose(y), dimensions={1,0}\n"
      "  n = f32[16,100] negate(u)\n"
      "  s = f32[32,4,16] transpose(x), dimensions={1,0,2}\n  m = f32[32,4,16] multiply(s, s)\n"
      "  ROOT r = (f32[4,16,32], f32[16,100], f32[32,4,16]) tuple(a, n, m)\n");
  const auto& instructions = p.module->entry->instructions;
  EXPECT_TRUE(FusedStridedRead(*instructions[IndexOf(p, "t")]).has_value());
  EXPECT_FALSE(FusedStridedRead(*instructions[IndexOf(p, "u")]).has_value());
  EXPECT_TRUE(FusedStridedRead(*instructions[IndexOf(p, "s")]).has_value());
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"s m <- x", "t a <- e"}));
  EXPECT_TRUE(p.plan.inlined_everywhere[IndexOf(p, "t")]);
  EXPECT_EQ(p.plan.group_of[IndexOf(p, "e")], -1);
  const auto read = FusedStridedRead(*instructions[IndexOf(p, "t")]);
  EXPECT_EQ(read->dims, (std::vector<int64_t>{4, 16, 32}));
  EXPECT_EQ(read->strides, (std::vector<int64_t>{512, 1, 16}));
}

TEST(FusionPlanner, SlicesAndReversesAreReadInPlaceByTheirLoops) {
  // JAX's x[::2, ::-3] * 2 is a strided slice, then a reverse, then the
  // multiply: the multiply's loop reads x through both (the slice has no
  // other reader). The slice u is read in place by the exponential's loop.
  // The slice g is read in place by the negate's loop, and read through by
  // the loop that reads its reverse: never stored. A slice of an s8 array is
  // not read in place (the loops' strided reads move four-byte values), nor
  // is a slice that no loop reads (w).
  Planned p = Plan(
      "  x = f32[8,9] parameter(0)\n  s = f32[4,3] slice(x), slice={[0:8:2], [0:9:3]}\n"
      "  r = f32[4,3] reverse(s), dimensions={1}\n  two = f32[] constant(2)\n"
      "  b = f32[4,3] broadcast(two), dimensions={}\n  m = f32[4,3] multiply(r, b)\n"
      "  w = f32[1,6] slice(x), slice={[1:2], [2:8]}\n  v = f32[6] reshape(w)\n"
      "  y = f32[3,6] parameter(1)\n  u = f32[2,5] slice(y), slice={[1:3], [1:6]}\n  e = f32[2,5] exponential(u)\n"
      "  q = s8[5] parameter(2)\n  qs = s8[2] slice(q), slice={[3:5]}\n  qc = f32[2] convert(qs)\n"
      "  z = f32[4,6] parameter(3)\n  g = f32[4,3] slice(z), slice={[0:4], [0:6:2]}\n"
      "  gr = f32[4,3] reverse(g), dimensions={0}\n  gl = f32[4,3] log(gr)\n  gn = f32[4,3] negate(g)\n"
      "  ROOT t = (f32[4,3], f32[6], f32[2,5], f32[2], f32[4,3], f32[4,3]) tuple(m, v, e, qc, gl, gn)\n");
  const auto& instructions = p.module->entry->instructions;
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"g gn <- z", "g gr gl <- z", "u e <- y", "s r b m <- x two"}));
  EXPECT_TRUE(p.plan.inlined_everywhere[IndexOf(p, "r")]);
  EXPECT_TRUE(p.plan.inlined_everywhere[IndexOf(p, "s")]);
  EXPECT_TRUE(p.plan.inlined_everywhere[IndexOf(p, "u")]);
  EXPECT_TRUE(p.plan.inlined_everywhere[IndexOf(p, "g")]);
  EXPECT_EQ(p.plan.group_of[IndexOf(p, "qc")], -1);
  EXPECT_FALSE(FusedStridedRead(*instructions[IndexOf(p, "qs")]).has_value());
  EXPECT_TRUE(FusedStridedRead(*instructions[IndexOf(p, "w")]).has_value());
  EXPECT_FALSE(p.plan.inlined_everywhere[IndexOf(p, "w")]);  // its reader, the reshape, is in no loop
  const auto slice = FusedStridedRead(*instructions[IndexOf(p, "u")]);
  ASSERT_TRUE(slice.has_value());
  EXPECT_EQ(slice->dims, (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(slice->strides, (std::vector<int64_t>{6, 1}));
  EXPECT_EQ(slice->base, 7);  // y[1][1]
  const auto strided = FusedStridedRead(*instructions[IndexOf(p, "s")]);
  ASSERT_TRUE(strided.has_value());
  EXPECT_EQ(strided->strides, (std::vector<int64_t>{18, 3}));
  EXPECT_EQ(strided->base, 0);
  const auto reverse = FusedStridedRead(*instructions[IndexOf(p, "r")]);
  ASSERT_TRUE(reverse.has_value());
  EXPECT_EQ(reverse->strides, (std::vector<int64_t>{3, -1}));
  EXPECT_EQ(reverse->base, 2);  // s[0][2]
  // r of s: result (i, j) reads x[2i][3(2 - j)].
  const StridedRead through = ComposedStridedRead({instructions[IndexOf(p, "r")].get(), instructions[IndexOf(p, "s")].get()});
  EXPECT_EQ(through.dims, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(through.strides, (std::vector<int64_t>{18, -3}));
  EXPECT_EQ(through.base, 6);
}

TEST(FusionPlanner, TransposesReadThroughNothingAndAStridedReadOfABroadcastIsStored) {
  // Two transposes that each read few lines per tile compose into one that
  // reads a line per element (t2 of t1 of x is perm {2,0,1}: a stride of 4
  // along its last dimension): t1 is stored, and t2 read in place from it,
  // as is a slice a transpose reads. A reverse of a broadcast that the add
  // also reads in place reads the broadcast from memory (stored for it),
  // while the add reads it in a register.
  Planned p = Plan(
      "  x = f32[4,3,4] parameter(0)\n  t1 = f32[4,4,3] transpose(x), dimensions={0,2,1}\n"
      "  t2 = f32[4,4,3] transpose(t1), dimensions={1,0,2}\n  n = f32[4,4,3] negate(t2)\n"
      "  v = f32[16] parameter(1)\n  b = f32[8,16] broadcast(v), dimensions={1}\n"
      "  r = f32[8,16] reverse(b), dimensions={1}\n  m = f32[8,16] add(r, b)\n"
      "  y = f32[6,8] parameter(2)\n  s = f32[6,4] slice(y), slice={[0:6], [2:6]}\n"
      "  ts = f32[4,6] transpose(s), dimensions={1,0}\n  e = f32[4,6] exponential(ts)\n"
      "  ROOT t = (f32[4,4,3], f32[8,16], f32[4,6]) tuple(n, m, e)\n");
  const auto& instructions = p.module->entry->instructions;
  EXPECT_FALSE(ReadsThrough(*instructions[IndexOf(p, "t2")], *instructions[IndexOf(p, "t1")]));
  EXPECT_FALSE(ReadsThrough(*instructions[IndexOf(p, "ts")], *instructions[IndexOf(p, "s")]));
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"ts e <- s", "b r m <- v b", "t2 n <- t1"}));
  EXPECT_FALSE(p.plan.inlined_everywhere[IndexOf(p, "t1")]);
  EXPECT_FALSE(p.plan.inlined_everywhere[IndexOf(p, "b")]);
  EXPECT_TRUE(p.plan.inlined_everywhere[IndexOf(p, "r")]);
  EXPECT_FALSE(p.plan.inlined_everywhere[IndexOf(p, "s")]);
}

TEST(FusionPlanner, ATransposeOfAReverseComposesDimensionByDimension) {
  // t's result (i, j, k) is r's (k, i, j) (perm {1,2,0}: runs of 3 along
  // r's dimension 0), and r's (a, b, c) is x's (a, 4 - b, 5 - c): t reads
  // x's (k, 4 - i, 5 - j), element 29 - 6i - j + 30k.
  Planned p = Plan(
      "  x = f32[3,5,6] parameter(0)\n  r = f32[3,5,6] reverse(x), dimensions={1,2}\n"
      "  t = f32[5,6,3] transpose(r), dimensions={1,2,0}\n  n = f32[5,6,3] negate(t)\n");
  const auto& instructions = p.module->entry->instructions;
  const StridedRead read =
      ComposedStridedRead({instructions[IndexOf(p, "t")].get(), instructions[IndexOf(p, "r")].get()});
  EXPECT_EQ(read.dims, (std::vector<int64_t>{5, 6, 3}));
  EXPECT_EQ(read.strides, (std::vector<int64_t>{-6, -1, 30}));
  EXPECT_EQ(read.base, 29);
  // The maps compose; the planner reads through slices and reverses only.
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"t n <- r"}));
  EXPECT_FALSE(p.plan.inlined_everywhere[IndexOf(p, "r")]);
  // A transpose the loops read in place, of a slice: t2's (i, j) is s's
  // (j, i), which is x2's (j, 2 + i).
  Planned q = Plan(
      "  x2 = f32[4,10] parameter(0)\n  s = f32[4,8] slice(x2), slice={[0:4], [2:10]}\n"
      "  t2 = f32[8,4] transpose(s), dimensions={1,0}\n  n = f32[8,4] negate(t2)\n");
  const auto& qi = q.module->entry->instructions;
  const StridedRead composed = ComposedStridedRead({qi[IndexOf(q, "t2")].get(), qi[IndexOf(q, "s")].get()});
  EXPECT_EQ(composed.dims, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(composed.strides, (std::vector<int64_t>{1, 10}));
  EXPECT_EQ(composed.base, 2);
}

TEST(FusionPlanner, BroadcastsAlongARunOfDimensionsAreInlinedOthersAreNot) {
  Planned p = Plan(
      "  x = f32[3,5,7] parameter(0)\n  row = f32[7] parameter(1)\n  lead = f32[3] parameter(2)\n"
      "  mid = f32[5,7] parameter(3)\n  swapped = f32[7,5] parameter(4)\n"
      "  br = f32[3,5,7] broadcast(row), dimensions={2}\n  bl = f32[3,5,7] broadcast(lead), dimensions={0}\n"
      "  bm = f32[3,5,7] broadcast(mid), dimensions={1,2}\n  bs = f32[3,5,7] broadcast(swapped), dimensions={2,1}\n"
      "  a = f32[3,5,7] add(x, br)\n  m = f32[3,5,7] multiply(a, bl)\n  s = f32[3,5,7] subtract(m, bm)\n"
      "  ROOT d = f32[3,5,7] divide(s, bs)\n");
  // bs transposes its operand: it is stored by its own step and read.
  EXPECT_EQ(p.Groups(), (std::vector<std::string>{"br bl bm a m s d <- row lead mid x bs"}));
  for (const auto& i : p.module->entry->instructions) {
    auto run = FusedBroadcastRun(*i);
    if (i->name == "br") {
      EXPECT_TRUE(run && run->inner == 1 && run->size == 7);
    }
    if (i->name == "bl") {
      EXPECT_TRUE(run && run->inner == 35 && run->size == 3);
    }
    if (i->name == "bm") {
      EXPECT_TRUE(run && run->inner == 1 && run->size == 35);
    }
    if (i->name == "bs") {
      EXPECT_FALSE(run);
    }
  }
}

// The row chains of a planned program: each chain's steps by name, its
// rows and its block.
std::vector<std::string> Chains(const Planned& p) {
  std::vector<std::string> out;
  for (const RowChain& c : PlanRowChains(*p.module->entry, p.plan, [](const hlo::Instruction*) { return false; })) {
    std::string names;
    for (size_t s : c.steps) names += (names.empty() ? "" : " ") + p.module->entry->instructions[s]->name;
    out.push_back(names + " rows " + std::to_string(c.rows) + " by " + std::to_string(c.block_rows));
  }
  return out;
}

constexpr char kAddAndMax[] =
    "add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "max_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n";

TEST(RowChains, LayerNormIsOneChain) {
  Planned p = Plan(
      "  x = f32[1000,300] parameter(0)\n  zero = f32[] constant(0)\n"
      "  s = f32[1000] reduce(x, zero), dimensions={1}, to_apply=add_f32\n"
      "  n = f32[] constant(0.0033)\n  nb = f32[1000] broadcast(n), dimensions={}\n"
      "  mean = f32[1000] multiply(s, nb)\n  meanb = f32[1000,300] broadcast(mean), dimensions={0}\n"
      "  d = f32[1000,300] subtract(x, meanb)\n  d2 = f32[1000,300] multiply(d, d)\n"
      "  v = f32[1000] reduce(d2, zero), dimensions={1}, to_apply=add_f32\n"
      "  rs = f32[1000] rsqrt(v)\n  rsb = f32[1000,300] broadcast(rs), dimensions={0}\n"
      "  ROOT y = f32[1000,300] multiply(d, rsb)\n",
      kAddAndMax);
  // 16384 / 300 elements is 54 rows, 48 in whole groups of the row sums' 16.
  EXPECT_EQ(Chains(p), (std::vector<std::string>{"s mean v rs y rows 1000 by 48"}));
}

TEST(RowChains, JaxSoftmaxChainsThroughReshapes) {
  // Rank 3, its rows the two leading dimensions; the maxima and sums come
  // back through [4,100,1] reshapes, which are the chain's values too.
  Planned p = Plan(
      "  x = f32[4,100,200] parameter(0)\n  ninf = f32[] constant(-inf)\n  zero = f32[] constant(0)\n"
      "  mx = f32[4,100] reduce(x, ninf), dimensions={2}, to_apply=max_f32\n"
      "  mr = f32[4,100,1] reshape(mx)\n  mb = f32[4,100,200] broadcast(mr), dimensions={0,1,2}\n"
      "  sh = f32[4,100,200] subtract(x, mb)\n  ex = f32[4,100,200] exponential(sh)\n"
      "  sm = f32[4,100] reduce(ex, zero), dimensions={2}, to_apply=add_f32\n"
      "  sr = f32[4,100,1] reshape(sm)\n  sb = f32[4,100,200] broadcast(sr), dimensions={0,1,2}\n"
      "  ROOT r = f32[4,100,200] divide(ex, sb)\n",
      kAddAndMax);
  EXPECT_EQ(Chains(p), (std::vector<std::string>{"mx sm r rows 400 by 80"}));
}

TEST(RowChains, JaxSoftmaxChainsThroughBroadcastsThatAddDimensionsOfSizeOne) {
  Planned p = Plan(
      "  x = f32[4,100,200] parameter(0)\n  ninf = f32[] constant(-inf)\n  zero = f32[] constant(0)\n"
      "  mx = f32[4,100] reduce(x, ninf), dimensions={2}, to_apply=max_f32\n"
      "  mr = f32[4,100,1] broadcast(mx), dimensions={0,1}\n  mb = f32[4,100,200] broadcast(mr), dimensions={0,1,2}\n"
      "  sh = f32[4,100,200] subtract(x, mb)\n  ex = f32[4,100,200] exponential(sh)\n"
      "  sm = f32[4,100] reduce(ex, zero), dimensions={2}, to_apply=add_f32\n"
      "  sr = f32[4,100,1] broadcast(sm), dimensions={0,1}\n  sb = f32[4,100,200] broadcast(sr), dimensions={0,1,2}\n"
      "  ROOT r = f32[4,100,200] divide(ex, sb)\n",
      kAddAndMax);
  EXPECT_EQ(Chains(p), (std::vector<std::string>{"mx sm r rows 400 by 80"}));
  for (const auto& i : p.module->entry->instructions) {
    EXPECT_EQ(IsDegenerateBroadcast(*i), i->name == "mr" || i->name == "sr") << i->name;
  }
}

TEST(RowChains, AReadAcrossRowsEndsTheChain) {
  // b is mx broadcast along the columns: row r of y reads every row's
  // maximum, so y cannot run a block at a time after mx; z, reading mx
  // along the rows, could, but the chain ended at y.
  Planned p = Plan(
      "  x = f32[256,256] parameter(0)\n  ninf = f32[] constant(-inf)\n"
      "  mx = f32[256] reduce(x, ninf), dimensions={1}, to_apply=max_f32\n"
      "  b = f32[256,256] broadcast(mx), dimensions={1}\n  y = f32[256,256] subtract(x, b)\n"
      "  c = f32[256,256] broadcast(mx), dimensions={0}\n  z = f32[256,256] subtract(x, c)\n"
      "  ROOT t = (f32[256,256], f32[256,256]) tuple(y, z)\n",
      kAddAndMax);
  EXPECT_EQ(Chains(p), std::vector<std::string>{});
}

TEST(RowChains, AStepThatIsNoRowStepEndsTheChain) {
  // The transpose between the reduces is not computed by rows.
  Planned p = Plan(
      "  x = f32[512,64] parameter(0)\n  zero = f32[] constant(0)\n"
      "  s = f32[512] reduce(x, zero), dimensions={1}, to_apply=add_f32\n"
      "  xt = f32[64,512] transpose(x), dimensions={1,0}\n"
      "  sb = f32[512,64] broadcast(s), dimensions={0}\n  y = f32[512,64] multiply(x, sb)\n"
      "  ROOT t = (f32[512,64], f32[64,512]) tuple(y, xt)\n",
      kAddAndMax);
  EXPECT_EQ(Chains(p), std::vector<std::string>{});
}

TEST(RowChains, SmallArraysAreNotChained) {
  // Two blocks' worth of rows: too few to share between threads.
  Planned p = Plan(
      "  x = f32[32,1024] parameter(0)\n  zero = f32[] constant(0)\n"
      "  s = f32[32] reduce(x, zero), dimensions={1}, to_apply=add_f32\n"
      "  sb = f32[32,1024] broadcast(s), dimensions={0}\n  ROOT y = f32[32,1024] multiply(x, sb)\n",
      kAddAndMax);
  EXPECT_EQ(Chains(p), std::vector<std::string>{});
}

}  // namespace
}  // namespace anvil::cpu
