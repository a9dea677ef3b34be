// The record of oneDNN's convolution choices that a serialised CPU
// executable carries: it reads back what was written, refuses every
// truncation with a byte offset, and reads as empty where it was made by
// another oneDNN (its choices may not exist there).
#include "plugins/cpu/conv_layouts.h"

#include <gtest/gtest.h>
#include <oneapi/dnnl/dnnl.h>

#include <string>

#include "plugins/cpu/conv_problem.h"

namespace anvil::cpu {
namespace {

ConvProblem Problem(int64_t stride) {
  ConvProblem p;
  p.src = {{2, 3, 8, 8}, {192, 64, 8, 1}};
  p.weights = {{4, 3, 3, 3}, {27, 9, 3, 1}};
  p.dst = {{2, 4, 8 / stride, 8 / stride}, {}};
  p.strides = {stride, stride};
  p.dilates = {0, 0};
  p.pad_l = p.pad_r = {1, 1};
  p.flip = {false, false};
  return p;
}

ConvLayout Layout(char fill, const std::string& impl) {
  const std::string desc(sizeof(dnnl_memory_desc_t), fill);
  return ConvLayout{{desc, desc, desc}, desc, impl};
}

TEST(ConvLayoutBook, ReadsBackWhatWasWrittenByProblem) {
  ConvLayoutBook book;
  book.Record(ConvProblemKey(Problem(1)), Layout('a', "jit:avx512_core"));
  book.Record(ConvProblemKey(Problem(2)), Layout('b', "gemm:jit"));
  EXPECT_EQ(ConvProblemKey(Problem(1)), ConvProblemKey(Problem(1)));
  EXPECT_NE(ConvProblemKey(Problem(1)), ConvProblemKey(Problem(2)));
  auto read = ConvLayoutBook::Read(book.Write(), "book");
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ((*read)->size(), 2u);
  const std::optional<ConvLayout> one = (*read)->Find(ConvProblemKey(Problem(1)));
  const std::optional<ConvLayout> two = (*read)->Find(ConvProblemKey(Problem(2)));
  ASSERT_TRUE(one && two);
  EXPECT_EQ(one->impl, "jit:avx512_core");
  EXPECT_EQ(two->ports[2], Layout('b', "").ports[2]);
  EXPECT_FALSE((*read)->Find(ConvProblemKey(Problem(4))).has_value());
}

TEST(ConvLayoutBook, EveryTruncationIsAnErrorWithItsByteOffset) {
  ConvLayoutBook book;
  book.Record(ConvProblemKey(Problem(1)), Layout('a', "jit:avx2"));
  const std::string bytes = book.Write();
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto read = ConvLayoutBook::Read(std::string_view(bytes).substr(0, n), "book");
    ASSERT_FALSE(read.ok()) << n;
    EXPECT_NE(read.status().message().find("book: byte "), std::string::npos) << read.status().message();
  }
  auto longer = ConvLayoutBook::Read(bytes + "x", "book");
  EXPECT_FALSE(longer.ok());
}

TEST(ConvLayoutBook, ABookFromAnotherOnednnReadsEmpty) {
  ConvLayoutBook book;
  book.Record(ConvProblemKey(Problem(1)), Layout('a', "jit:avx2"));
  std::string bytes = book.Write();
  bytes[0] = static_cast<char>(bytes[0] + 1);  // the major version it was made by
  auto read = ConvLayoutBook::Read(bytes, "book");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ((*read)->size(), 0u);
}

}  // namespace
}  // namespace anvil::cpu
