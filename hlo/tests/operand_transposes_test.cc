#include "hlo/operand_transposes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hlo/canonicalize.h"
#include "hlo/evaluator.h"
#include "hlo/hlo_parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

namespace anvil::hlo {
namespace {

Literal Counting(const Shape& shape, int64_t start) {
  Literal l(shape);
  for (int64_t k = 0; k < l.element_count(); ++k) l.SetF32(k, static_cast<float>((k * 7 + start) % 11) - 5.0f);
  return l;
}

// Rewrites `program` with `pass`, checks it still verifies and computes
// the same values from the same arguments, and returns its text.
template <typename Pass>
std::string RewrittenAndSame(const char* program, Pass pass, int expected_rewrites) {
  auto before = ParseHloModule(program);
  auto after = ParseHloModule(program);
  EXPECT_TRUE(before.ok() && after.ok());
  if (!before.ok() || !after.ok()) return "";
  EXPECT_EQ(pass(**after), expected_rewrites) << program;
  RemoveDeadCode(**after);
  const Status verified = Verify(**after);
  EXPECT_TRUE(verified.ok()) << verified.message();
  std::vector<Literal> arguments;
  std::vector<const Literal*> pointers;
  for (const Instruction* p : (*before)->entry->parameters) arguments.push_back(Counting(p->shape, p->parameter_number));
  for (const Literal& a : arguments) pointers.push_back(&a);
  auto want = EvaluateModule(**before, pointers);
  auto got = EvaluateModule(**after, pointers);
  EXPECT_TRUE(want.ok() && got.ok());
  if (want.ok() && got.ok()) {
    EXPECT_EQ(*got, *want) << Print(**after);
  }
  return Print(**after);
}

// JAX's x.T[:n, :m]: a corner of the transpose.
const char kCornerOfTranspose[] = R"(HloModule m
ENTRY e {
  x = f32[6,5] parameter(0)
  t = f32[5,6] transpose(x), dimensions={1,0}
  ROOT s = f32[3,2] slice(t), slice={[1:4], [0:4:2]}
}
)";

TEST(OperandTransposes, ASliceOfATransposeIsTakenBeforeIt) {
  const std::string text = RewrittenAndSame(kCornerOfTranspose, MoveSlicesBeforeTransposes, 1);
  EXPECT_NE(text.find("f32[2,3]{1,0} slice(%x), slice={[0:4:2], [1:4]}"), std::string::npos) << text;
  EXPECT_NE(text.find("%s = f32[3,2]{1,0} transpose("), std::string::npos) << text;
  EXPECT_EQ(text.find("%t ="), std::string::npos) << text;
}

// A permutation that is not its own inverse, with strides.
TEST(OperandTransposes, ASliceOfARotationIsTakenBeforeIt) {
  const char program[] = R"(HloModule m
ENTRY e {
  x = f32[4,5,6] parameter(0)
  t = f32[6,4,5] transpose(x), dimensions={2,0,1}
  ROOT s = f32[2,3,2] slice(t), slice={[1:5:2], [0:3], [1:5:2]}
}
)";
  const std::string text = RewrittenAndSame(program, MoveSlicesBeforeTransposes, 1);
  EXPECT_NE(text.find("f32[3,2,2]{2,1,0} slice(%x), slice={[0:3], [1:5:2], [1:5:2]}"), std::string::npos) << text;
}

TEST(OperandTransposes, ATransposeReadElsewhereKeepsItsSlicesAfterIt) {
  const char program[] = R"(HloModule m
ENTRY e {
  x = f32[6,5] parameter(0)
  t = f32[5,6] transpose(x), dimensions={1,0}
  s = f32[3,6] slice(t), slice={[1:4], [0:6]}
  ROOT r = (f32[3,6], f32[5,6]) tuple(s, t)
}
)";
  auto m = ParseHloModule(program);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(MoveSlicesBeforeTransposes(**m), 0);
}

