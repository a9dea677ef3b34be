// The C++ dialects (CUDA, HIP) of the kernel generator, without a compiler:
// literal rewriting, and modules that keep no GLSL-only syntax. Compiling
// them is the CUDA and ROCm plugins' tests' business.
#include "plugins/gpu/cxx_dialect.h"

#include <gtest/gtest.h>

#include "hlo/hlo_parser.h"
#include "hlo/kernel_plan.h"
#include "plugins/gpu/kernel_emitter.h"
#include "plugins/gpu/tests/test_programs.h"

namespace anvil::gpu {
namespace {

TEST(WithoutDoubleSuffixes, DropsGlslsSuffixAndKeepsLiteralsDouble) {
  EXPECT_EQ(WithoutDoubleSuffixes("x = 1.5lf;"), "x = 1.5;");
  EXPECT_EQ(WithoutDoubleSuffixes("x = 2lf / 3lf;"), "x = 2.0 / 3.0;");  // still double division
  EXPECT_EQ(WithoutDoubleSuffixes("6.93147e-01lf, 1e+10lf)"), "6.93147e-01, 1e+10)");
  EXPECT_EQ(WithoutDoubleSuffixes(".5lf"), ".5");
  // Not literals: identifiers ending in digits, and suffixes of other kinds.
  EXPECT_EQ(WithoutDoubleSuffixes("x2lf + 0l + 3ul + self"), "x2lf + 0l + 3ul + self");
}

std::vector<KernelSource> Emit(const CxxDialect& dialect) {
  auto module = hlo::ParseHloModule(testing::kEveryKernelKind, {"test", 1});
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return {};
  auto plan = hlo::PlanKernels(**module);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  if (!plan.ok()) return {};
  std::vector<KernelSource> kernels;
  for (const auto& c : plan->computations) {
    for (const auto& step : c.steps) {
      if (step.kind != hlo::PlanStep::Kind::kKernel) continue;
      auto source = EmitKernel(step.kernel, dialect, {});
      EXPECT_TRUE(source.ok()) << source.status().message();
      if (source.ok()) kernels.push_back(std::move(*source));
    }
  }
  return kernels;
}

TEST(CxxDialect, ModulesHaveOneEntryAndNoGlslOnlySyntax) {
  for (auto language : {CxxDialect::Language::kCuda, CxxDialect::Language::kHip}) {
    const CxxDialect dialect(language, "the test plugin");
    const auto kernels = Emit(dialect);
    ASSERT_GE(kernels.size(), 6u);
    for (const auto& k : kernels) {
      for (const auto& pass : k.passes) {
        const std::string& s = pass.text;
        EXPECT_NE(s.find("extern \"C\" __global__ void __launch_bounds__(64) anvil_kernel(const uint64_t* table)"),
                  std::string::npos);
        for (const char* glsl : {"#version", "gl_", "barrier()", "layout(", "shared ", "in float", "out float", "lf)"}) {
          EXPECT_EQ(s.find(glsl), std::string::npos) << glsl << " in\n" << s;
        }
      }
    }
  }
}

TEST(CxxDialect, HipMarksTheModulesFunctionsForTheDevice) {
  const auto kernels = Emit(CxxDialect(CxxDialect::Language::kHip, "the test plugin"));
  ASSERT_FALSE(kernels.empty());
  const std::string& s = kernels[0].passes.at(0).text;
  EXPECT_NE(s.find("#pragma clang force_cuda_host_device begin"), std::string::npos);
  EXPECT_LT(s.find("#pragma clang force_cuda_host_device end"), s.find("__global__"));
}

TEST(CxxDialect, RefusesOnlyTypesItHasNoKernelsFor) {
  const CxxDialect dialect(CxxDialect::Language::kCuda, "the CUDA plugin");
  EXPECT_TRUE(dialect.CheckType(hlo::ElementType::kF64).ok());
  EXPECT_TRUE(dialect.CheckType(hlo::ElementType::kF16).ok());
  EXPECT_TRUE(dialect.CheckType(hlo::ElementType::kF8E4M3FN).ok());
  EXPECT_TRUE(dialect.CheckType(hlo::ElementType::kF4E2M1FN).ok());
  const hlo::Status f8 = dialect.CheckType(hlo::ElementType::kF8E8M0FNU);
  EXPECT_EQ(f8.code(), hlo::StatusCode::kUnimplemented);
  EXPECT_NE(f8.message().find("the CUDA plugin has no kernels for f8e8m0fnu"), std::string::npos) << f8.message();
}

}  // namespace
}  // namespace anvil::gpu
