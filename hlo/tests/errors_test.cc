// Broken programs must fail with `FILE:LINE:COL: error: ...` exactly as
// listed in broken/EXPECTED.txt: never a crash, never a vaguer message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "hlo/program_text.h"
#include "hlo/verifier.h"

namespace anvil::hlo {
namespace {

std::string FirstError(const std::string& path) {
  auto modules = ParseProgramFile(path);
  if (!modules.ok()) return modules.status().message();
  for (const auto& module : *modules) {
    Status verified = Verify(*module);
    if (!verified.ok()) return verified.message();
  }
  return "";
}

TEST(BrokenPrograms, EachFailsWithItsMessage) {
  const std::string dir = ANVIL_BROKEN_PROGRAMS_DIR;
  std::ifstream in(dir + "/EXPECTED.txt");
  ASSERT_TRUE(in) << "missing " << dir << "/EXPECTED.txt";
  std::string line;
  int count = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    const std::string file = line.substr(0, tab);
    const std::string expected = line.substr(tab + 1);
    const std::string path = dir + "/" + file;
    EXPECT_EQ(FirstError(path), path + ":" + expected) << file;
    ++count;
  }
  EXPECT_GE(count, 60);
  // Every file in the folder is listed.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (ProgramFormatFromPath(entry.path().string())) ++files;
  }
  EXPECT_EQ(files, count);
}

// Truncating a valid program at every byte must give an error, never a crash.
TEST(BrokenPrograms, EveryPrefixOfAProgramFailsCleanly) {
  const std::string hlo =
      "HloModule m\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
      "ENTRY main {\n  p = f32[2,3]{1,0} parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[2] reduce(p, z), dimensions={1}, to_apply=add, metadata={op_name=\"r\"}\n}\n";
  const std::string mlir =
      "func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2xf32> {\n"
      "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = [1] :"
      " (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n";
  for (auto [text, format] : {std::pair{hlo, ProgramFormat::kHloText}, std::pair{mlir, ProgramFormat::kStableHloText}}) {
    ASSERT_TRUE(ParseProgramText(text, format).ok());
    for (size_t n = 0; n + 2 < text.size(); ++n) {
      auto modules = ParseProgramText(text.substr(0, n), format, SourceInfo{"cut", 1});
      if (modules.ok()) continue;  // a prefix can be a smaller valid program
      EXPECT_NE(modules.status().message().find("cut:"), std::string::npos) << modules.status().message();
    }
  }
}

// Deep nesting gets an error, not a stack overflow.
TEST(BrokenPrograms, DeepNestingIsRefused) {
  std::string tuple(5000, '(');
  auto hlo = ParseProgramText("HloModule m\nENTRY e {\n  p = " + tuple + " parameter(0)\n}\n",
                              ProgramFormat::kHloText, SourceInfo{"deep.hlo", 1});
  ASSERT_FALSE(hlo.ok());
  EXPECT_NE(hlo.status().message().find("nesting deeper than"), std::string::npos) << hlo.status().message();
  std::string arrays(5000, '[');
  auto mlir = ParseProgramText("func.func @f() {\n  %0 = stablehlo.constant {a = " + arrays + "} dense<1> : tensor<i32>\n}\n",
                               ProgramFormat::kStableHloText, SourceInfo{"deep.mlir", 1});
  ASSERT_FALSE(mlir.ok());
  EXPECT_NE(mlir.status().message().find("nesting deeper than"), std::string::npos) << mlir.status().message();
}

}  // namespace
}  // namespace anvil::hlo
