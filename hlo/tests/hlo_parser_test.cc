#include "hlo/hlo_parser.h"

#include <gtest/gtest.h>

#include "hlo/printer.h"
#include "hlo/verifier.h"

namespace anvil::hlo {
namespace {

constexpr char kModule[] = R"(HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[]}

%add.1 (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main.5 (Arg_0.1: f32[4]) -> f32[] {
  %Arg_0.1 = f32[4]{0} parameter(0), metadata={op_name="x" source_file="f.py" source_line=3}
  %zero = f32[] constant(0)
  ROOT %reduce.3 = f32[] reduce(%Arg_0.1, /*index=1*/%zero), dimensions={0}, to_apply=%add.1
}
)";

TEST(HloParser, ReadsXlaText) {
  auto m = ParseHloModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const Module& module = **m;
  EXPECT_EQ(module.name, "jit_f");
  ASSERT_EQ(module.attributes.size(), 1u);
  EXPECT_EQ(module.attributes[0].key, "entry_computation_layout");
  ASSERT_EQ(module.computations.size(), 2u);
  EXPECT_EQ(module.entry->name, "main.5");
  const Instruction* root = module.entry->root;
  EXPECT_EQ(root->opcode, Opcode::kReduce);
  ASSERT_EQ(root->operands.size(), 2u);
  EXPECT_EQ(root->operands[1]->name, "zero");
  ASSERT_EQ(root->called_computations.size(), 1u);
  EXPECT_EQ(root->called_computations[0]->name, "add.1");
  EXPECT_EQ(root->FindAttribute("dimensions")->value, "{0}");
  EXPECT_EQ(module.entry->parameters[0]->FindAttribute("metadata")->value,
            "{op_name=\"x\" source_file=\"f.py\" source_line=3}");
  EXPECT_TRUE(Verify(module).ok());
}

TEST(HloParser, PrintRoundTrips) {
  auto m = ParseHloModule(kModule);
  ASSERT_TRUE(m.ok());
  std::string printed = Print(**m);
  auto again = ParseHloModule(printed);
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << printed;
  std::string difference;
  EXPECT_TRUE(Equal(**m, **again, &difference)) << difference;
  EXPECT_EQ(Print(**again), printed);
}

TEST(HloParser, SplitFilesAndHeaderlessModules) {
  auto modules = ParseHloText(
      "// comment\nHloModule a\nENTRY e {\n  ROOT c = s32[] constant(1)\n}\n// -----\n"
      "fusion {\n  p0 = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p0)\n}\n// -----\n// CHECK: only\n");
  ASSERT_TRUE(modules.ok()) << modules.status().message();
  ASSERT_EQ(modules->size(), 2u);
  EXPECT_EQ((*modules)[1]->entry->name, "fusion");
}

TEST(HloParser, InfersOmittedShapesAndInlineOperands) {
  auto m = ParseHloModule(
      "HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n  t = transpose(p), dimensions={1,0}\n"
      "  ROOT r = f32[6] reshape(f32[3,2] copy(t))\n}\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->entry->Find("t")->shape.ToString(false), "f32[3,2]");
  EXPECT_EQ((*m)->entry->root->operands[0]->opcode, Opcode::kCopy);
  EXPECT_TRUE(Verify(**m).ok());
}

TEST(HloParser, AsyncWrappersKeepTheirSpelling) {
  auto m = ParseHloModule(
      "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
      "  s = ((f32[4]), f32[4], u32[]) custom-call-start(p), custom_call_target=\"foo\"\n"
      "  ROOT d = f32[4] custom-call-done(s)\n}\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->entry->Find("s")->opcode, Opcode::kAsyncStart);
  EXPECT_NE(Print(**m).find("custom-call-start(%p)"), std::string::npos);
}

TEST(HloParser, ErrorsCarryLineAndColumn) {
  auto m = ParseHloModule("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] add(p, q)\n}\n",
                          SourceInfo{"x.hlo", 1});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.status().message(), "x.hlo:4:26: error: use of undefined value '%q' in computation e");
}

TEST(HloParser, LargeSplatConstantsStayOneValue) {
  // 64 Mi elements written as one value: parsed by spreading it, printed back
  // as that one value rather than as 64 Mi numbers.
  auto m = ParseHloModule("HloModule m\nENTRY e {\n  ROOT c = f32[8192,8192] constant(-1.5)\n}\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const Literal& literal = *(*m)->entry->root->literal;
  EXPECT_EQ(literal.GetDouble(0), -1.5);
  EXPECT_EQ(literal.GetDouble(literal.element_count() - 1), -1.5);
  EXPECT_NE(Print(**m).find("f32[8192,8192]{1,0} constant(-1.5)"), std::string::npos);
  auto empty = ParseHloModule("HloModule m\nENTRY e {\n  ROOT c = c64[100000000,0] constant((0, 0))\n}\n");
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_NE(Print(**empty).find("c64[100000000,0]{1,0} constant((0, 0))"), std::string::npos);
  auto reparsed = ParseHloModule(Print(**empty));
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().message();
  auto small = ParseHloModule("HloModule m\nENTRY e {\n  ROOT c = s32[3] constant({1, 1, 2})\n}\n");
  ASSERT_TRUE(small.ok());
  EXPECT_NE(Print(**small).find("constant({1, 1, 2})"), std::string::npos);
}

}  // namespace
}  // namespace anvil::hlo
