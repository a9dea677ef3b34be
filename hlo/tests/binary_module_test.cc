// The binary module form: it reads back into an equal module with the same
// source positions, and truncated or corrupt bytes are errors naming a byte,
// never a crash (the sanitizer builds run these too). The corpus test
// round-trips every corpus program through it as well.
#include "hlo/binary_module.h"

#include <gtest/gtest.h>

#include "hlo/hlo_parser.h"
#include "hlo/printer.h"

namespace anvil::hlo {
namespace {

// Tuples, a splat, a dense constant, an elided one, a bounded-dynamic
// dimension, a layout tail, a called computation and attributes (a tuple
// constant, which the text cannot hold, is added in code).
constexpr char kModule[] = R"(HloModule binary_form, is_scheduled=true

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (a: f32[4], b: s32[<=8]) -> (f32[], s32[<=8]) {
  %a = f32[4]{0} parameter(0), metadata={op_name="x" source_file="f.py" source_line=3}
  %b = s32[<=8] parameter(1)
  %zeros = f32[4]{0:T(128)} constant({0, 0, 0, 0})
  %ramp = s32[3] constant({1, 2, 3})
  %big = f32[64,64] constant({...})
  %zero = f32[] constant(0)
  %sum = f32[4]{0} add(%a, %zeros)
  %r = f32[] reduce(%sum, %zero), dimensions={0}, to_apply=%add
  ROOT %t = (f32[], s32[<=8]) tuple(%r, %b)
}
)";

std::unique_ptr<Module> Parsed() {
  auto m = ParseHloModule(kModule, SourceInfo{"binary_form.hlo", 1});
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return nullptr;
  std::unique_ptr<Module> module = std::move(m).value();
  auto pair = std::make_unique<Instruction>();
  pair->name = "pair";
  pair->opcode = Opcode::kConstant;
  pair->shape = Shape::Tuple({Shape::Scalar(ElementType::kF32), Shape(ElementType::kS32, {2})});
  Literal tuple(pair->shape);
  tuple.mutable_tuple_elements()[0].SetF32(0, 1.5f);
  tuple.mutable_tuple_elements()[1].SetInt(0, 7);
  tuple.mutable_tuple_elements()[1].SetInt(1, -9);
  pair->literal = std::move(tuple);
  module->entry->instructions.insert(module->entry->instructions.begin(), std::move(pair));
  return module;
}

TEST(BinaryModule, ReadsBackEqualWithPositions) {
  auto module = Parsed();
  ASSERT_TRUE(module);
  const std::string bytes = WriteBinaryModule(*module);
  EXPECT_TRUE(LooksLikeBinaryModule(bytes));
  EXPECT_FALSE(LooksLikeBinaryModule(kModule));
  auto back = ReadBinaryModule(bytes, "test");
  ASSERT_TRUE(back.ok()) << back.status().message();
  std::string difference;
  EXPECT_TRUE(Equal(*module, **back, &difference)) << difference;
  EXPECT_EQ(Print(*module), Print(**back));
  ASSERT_EQ((*back)->computations.size(), module->computations.size());
  for (size_t c = 0; c < module->computations.size(); ++c) {
    const Computation& original = *module->computations[c];
    const Computation& read = *(*back)->computations[c];
    ASSERT_EQ(read.instructions.size(), original.instructions.size());
    for (size_t k = 0; k < original.instructions.size(); ++k) {
      EXPECT_EQ(read.instructions[k]->line, original.instructions[k]->line) << original.instructions[k]->name;
      EXPECT_EQ(read.instructions[k]->column, original.instructions[k]->column) << original.instructions[k]->name;
    }
  }
}

TEST(BinaryModule, LeavesOutMetadataWhenAskedAndNothingElse) {
  auto module = Parsed();
  ASSERT_TRUE(module);
  const std::string full = WriteBinaryModule(*module);
  const std::string lean = WriteBinaryModule(*module, {.keep_metadata = false});
  EXPECT_LT(lean.size(), full.size());
  auto back = ReadBinaryModule(lean, "lean");
  ASSERT_TRUE(back.ok()) << back.status().message();
  const Instruction* a = (*back)->entry->Find("a");
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->FindAttribute("metadata"));
  // Dropping the one attribute from the original gives the module read back.
  Instruction* original_a = module->entry->Find("a");
  ASSERT_TRUE(original_a && original_a->FindAttribute("metadata"));
  std::erase_if(original_a->attributes, [](const Attribute& x) { return x.key == "metadata"; });
  std::string difference;
  EXPECT_TRUE(Equal(*module, **back, &difference)) << difference;
  EXPECT_TRUE((*back)->entry->Find("r")->FindAttribute("dimensions"));
}

TEST(BinaryModule, SplatsAreWrittenAsOneElement) {
  auto module = Parsed();
  ASSERT_TRUE(module);
  const size_t before = WriteBinaryModule(*module).size();
  // A 1 MiB splat adds a few bytes, not a megabyte.
  Instruction* zero = module->entry->Find("zero");
  ASSERT_TRUE(zero && zero->literal);
  Literal big(Shape(ElementType::kF32, {512, 512}));
  big.SetF32(0, 2.5f);
  big.BroadcastFirstElement();
  zero->literal = big;
  zero->shape = big.shape();
  const std::string bytes = WriteBinaryModule(*module);
  EXPECT_LT(bytes.size(), before + 64);
  auto back = ReadBinaryModule(bytes, "test");
  ASSERT_TRUE(back.ok()) << back.status().message();
  const Literal& read = *(*back)->entry->Find("zero")->literal;
  EXPECT_EQ(read, big);
}

TEST(BinaryModule, EveryTruncationIsAnErrorAtAByte) {
  auto module = Parsed();
  ASSERT_TRUE(module);
  const std::string bytes = WriteBinaryModule(*module);
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto back = ReadBinaryModule(std::string_view(bytes.data(), n), "cut");
    ASSERT_FALSE(back.ok()) << "read " << n << " of " << bytes.size() << " bytes";
    EXPECT_EQ(back.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(back.status().message().find("cut: byte "), std::string::npos) << back.status().message();
  }
  auto longer = ReadBinaryModule(bytes + "x", "long");
  ASSERT_FALSE(longer.ok());
  EXPECT_NE(longer.status().message().find("1 bytes after the module's end"), std::string::npos)
      << longer.status().message();
}

TEST(BinaryModule, CorruptBytesNeverCrash) {
  auto module = Parsed();
  ASSERT_TRUE(module);
  const std::string bytes = WriteBinaryModule(*module);
  int refused = 0;
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::string corrupt = bytes;
      corrupt[at] = static_cast<char>(corrupt[at] ^ flip);
      auto back = ReadBinaryModule(corrupt, "flip");
      if (!back.ok()) {
        ++refused;
        EXPECT_TRUE(back.status().code() == StatusCode::kInvalidArgument ||
                    back.status().code() == StatusCode::kResourceExhausted)
            << back.status().message();
      }
    }
  }
  EXPECT_GT(refused, 0);
}

TEST(BinaryModule, OtherVersionsAndOtherBytesAreRefused) {
  auto module = Parsed();
  ASSERT_TRUE(module);
  std::string bytes = WriteBinaryModule(*module);
  bytes[8] = static_cast<char>(bytes[8] + 1);
  auto other = ReadBinaryModule(bytes, "old");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("old: byte 8: error: binary module version"), std::string::npos)
      << other.status().message();
  auto text = ReadBinaryModule(kModule, "text");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("not a binary module"), std::string::npos) << text.status().message();
}

}  // namespace
}  // namespace anvil::hlo
