// A program's kernels through the HIP dialect and clang, for the
// compile-only targets, batched into shared translation units and not.
#include "plugins/rocm/rocm_kernels.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace anvil::rocm {
namespace {

// Core's host executor stand-in: each job on a thread of its own.
anvil_plugin_host_executor Threads() {
  anvil_plugin_host_executor host{};
  host.struct_size = ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_host_executor, enqueue);
  host.enqueue = [](void*, void (*fn)(void*), void* arg) { std::thread(fn, arg).detach(); };
  return host;
}

HipCompiler TestCompiler() {
  return HipCompiler({ANVIL_TEST_HIP_CLANG, ANVIL_TEST_HIP_DEVICE_LIBS, ANVIL_TEST_HIP_DEVICE_LIBS_GFX11});
}

// A kernel of each kind, on several element types (as the CUDA plugin's test).
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

void ExpectAmdgpuElf(const std::vector<char>& code, const std::string& what) {
  ASSERT_GE(code.size(), 64u) << what;
  EXPECT_EQ(std::memcmp(code.data(), "\x7f" "ELF", 4), 0) << what;
  uint16_t machine;
  std::memcpy(&machine, code.data() + 18, 2);
  EXPECT_EQ(machine, 224) << what;  // EM_AMDGPU
}

TEST(RocmKernels, BatchingSharesThePreludeAndGivesEachEntryItsOwnName) {
  const std::string a = "#include <hip/hip_runtime.h>\n#define M(x) \\\n  (x)\nint f();\nstruct S {\n  int g;\n};\n"
                        "int a();\nextern \"C\" __global__ void __launch_bounds__(256) anvil_kernel(const uint64_t* "
                        "table) {}\n";
  const std::string b = "#include <hip/hip_runtime.h>\n#define M(x) \\\n  (x)\nint f();\nstruct S {\n  int g;\n};\n"
                        "int b();\nextern \"C\" __global__ void __launch_bounds__(256) anvil_kernel(const uint64_t* "
                        "table) {}\n";
  auto batch = BatchModules({&a, &b}, 3);
  ASSERT_TRUE(batch.ok()) << batch.status().message();
  EXPECT_EQ(*batch, "#include <hip/hip_runtime.h>\n#define M(x) \\\n  (x)\nint f();\nstruct S {\n  int g;\n};\n"
                    "namespace anvil_k3 {\nint a();\nextern \"C\" __global__ void __launch_bounds__(256) "
                    "anvil_kernel_3(const uint64_t* table) {}\n}\n"
                    "namespace anvil_k4 {\nint b();\nextern \"C\" __global__ void __launch_bounds__(256) "
                    "anvil_kernel_4(const uint64_t* table) {}\n}\n");
  // Identical modules still keep their entries apart.
  batch = BatchModules({&a, &a}, 0);
  ASSERT_TRUE(batch.ok());
  EXPECT_NE(batch->find("anvil_kernel_1(const"), std::string::npos) << *batch;
  const std::string no_entry = "#include <hip/hip_runtime.h>\n";
  EXPECT_FALSE(BatchModules({&no_entry}, 0).ok());
}

TEST(RocmKernels, EveryKindCompilesToCodeObjectsForTheTargetsBatchedOrNot) {
  const HipCompiler compiler = TestCompiler();
  for (const char* target : {"gfx90a", "gfx1100"}) {
    // 0: the default (one translation unit here); 2: two at once; 1000: a
    // unit per kernel (the slow way, on one target).
    for (size_t batches : {0, 2, 1000}) {
      if (batches == 1000 && std::string(target) != "gfx90a") continue;
      auto start = std::chrono::steady_clock::now();
      auto program = CompileProgramKernels(kProgram, target, compiler, Threads(), batches);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ASSERT_TRUE(program.ok()) << target << ": " << program.status().message();
      ASSERT_GE(program->kernels.size(), 7u);
      std::printf("%s, batches=%zu: %zu kernels in %zu code objects, %.2f s\n", target, batches,
                  program->kernels.size(), program->code_objects.size(), seconds);
      for (size_t k = 0; k < program->code_objects.size(); ++k)
        ExpectAmdgpuElf(program->code_objects[k], std::string(target) + " code object " + std::to_string(k));
      for (const CompiledKernel& kernel : program->kernels) {
        ASSERT_LT(kernel.code_object, program->code_objects.size());
        const auto& code = program->code_objects[kernel.code_object];
        // The entry is in its code object's symbol table.
        EXPECT_NE(std::string(code.begin(), code.end()).find(kernel.entry + '\0'), std::string::npos)
            << kernel.name << " " << kernel.entry;
        EXPECT_NE(kernel.source.find("anvil_kernel"), std::string::npos);
      }
    }
  }
}

TEST(RocmKernels, AnInstructionWithoutAKernelIsRefusedByName) {
  const char* f8 = "HloModule m\nENTRY e {\n  a = f8e4m3fn[4] parameter(0)\n  ROOT n = f8e4m3fn[4] negate(a)\n}\n";
  auto program = CompileProgramKernels(f8, "gfx90a", TestCompiler(), Threads());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), hlo::StatusCode::kUnimplemented);
  EXPECT_NE(program.status().message().find("the ROCm plugin"), std::string::npos) << program.status().message();
  EXPECT_NE(program.status().message().find("f8e4m3fn"), std::string::npos) << program.status().message();
}

TEST(RocmKernels, AMalformedProgramSaysWhere) {
  auto program =
      CompileProgramKernels("HloModule m\nENTRY e {\n  a = f32[4] parameter(0\n}\n", "gfx90a", TestCompiler(), Threads());
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("canonical:"), std::string::npos) << program.status().message();
}

}  // namespace
}  // namespace anvil::rocm
