// A program's kernels through the CUDA dialect and NVRTC, for the
// compile-only targets' compute capabilities (registered only where CMake
// found NVRTC).
#include "plugins/cuda/cuda_kernels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "plugins/gpu/tests/test_programs.h"

namespace anvil::cuda {
namespace {

using gpu::testing::kEveryKernelKind;
using gpu::testing::ThreadPerJob;


TEST(CudaKernels, EveryKindCompilesToCubinsForTheTargets) {
  auto nvrtc = NvrtcCompiler::Get();
  ASSERT_TRUE(nvrtc.ok()) << nvrtc.status().message();
  for (int sm : {80, 90}) {
    auto kernels = CompileProgramKernels(kEveryKernelKind, sm, **nvrtc, ThreadPerJob());
    ASSERT_TRUE(kernels.ok()) << "sm_" << sm << ": " << kernels.status().message();
    ASSERT_GE(kernels->size(), 7u);
    for (const CompiledKernel& k : *kernels) {
      ASSERT_GE(k.cubin.size(), 4u) << k.name;
      EXPECT_EQ(std::memcmp(k.cubin.data(), "\x7f" "ELF", 4), 0) << k.name;
      EXPECT_NE(k.source.find("anvil_kernel"), std::string::npos);
    }
  }
}

TEST(CudaKernels, AnInstructionWithoutAKernelIsRefusedByName) {
  auto nvrtc = NvrtcCompiler::Get();
  ASSERT_TRUE(nvrtc.ok()) << nvrtc.status().message();
  // f8E8M0FNU (powers of two only, no sign) has no kernels yet.
  const char* f8 = "HloModule m\nENTRY e {\n  a = f8e8m0fnu[4] parameter(0)\n  ROOT c = f32[4] convert(a)\n}\n";
  auto kernels = CompileProgramKernels(f8, 90, **nvrtc, ThreadPerJob());
  ASSERT_FALSE(kernels.ok());
  EXPECT_EQ(kernels.status().code(), hlo::StatusCode::kUnimplemented);
  EXPECT_NE(kernels.status().message().find("the CUDA plugin"), std::string::npos) << kernels.status().message();
  EXPECT_NE(kernels.status().message().find("f8e8m0fnu"), std::string::npos) << kernels.status().message();
}

TEST(CudaKernels, AMalformedProgramSaysWhere) {
  auto nvrtc = NvrtcCompiler::Get();
  ASSERT_TRUE(nvrtc.ok()) << nvrtc.status().message();
  auto kernels = CompileProgramKernels("HloModule m\nENTRY e {\n  a = f32[4] parameter(0\n}\n", 90, **nvrtc, ThreadPerJob());
  ASSERT_FALSE(kernels.ok());
  EXPECT_NE(kernels.status().message().find("canonical:"), std::string::npos) << kernels.status().message();
}

}  // namespace
}  // namespace anvil::cuda
