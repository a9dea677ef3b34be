// Which path the fused loop takes for a group (SummarizeFusedLoop), so that
// a loop that silently stops taking it fails here: the results tests
// (fused_loop_test.cc, horner_tile_test.cc) would pass either way, since
// every path computes the same bits. Runs of f32 adds, subtracts, multiplies
// and divides become chains (JAX's exact GELU as jaxlib sends it: three),
// but not through a result read again; selects of constants and bf16 ops of bf16 constants
// read them as scalars and fill no register.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "hlo/canonicalize.h"
#include "hlo/hlo_parser.h"
#include "plugins/cpu/fusion_planner.h"
#include "plugins/cpu/kernels_fused.h"

namespace anvil::cpu {
namespace {

// The summary of the loop of each group of the program's entry, after
// canonicalisation (as the plugin sees it).
std::vector<FusedLoopSummary> Summaries(const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return {};
  EXPECT_TRUE(hlo::Canonicalize(**module).ok());
  const hlo::Instruction* root = (*module)->entry->root;
  std::vector<const hlo::Instruction*> outputs;
  if (root->opcode == hlo::Opcode::kTuple) {
    outputs.assign(root->operands.begin(), root->operands.end());
  } else {
    outputs.push_back(root);
  }
  const FusionPlan plan = PlanElementwiseFusion(*(*module)->entry, outputs);
  std::vector<FusedLoopSummary> out;
  for (const FusionGroup& g : plan.groups) {
    const std::optional<FusedLoopSummary> s = SummarizeFusedLoop(g.members, g.inputs);
    EXPECT_TRUE(s.has_value());
    if (s) out.push_back(*s);
  }
  return out;
}

// The same for a test program of this plugin's tests folder.
std::vector<FusedLoopSummary> SummariesOfTestProgram(const std::string& name) {
  std::ifstream file(std::string(ANVIL_CPU_TESTS_DIR) + "/" + name);
  EXPECT_TRUE(file) << "cannot read " << name;
  std::stringstream text;
  text << file.rdbuf();
  return Summaries(text.str());
}

TEST(FusedLoopSummary, JaxExactGeluHoldsThreeHornerChains) {
  const std::vector<FusedLoopSummary> loops = SummariesOfTestProgram("fused_horner_erfc_gelu.hlo");
  ASSERT_EQ(loops.size(), 1u);
  // Chains of 16, 14 and 14 steps: eight, seven and six multiply-adds,
  // the last followed by erfc's x * p and 1 - that (terms before p).
  EXPECT_EQ(loops[0].horner_chains, 3);
  EXPECT_EQ(loops[0].horner_steps, 44);
}

// d1 is read twice, so no chain runs through it: the chain starts after
// it, from d1 as its starting value, and reads it again as its last term.
TEST(FusedLoopSummary, AStepReadTwiceStartsTheChainAfterIt) {
  const std::string s = "f32[4096]";
  const std::vector<FusedLoopSummary> loops = Summaries(
      "HloModule m\nENTRY e {\n  w = " + s + " parameter(0)\n  c0 = f32[] constant(0.75)\n  c1 = f32[] constant(-1.25)\n"
      "  b0 = " + s + " broadcast(c0), dimensions={}\n  b1 = " + s + " broadcast(c1), dimensions={}\n"
      "  d1 = " + s + " multiply(b0, w)\n  d2 = " + s + " add(d1, b1)\n  d3 = " + s + " multiply(d2, w)\n"
      "  ROOT d4 = " + s + " add(d3, d1)\n}\n");
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].horner_chains, 1);
  EXPECT_EQ(loops[0].horner_steps, 3);
}

// Layer norm's last loop, (x - mean) * scale * gamma + beta along rows,
// is one chain whose per-row terms (mean, scale) are broadcasts that a tile
// inside one row reads as one value, filling no register.
TEST(FusedLoopSummary, LayerNormScalingIsOneChainOfUnfilledRowTerms) {
  const std::vector<FusedLoopSummary> loops = Summaries(
      "HloModule m\nENTRY e {\n  x = f32[64,1024] parameter(0)\n  mean = f32[64] parameter(1)\n"
      "  scale = f32[64] parameter(2)\n  g = f32[1024] parameter(3)\n  b = f32[1024] parameter(4)\n"
      "  mb = f32[64,1024] broadcast(mean), dimensions={0}\n  sb = f32[64,1024] broadcast(scale), dimensions={0}\n"
      "  gb = f32[64,1024] broadcast(g), dimensions={1}\n  bb = f32[64,1024] broadcast(b), dimensions={1}\n"
      "  d = f32[64,1024] subtract(x, mb)\n  y = f32[64,1024] multiply(d, sb)\n"
      "  yg = f32[64,1024] multiply(y, gb)\n  ROOT r = f32[64,1024] add(yg, bb)\n}\n");
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].horner_chains, 1);
  EXPECT_EQ(loops[0].horner_steps, 4);
  EXPECT_EQ(loops[0].uniform_fills, 2);
}

