// HipCompiler: clang++-15 compiling HIP C++ offline to code objects for the
// compile-only targets (registered only where CMake found clang, lld, HIP's
// headers and the device libraries).
#include "plugins/rocm/hip_compiler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace anvil::rocm {
namespace {

namespace fs = std::filesystem;

HipCompiler TestCompiler() {
  return HipCompiler({ANVIL_TEST_HIP_CLANG, ANVIL_TEST_HIP_DEVICE_LIBS, ANVIL_TEST_HIP_DEVICE_LIBS_GFX11});
}

const char* kTiny = R"(#include <hip/hip_runtime.h>
extern "C" __global__ void tiny(float* x) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i] = tanhf(x[i]) + erff(x[i]);  // ocml's
}
)";

template <typename T>
T Read(const std::vector<char>& elf, size_t offset) {
  T value;
  std::memcpy(&value, elf.data() + offset, sizeof(T));
  return value;
}

TEST(HipCompiler, ATinyKernelCompilesToAnAmdgpuElfForEachTarget) {
  const HipCompiler compiler = TestCompiler();
  // e_flags' machine bits: EF_AMDGPU_MACH_AMDGCN_GFX90A and _GFX1100.
  for (auto [target, mach] : {std::pair<const char*, uint32_t>{"gfx90a", 0x3f}, {"gfx1100", 0x41}}) {
    auto code = compiler.Compile(kTiny, "tiny.hip", target);
    ASSERT_TRUE(code.ok()) << target << ": " << code.status().message();
    ASSERT_GE(code->size(), 64u);
    EXPECT_EQ(std::memcmp(code->data(), "\x7f" "ELF", 4), 0) << target;
    EXPECT_EQ((*code)[4], 2) << target;                  // ELFCLASS64
    EXPECT_EQ(Read<uint16_t>(*code, 18), 224) << target;  // e_machine: EM_AMDGPU
    EXPECT_EQ(Read<uint32_t>(*code, 48) & 0xff, mach) << target;
    EXPECT_NE(std::string(code->begin(), code->end()).find("tiny"), std::string::npos) << target;
  }
}

TEST(HipCompiler, ASyntaxErrorGivesClangsFileLineAndColumn) {
  auto code = TestCompiler().Compile("#include <hip/hip_runtime.h>\n\nint x = ;\n", "broken.hip", "gfx90a");
  ASSERT_FALSE(code.ok());
  EXPECT_EQ(code.status().code(), hlo::StatusCode::kInvalidArgument);
  const std::string& m = code.status().message();
  EXPECT_NE(m.find("broken.hip:3:9: error: expected expression"), std::string::npos) << m;
  EXPECT_EQ(m.find("anvil-hip-"), std::string::npos) << m;  // the private folder is not named
}

TEST(HipCompiler, ThePrivateFolderIsRemovedAfterwards) {
  fs::path tmp = fs::temp_directory_path() / ("anvil-hip-test-" + std::to_string(getpid()));
  fs::create_directories(tmp);
  setenv("TMPDIR", tmp.c_str(), 1);
  EXPECT_TRUE(TestCompiler().Compile(kTiny, "tiny.hip", "gfx90a").ok());
  EXPECT_FALSE(TestCompiler().Compile("x", "broken.hip", "gfx90a").ok());
  unsetenv("TMPDIR");
  EXPECT_TRUE(fs::is_empty(tmp));
  fs::remove_all(tmp);
}

TEST(HipCompiler, AMissingClangIsSaidPlainly) {
  unsetenv("ANVIL_HIP_CLANG");
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  setenv("PATH", "/nonexistent", 1);
  auto found = HipCompiler::Find("/nonexistent/clang++");
  setenv("PATH", path.c_str(), 1);
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), hlo::StatusCode::kNotFound);
  EXPECT_TRUE(found.status().message().starts_with("clang++-15 not found: install clang-15")) << found.status().message();

  setenv("ANVIL_HIP_CLANG", "/nonexistent/clang++", 1);
  found = HipCompiler::Find();
  unsetenv("ANVIL_HIP_CLANG");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().message(), "ANVIL_HIP_CLANG=/nonexistent/clang++ is not an executable file");
}

TEST(HipCompiler, MissingDeviceLibrariesAreSaidPlainly) {
  setenv("ANVIL_HIP_DEVICE_LIBS", "/nonexistent", 1);
  auto found = HipCompiler::Find();
  unsetenv("ANVIL_HIP_DEVICE_LIBS");
  ASSERT_FALSE(found.ok());
  EXPECT_TRUE(found.status().message().starts_with("ROCm's device libraries not found (no ocml.bc in /nonexistent)"))
      << found.status().message();

  HipCompiler without_gfx11({ANVIL_TEST_HIP_CLANG, ANVIL_TEST_HIP_DEVICE_LIBS, ""});
  EXPECT_TRUE(without_gfx11.DeviceLibs("gfx90a").ok());
  auto libs = without_gfx11.DeviceLibs("gfx1100");
  ASSERT_FALSE(libs.ok());
  EXPECT_NE(libs.status().message().find("have no oclc_isa_version_1100.bc for gfx1100"), std::string::npos)
      << libs.status().message();
}

TEST(HipCompiler, FindsTheGfx11StandInFromTheEnvironment) {
  setenv("ANVIL_HIP_DEVICE_LIBS_GFX11", ANVIL_TEST_HIP_DEVICE_LIBS_GFX11, 1);
  auto found = HipCompiler::Find();
  unsetenv("ANVIL_HIP_DEVICE_LIBS_GFX11");
  ASSERT_TRUE(found.ok()) << found.status().message();
  auto libs = (*found)->DeviceLibs("gfx1100");
  ASSERT_TRUE(libs.ok()) << libs.status().message();
  EXPECT_EQ(*libs, ANVIL_TEST_HIP_DEVICE_LIBS_GFX11);
}

}  // namespace
}  // namespace anvil::rocm