// x.T @ y and x @ y.T: each product reads its operand as stored.
TEST(OperandTransposes, AProductReadsATransposedMatrixAsItIsStored) {
  const char lhs[] = R"(HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  y = f32[4,5] parameter(1)
  t = f32[3,4] transpose(x), dimensions={1,0}
  ROOT d = f32[3,5] dot(t, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  std::string text = RewrittenAndSame(lhs, FoldTransposedDotOperands, 1);
  EXPECT_NE(text.find("dot(%x, %y), lhs_contracting_dims={0}, rhs_contracting_dims={0}"), std::string::npos) << text;
  EXPECT_EQ(text.find("transpose"), std::string::npos) << text;
  const char rhs[] = R"(HloModule m
ENTRY e {
  x = f32[3,4] parameter(0)
  y = f32[5,4] parameter(1)
  t = f32[4,5] transpose(y), dimensions={1,0}
  ROOT d = f32[3,5] dot(x, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  text = RewrittenAndSame(rhs, FoldTransposedDotOperands, 1);
  EXPECT_NE(text.find("dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={1}"), std::string::npos) << text;
  // Batched: swapaxes(-1, -2) of both operands.
  const char batched[] = R"(HloModule m
ENTRY e {
  x = f32[2,4,3] parameter(0)
  y = f32[2,5,4] parameter(1)
  tx = f32[2,3,4] transpose(x), dimensions={0,2,1}
  ty = f32[2,4,5] transpose(y), dimensions={0,2,1}
  ROOT d = f32[2,3,5] dot(tx, ty), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
}
)";
  text = RewrittenAndSame(batched, FoldTransposedDotOperands, 2);
  EXPECT_NE(text.find("dot(%x, %y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={2}"),
            std::string::npos)
      << text;
}

// The one-hot product of bench/jax_ops.py: x.T[:1024, :256] as an operand
// becomes a slice of x's rows read transposed.
TEST(OperandTransposes, BothRewritesTogetherLeaveNoTranspose) {
  const char program[] = R"(HloModule m
ENTRY e {
  a = f32[3,6] parameter(0)
  x = f32[4,8] parameter(1)
  t = f32[8,4] transpose(x), dimensions={1,0}
  s = f32[6,2] slice(t), slice={[0:6], [0:2]}
  ROOT d = f32[3,2] dot(a, s), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  const std::string text = RewrittenAndSame(
      program, [](Module& m) { return MoveSlicesBeforeTransposes(m) + FoldTransposedDotOperands(m); }, 2);
  EXPECT_NE(text.find("f32[2,6]{1,0} slice(%x), slice={[0:2], [0:6]}"), std::string::npos) << text;
  EXPECT_NE(text.find("rhs_contracting_dims={1}"), std::string::npos) << text;
  EXPECT_EQ(text.find(" transpose("), std::string::npos) << text;
}

TEST(OperandTransposes, OtherPermutationsAndLayoutsStay) {
  const char* const programs[] = {
      // Batch dimensions moved by the transpose.
      R"(HloModule m
ENTRY e {
  x = f32[4,2,3] parameter(0)
  y = f32[2,4,5] parameter(1)
  t = f32[2,4,3] transpose(x), dimensions={1,0,2}
  ROOT d = f32[2,3,5] dot(t, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}
}
)",
      // Two free dimensions the swap would reorder.
      R"(HloModule m
ENTRY e {
  x = f32[3,2,4] parameter(0)
  y = f32[4,5] parameter(1)
  t = f32[3,4,2] transpose(x), dimensions={0,2,1}
  ROOT d = f32[3,2,5] dot(t, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
      // A transpose of a column-major operand.
      R"(HloModule m
ENTRY e {
  x = f32[4,3]{0,1} parameter(0)
  y = f32[4,5] parameter(1)
  t = f32[3,4] transpose(x), dimensions={1,0}
  ROOT d = f32[3,5] dot(t, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
      // A transpose with a column-major result.
      R"(HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  y = f32[4,5] parameter(1)
  t = f32[3,4]{0,1} transpose(x), dimensions={1,0}
  ROOT d = f32[3,5] dot(t, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"};
  for (const char* program : programs) {
    auto m = ParseHloModule(program);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(FoldTransposedDotOperands(**m), 0) << program;
  }
}

}  // namespace
}  // namespace anvil::hlo
