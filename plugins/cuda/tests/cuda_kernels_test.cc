// A program's kernels through the CUDA dialect and NVRTC, for the
// compile-only targets' compute capabilities (registered only where CMake
// found NVRTC).
#include "plugins/cuda/cuda_kernels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace anvil::cuda {
namespace {

// Core's host executor stand-in: each job on a thread of its own.
anvil_plugin_host_executor Threads() {
  anvil_plugin_host_executor host{};
  host.struct_size = ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_host_executor, enqueue);
  host.enqueue = [](void*, void (*fn)(void*), void* arg) { std::thread(fn, arg).detach(); };
  return host;
}

// A kernel of each kind, on several element types.
const char* kProgram = R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
less { a = s32[] parameter(0)  b = s32[] parameter(1)  c = f16[] parameter(2)  d = f16[] parameter(3)
       ROOT l = pred[] compare(a, b), direction=LT }
ENTRY e {
  x = f32[4,6] parameter(0)
  y = f32[6,3] parameter(1)
  k = s32[8] parameter(2)
  h = f16[8] parameter(3)
  img = f32[1,6,6,2] parameter(4)
  w = f32[3,3,2,4] parameter(5)
  c = c64[3] parameter(6)
  q = f64[5] parameter(7)
  t = f32[6,4] transpose(x), dimensions={1,0}
  d = f32[4,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  r = f32[4] reduce(x, zero), dimensions={1}, to_apply=add
  conv = f32[1,4,4,4] convolution(img, w), window={size=3x3}, dim_labels=b01f_01io->b01f
  sorted = (s32[8], f16[8]) sort(k, h), dimensions={0}, to_apply=less
  cs = c64[3] sqrt(c)
  lq = f64[5] log-plus-one(q)
  ROOT out = (f32[6,4], f32[4,3], f32[4], f32[1,4,4,4], (s32[8], f16[8]), c64[3], f64[5]) tuple(t, d, r, conv, sorted, cs, lq)
})";

TEST(CudaKernels, EveryKindCompilesToCubinsForTheTargets) {
  auto nvrtc = NvrtcCompiler::Get();
  ASSERT_TRUE(nvrtc.ok()) << nvrtc.status().message();
  for (int sm : {80, 90}) {
    auto kernels = CompileProgramKernels(kProgram, sm, **nvrtc, Threads());
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
  const char* f8 = "HloModule m\nENTRY e {\n  a = f8e4m3fn[4] parameter(0)\n  ROOT n = f8e4m3fn[4] negate(a)\n}\n";
  auto kernels = CompileProgramKernels(f8, 90, **nvrtc, Threads());
  ASSERT_FALSE(kernels.ok());
  EXPECT_EQ(kernels.status().code(), hlo::StatusCode::kUnimplemented);
  EXPECT_NE(kernels.status().message().find("the CUDA plugin"), std::string::npos) << kernels.status().message();
  EXPECT_NE(kernels.status().message().find("f8e4m3fn"), std::string::npos) << kernels.status().message();
}

TEST(CudaKernels, AMalformedProgramSaysWhere) {
  auto nvrtc = NvrtcCompiler::Get();
  ASSERT_TRUE(nvrtc.ok()) << nvrtc.status().message();
  auto kernels = CompileProgramKernels("HloModule m\nENTRY e {\n  a = f32[4] parameter(0\n}\n", 90, **nvrtc, Threads());
  ASSERT_FALSE(kernels.ok());
  EXPECT_NE(kernels.status().message().find("canonical:"), std::string::npos) << kernels.status().message();
}

}  // namespace
}  // namespace anvil::cuda
