// Which reduce bodies a LaneProgram says round nothing (one condition for
// cutting a long reduction into chunks; kernels_lane_reduce.cc also checks
// the body is associative): compares, selects, logic, maximum, minimum and
// s32 arithmetic; never an f32 add, subtract or multiply.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "hlo/hlo_parser.h"
#include "plugins/cpu/lane_program.h"

namespace anvil::cpu {
namespace {

// The body `computation` (named `body`) compiled as a LaneProgram.
std::optional<LaneProgram> Compiled(const std::string& computation) {
  auto module = hlo::ParseHloModule("HloModule m\n" + computation +
                                    "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\n");
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return std::nullopt;
  for (const auto& c : (*module)->computations) {
    if (c->name == "body") return LaneProgram::Compile(*c);
  }
  ADD_FAILURE() << "no computation named body";
  return std::nullopt;
}

bool RoundsNothing(const std::string& computation) {
  const std::optional<LaneProgram> program = Compiled(computation);
  EXPECT_TRUE(program.has_value());
  return program && program->RoundsNothing();
}

std::string Binary(const std::string& type, const std::string& op) {
  return "body {\n  a = " + type + "[] parameter(0)\n  b = " + type + "[] parameter(1)\n  ROOT c = " + type + "[] " +
         op + "(a, b)\n}\n";
}

TEST(CpuLaneProgram, OnlyBodiesWithoutF32ArithmeticRoundNothing) {
  EXPECT_TRUE(RoundsNothing(
      "body {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  b = f32[] parameter(2)\n"
      "  bi = s32[] parameter(3)\n  gt = pred[] compare(a, b), direction=GT\n  v = f32[] select(gt, a, b)\n"
      "  eq = pred[] compare(a, b), direction=EQ\n  lt = pred[] compare(ai, bi), direction=LT\n"
      "  tie = pred[] and(eq, lt)\n  k = pred[] or(gt, tie)\n  i = s32[] select(k, ai, bi)\n"
      "  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"));
  EXPECT_TRUE(RoundsNothing(Binary("f32", "maximum")));
  EXPECT_TRUE(RoundsNothing(Binary("f32", "minimum")));
  EXPECT_TRUE(RoundsNothing(Binary("s32", "add")));
  EXPECT_TRUE(RoundsNothing(Binary("s32", "multiply")));
  EXPECT_FALSE(RoundsNothing(Binary("f32", "add")));
  EXPECT_FALSE(RoundsNothing(Binary("f32", "multiply")));
  EXPECT_FALSE(RoundsNothing(Binary("f32", "subtract")));
  EXPECT_TRUE(RoundsNothing(Binary("s32", "subtract")));
}

}  // namespace
}  // namespace anvil::cpu
