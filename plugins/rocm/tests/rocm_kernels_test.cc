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

#include "plugins/gpu/tests/test_programs.h"

namespace anvil::rocm {
namespace {

using gpu::testing::kEveryKernelKind;
using gpu::testing::ThreadPerJob;


HipCompiler TestCompiler() {
  return HipCompiler({ANVIL_TEST_HIP_CLANG, ANVIL_TEST_HIP_DEVICE_LIBS, ANVIL_TEST_HIP_DEVICE_LIBS_GFX11});
}

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
      auto program = CompileProgramKernels(kEveryKernelKind, target, compiler, ThreadPerJob(), batches);
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
  // f8E8M0FNU (powers of two only, no sign) has no kernels yet.
  const char* f8 = "HloModule m\nENTRY e {\n  a = f8e8m0fnu[4] parameter(0)\n  ROOT c = f32[4] convert(a)\n}\n";
  auto program = CompileProgramKernels(f8, "gfx90a", TestCompiler(), ThreadPerJob());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), hlo::StatusCode::kUnimplemented);
  EXPECT_NE(program.status().message().find("the ROCm plugin"), std::string::npos) << program.status().message();
  EXPECT_NE(program.status().message().find("f8e8m0fnu"), std::string::npos) << program.status().message();
}

TEST(RocmKernels, AMalformedProgramSaysWhere) {
  auto program =
      CompileProgramKernels("HloModule m\nENTRY e {\n  a = f32[4] parameter(0\n}\n", "gfx90a", TestCompiler(), ThreadPerJob());
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("canonical:"), std::string::npos) << program.status().message();
}

}  // namespace
}  // namespace anvil::rocm
