#include "hlo/topk_rewriter.h"

#include <gtest/gtest.h>

#include "hlo/canonicalize.h"
#include "hlo/hlo_parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

namespace anvil::hlo {
namespace {

// A sort of `keys` with an iota along the last dimension by `compare`,
// whose results `tail` reads (it names the sort's results v and i).
std::string Program(const std::string& compare, const std::string& keys, const std::string& tail,
                    const std::string& iota_dimension = "1", const std::string& sort_dimension = "1") {
  return R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] )" + compare + R"(
}
ENTRY e {
  x = f32[)" + keys + R"(] parameter(0)
  io = s32[)" + keys + R"(] iota(), iota_dimension=)" + iota_dimension + R"(
  s = (f32[)" + keys + "], s32[" + keys + R"(]) sort(x, io), dimensions={)" + sort_dimension + R"(}, is_stable=true, to_apply=cmp
  v = f32[)" + keys + R"(] get-tuple-element(s), index=0
  i = s32[)" + keys + R"(] get-tuple-element(s), index=1
)" + tail + "}\n";
}

const char kTopThree[] = R"(  tv = f32[4,3] slice(v), slice={[0:4], [0:3]}
  ti = s32[4,3] slice(i), slice={[0:4], [0:3]}
  ROOT t = (f32[4,3], s32[4,3]) tuple(tv, ti)
)";

// The rewritten module, printed, after dead code is dropped; empty when the
// rewrite did nothing.
std::string Rewritten(const std::string& text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "";
  if (RewriteSortsAsTopK(**m) == 0) return "";
  RemoveDeadCode(**m);
  Status verified = Verify(**m);
  EXPECT_TRUE(verified.ok()) << verified.message();
  return Print(**m);
}

TEST(TopKRewriter, TheFirstKOfASortByTotalOrderBecomeATopK) {
  const std::string text =
      Rewritten(Program("compare(a, b), direction=GT, type=TOTALORDER", "4,9", kTopThree));
  EXPECT_NE(text.find("topk(%x), k=3, largest=true"), std::string::npos) << text;
  EXPECT_EQ(text.find("sort("), std::string::npos) << text;
  EXPECT_EQ(text.find("iota("), std::string::npos) << text;
}

TEST(TopKRewriter, AnAscendingComparatorAsksForTheSmallest) {
  for (const char* compare : {"compare(a, b), direction=LT, type=TOTALORDER", "compare(b, a), direction=GT, type=TOTALORDER"}) {
    const std::string text = Rewritten(Program(compare, "4,9", kTopThree));
    EXPECT_NE(text.find("largest=false"), std::string::npos) << compare << "\n" << text;
  }
}

TEST(TopKRewriter, LeavesSortsThatAreNotATopK) {
  // Floats compared without their total order (NaN would fall elsewhere).
  EXPECT_EQ(Rewritten(Program("compare(a, b), direction=GT", "4,9", kTopThree)), "");
  // A comparator that reads the indices too.
  EXPECT_EQ(Rewritten(Program("compare(c, d), direction=LT", "4,9", kTopThree)), "");
  // A sort along another dimension, or an iota along another dimension.
  EXPECT_EQ(Rewritten(Program("compare(a, b), direction=GT, type=TOTALORDER", "4,9", R"(  tv = f32[3,9] slice(v), slice={[0:3], [0:9]}
  ti = s32[3,9] slice(i), slice={[0:3], [0:9]}
  ROOT t = (f32[3,9], s32[3,9]) tuple(tv, ti)
)", "0", "0")), "");
  EXPECT_EQ(Rewritten(Program("compare(a, b), direction=GT, type=TOTALORDER", "4,9", kTopThree, "0")), "");
  // Slices that do not start at 0, that differ in k, or that skip rows.
  EXPECT_EQ(Rewritten(Program("compare(a, b), direction=GT, type=TOTALORDER", "4,9", R"(  tv = f32[4,3] slice(v), slice={[0:4], [1:4]}
  ti = s32[4,3] slice(i), slice={[0:4], [1:4]}
  ROOT t = (f32[4,3], s32[4,3]) tuple(tv, ti)
)")), "");
  EXPECT_EQ(Rewritten(Program("compare(a, b), direction=GT, type=TOTALORDER", "4,9", R"(  tv = f32[4,3] slice(v), slice={[0:4], [0:3]}
  ti = s32[4,2] slice(i), slice={[0:4], [0:2]}
  ROOT t = (f32[4,3], s32[4,2]) tuple(tv, ti)
)")), "");
  EXPECT_EQ(Rewritten(Program("compare(a, b), direction=GT, type=TOTALORDER", "4,9", R"(  tv = f32[2,3] slice(v), slice={[0:2], [0:3]}
  ti = s32[2,3] slice(i), slice={[0:2], [0:3]}
  ROOT t = (f32[2,3], s32[2,3]) tuple(tv, ti)
)")), "");
  // A result read whole as well.
  EXPECT_EQ(Rewritten(Program("compare(a, b), direction=GT, type=TOTALORDER", "4,9", R"(  tv = f32[4,3] slice(v), slice={[0:4], [0:3]}
  ROOT t = (f32[4,3], f32[4,9]) tuple(tv, v)
)")), "");
}

}  // namespace
}  // namespace anvil::hlo
