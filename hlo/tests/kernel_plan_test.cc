// The target-independent kernel planner: which producers are fused into
// which kernel, what each kernel reads from memory, and the index
// arithmetic code generators share.
#include "hlo/kernel_plan.h"

#include <gtest/gtest.h>

#include "hlo/hlo_parser.h"
#include "hlo/kernel_index.h"

namespace anvil::hlo {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseHloModule(text, {"test", 1});
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

std::vector<std::string> Names(const std::vector<const Instruction*>& v) {
  std::vector<std::string> names;
  for (const Instruction* i : v) names.push_back(i->name);
  return names;
}

TEST(KernelPlan, AnElementwiseChainIsOneKernel) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  two = f32[] constant(2)
  t = f32[8] broadcast(two), dimensions={}
  p = f32[8] multiply(a, t)
  ROOT s = f32[8] add(p, b)
})");
  auto plan = PlanKernels(*m);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->computations.size(), 1u);
  const auto& steps = plan->computations[0].steps;
  ASSERT_EQ(steps.size(), 1u);
  const KernelSpec& k = steps[0].kernel;
  EXPECT_EQ(k.kind, KernelKind::kLoop);
  EXPECT_EQ(k.root->name, "s");
  // The scalar constant is written into the kernel, first.
  EXPECT_EQ(Names(k.fused), (std::vector<std::string>{"two", "t", "p"}));
  EXPECT_EQ(Names(k.inputs), (std::vector<std::string>{"a", "b"}));
}

TEST(KernelPlan, AValueReadTwiceIsStoredOnce) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  x = f32[8] exponential(a)
  y = f32[8] negate(x)
  ROOT s = f32[8] add(x, y)
})");
  auto plan = PlanKernels(*m);
  ASSERT_TRUE(plan.ok());
  const auto& steps = plan->computations[0].steps;
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].kernel.root->name, "x");
  EXPECT_EQ(steps[1].kernel.root->name, "s");
  EXPECT_EQ(Names(steps[1].kernel.fused), (std::vector<std::string>{"y"}));
  EXPECT_EQ(Names(steps[1].kernel.inputs), (std::vector<std::string>{"x"}));
}

TEST(KernelPlan, ReductionsFuseTheirInputsAndDotsReadStoredOperands) {
  auto m = Parse(R"(HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[8,3] parameter(1)
  sq = f32[4,8] multiply(a, a)
  zero = f32[] constant(0)
  r = f32[4] reduce(sq, zero), dimensions={1}, to_apply=add
  n = f32[8,3] negate(b)
  d = f32[4,3] dot(a, n), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[4], f32[4,3]) tuple(r, d)
})");
  auto plan = PlanKernels(*m);
  ASSERT_TRUE(plan.ok());
  const auto& steps = plan->computations[0].steps;
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].kernel.kind, KernelKind::kReduce);
  EXPECT_EQ(Names(steps[0].kernel.fused), (std::vector<std::string>{"zero", "sq"}));
  EXPECT_EQ(Names(steps[0].kernel.inputs), (std::vector<std::string>{"a"}));
  EXPECT_EQ(steps[1].kernel.root->name, "n");  // a dot re-reads operands: stored, not fused
  EXPECT_EQ(steps[2].kernel.kind, KernelKind::kDot);
  EXPECT_TRUE(steps[2].kernel.fused.empty());
}

TEST(KernelPlan, ControlFlowStaysOnTheHostAndItsComputationsArePlanned) {
  auto m = Parse(R"(HloModule m
cond { s = f32[4] parameter(0)  z = f32[] constant(0)  r = f32[] reduce(s, z), dimensions={0}, to_apply=add
       l = f32[] constant(100)  ROOT c = pred[] compare(r, l), direction=LT }
body { s = f32[4] parameter(0)  ROOT d = f32[4] add(s, s) }
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[4] parameter(0)
  ROOT w = f32[4] while(a), condition=cond, body=body
})");
  auto plan = PlanKernels(*m);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->computations.size(), 3u);  // entry, then body and condition
  EXPECT_EQ(plan->computations[0].steps.at(0).kind, PlanStep::Kind::kControl);
  EXPECT_NE(plan->Find(m->FindComputation("cond")), nullptr);
  EXPECT_NE(plan->Find(m->FindComputation("body")), nullptr);
  EXPECT_EQ(plan->Find(m->FindComputation("add")), nullptr);  // a combiner, written into kernels
}

TEST(KernelPlan, AnOpWithNoKernelIsNamed) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(a), replica_groups={}, to_apply=add
}
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) })");
  auto plan = PlanKernels(*m);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(plan.status().message().find("%r (all-reduce f32[4])"), std::string::npos) << plan.status().message();
}

TEST(KernelPlan, ElementwiseCustomCallsAreLoopOps) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT l = f32[4] custom-call(a), custom_call_target="chlo.lgamma"
})");
  EXPECT_EQ(ElementwiseCustomCall(*m->entry->root), "lgamma");
  EXPECT_EQ(RoleOf(*m->entry->root), Role::kLoop);
}

TEST(KernelIndex, CoordinatesAndLinearIndexAreRowMajor) {
  const auto c = CoordinatesOf("i", {2, 3, 4});
  EXPECT_EQ(c, (std::vector<std::string>{"(i / 12u)", "((i / 4u) % 3u)", "(i % 4u)"}));
  EXPECT_EQ(LinearIndexOf({"x", "y", "z"}, {2, 3, 4}), "(x * 12u + y * 4u + z)");
  // Dimensions of size one contribute nothing.
  EXPECT_EQ(CoordinatesOf("i", {1, 5})[0], "0u");
  EXPECT_EQ(LinearIndexOf({"x", "y"}, {1, 5}), "(y)");
}

}  // namespace
}  // namespace anvil::hlo