// fused_op_chains.hlo: two chains, of four and seven steps, the first
// reading the row mean and scale as one value per tile.
TEST(FusedLoopSummary, OpChainsHoldTheirTerms) {
  const std::vector<FusedLoopSummary> loops = SummariesOfTestProgram("fused_op_chains.hlo");
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].horner_chains, 2);
  EXPECT_EQ(loops[0].horner_steps, 11);
  EXPECT_EQ(loops[0].uniform_fills, 2);
}

// Layer norm's squared deviation, (x - mean) * (x - mean), is a chain of
// two steps, the second a square, which no pair takes.
TEST(FusedLoopSummary, ASquaredDeviationIsAChainOfTwo) {
  const std::vector<FusedLoopSummary> loops = Summaries(
      "HloModule m\nENTRY e {\n  x = f32[64,1024] parameter(0)\n  mean = f32[64] parameter(1)\n"
      "  mb = f32[64,1024] broadcast(mean), dimensions={0}\n  d = f32[64,1024] subtract(x, mb)\n"
      "  ROOT d2 = f32[64,1024] multiply(d, d)\n}\n");
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].horner_chains, 1);
  EXPECT_EQ(loops[0].horner_steps, 2);
  EXPECT_EQ(loops[0].uniform_fills, 1);
}

TEST(FusedLoopSummary, SelectsOfConstantsFillNoRegister) {
  const std::string s = "f32[4096]", p = "pred[4096]";
  const std::vector<FusedLoopSummary> loops = Summaries(
      "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n  y = " + s + " parameter(1)\n"
      "  c1 = f32[] constant(-0.5)\n  c2 = f32[] constant(2)\n  zero = f32[] constant(0)\n"
      "  b1 = " + s + " broadcast(c1), dimensions={}\n  b2 = " + s + " broadcast(c2), dimensions={}\n"
      "  z = " + s + " broadcast(zero), dimensions={}\n  m = " + p + " compare(x, y), direction=LT\n"
      "  both = " + s + " select(m, b1, b2)\n  masked = " + s + " select(m, x, z)\n"
      "  ROOT r = " + s + " subtract(both, masked)\n}\n");
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].fills, 0);
  EXPECT_EQ(loops[0].scalar_reads, 2);
}

TEST(FusedLoopSummary, Bf16OpsOfBf16ConstantsFillNoRegister) {
  const std::string s = "f32[4096]", b = "bf16[4096]";
  const std::vector<FusedLoopSummary> loops = Summaries(
      "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n  c1 = bf16[] constant(1)\n  c2 = bf16[] constant(2)\n"
      "  h = " + b + " convert(x)\n  b2 = " + b + " broadcast(c2), dimensions={}\n  m = " + b + " multiply(h, b2)\n"
      "  b1 = " + b + " broadcast(c1), dimensions={}\n  a = " + b + " add(m, b1)\n  ROOT r = " + s + " convert(a)\n}\n");
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].fills, 0);
  EXPECT_EQ(loops[0].scalar_reads, 2);
}

// Layer norm's last loop: (x - mean) * rstd * g + b, mean and rstd per
// row. Each row's tiles hold one value of each, which the pair of
// subtract and multiply reads as two scalars: neither broadcast fills its
// register where a tile lies in one row. A compare has no scalar form, so
// the broadcast it reads is filled on every tile.
TEST(FusedLoopSummary, PerRowBroadcastsAreReadAsScalarsWhereATileHoldsOneRow) {
  const std::string s = "f32[8,2048]", v = "f32[8]", r = "f32[2048]";
  std::vector<FusedLoopSummary> loops = Summaries(
      "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n  mean = " + v + " parameter(1)\n  rstd = " + v +
      " parameter(2)\n  g = " + r + " parameter(3)\n"
      "  mb = " + s + " broadcast(mean), dimensions={0}\n  rb = " + s + " broadcast(rstd), dimensions={0}\n"
      "  gb = " + s + " broadcast(g), dimensions={1}\n  d = " + s + " subtract(x, mb)\n"
      "  y = " + s + " multiply(d, rb)\n  ROOT o = " + s + " multiply(y, gb)\n}\n");
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].uniform_fills, 2);
  loops = Summaries(
      "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n  mean = " + v + " parameter(1)\n"
      "  mb = " + s + " broadcast(mean), dimensions={0}\n  c = pred[8,2048] compare(x, mb), direction=LT\n"
      "  d = " + s + " subtract(x, mb)\n  z = f32[] constant(0)\n  zb = " + s + " broadcast(z), dimensions={}\n"
      "  ROOT o = " + s + " select(c, d, zb)\n}\n");
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].uniform_fills, 0);
}

}  // namespace
}  // namespace anvil::cpu
