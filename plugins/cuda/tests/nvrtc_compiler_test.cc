// NvrtcCompiler on the NVRTC CMake found at configure time (these tests are
// registered only when there is one), and a saxpy through NVRTC and the
// driver on every CUDA device the machine has.
#include "plugins/cuda/nvrtc_compiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "plugins/cuda/cuda_driver.h"

namespace anvil::cuda {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr char kSaxpy[] = R"(extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}
)";

class NvrtcCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = NvrtcCompiler::Get();
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    nvrtc_ = *loaded;
  }
  const NvrtcCompiler& Nvrtc() const { return *nvrtc_; }
  const NvrtcCompiler* nvrtc_ = nullptr;
};
using CudaEndToEndTest = NvrtcCompilerTest;

// A cubin is an ELF file for machine EM_CUDA (190).
void ExpectCubin(const std::vector<char>& cubin) {
  ASSERT_GE(cubin.size(), 20u);
  EXPECT_EQ(std::string(cubin.data(), 4), "\x7f" "ELF");
  EXPECT_EQ(static_cast<uint8_t>(cubin[18]) | static_cast<uint8_t>(cubin[19]) << 8, 190);
}

TEST_F(NvrtcCompilerTest, LoadsAndReportsItsVersionAndArchitectures) {
  const NvrtcCompiler& nvrtc = Nvrtc();
  EXPECT_FALSE(nvrtc.library_path().empty());
  EXPECT_GE(nvrtc.Version().major, 11);
  const std::vector<int>& archs = nvrtc.SupportedArchs();
  EXPECT_TRUE(std::is_sorted(archs.begin(), archs.end()));
  EXPECT_NE(std::find(archs.begin(), archs.end(), 80), archs.end());
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
  std::string listed;
  for (int a : archs) listed += " sm_" + std::to_string(a);
  std::printf("NVRTC %d.%d from %s:%s\n", nvrtc.Version().major, nvrtc.Version().minor, nvrtc.library_path().c_str(),
              listed.c_str());
}

TEST_F(NvrtcCompilerTest, CompilesSaxpyToACubinForSm80AndSm90) {
  for (int sm : {80, 90}) {
    auto cubin = Nvrtc().Compile(kSaxpy, "saxpy.cu", sm);
    ASSERT_TRUE(cubin.ok()) << cubin.status().message();
    ExpectCubin(*cubin);
  }
}

TEST_F(NvrtcCompilerTest, ASyntaxErrorCarriesNvrtcsLogWithTheLine) {
  auto cubin = Nvrtc().Compile("extern \"C\" __global__ void k(float* y) {\n  int i = threadIdx.x\n  y[i] = 1;\n}\n",
                               "bad_kernel.cu", 80);
  ASSERT_FALSE(cubin.ok());
  const std::string& message = cubin.status().message();
  EXPECT_EQ(cubin.status().code(), hlo::StatusCode::kInvalidArgument);
  EXPECT_TRUE(message.starts_with("bad_kernel.cu: NVRTC ")) << message;
  EXPECT_TRUE(Contains(message, " could not compile it for sm_80 (NVRTC_ERROR_COMPILATION):\n")) << message;
  // The missing ';' is found where line 3 begins.
  EXPECT_TRUE(Contains(message, "bad_kernel.cu(3): error: expected a \";\"")) << message;
}

TEST_F(NvrtcCompilerTest, AnUnsupportedArchitectureIsRefusedByName) {
  auto cubin = Nvrtc().Compile(kSaxpy, "saxpy.cu", 10);
  ASSERT_FALSE(cubin.ok());
  const std::string& message = cubin.status().message();
  EXPECT_EQ(cubin.status().code(), hlo::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(message, "saxpy.cu: NVRTC ")) << message;
  EXPECT_TRUE(Contains(message, " cannot compile for sm_10; it supports sm_")) << message;
  EXPECT_TRUE(Contains(message, "sm_80")) << message;
}

TEST_F(NvrtcCompilerTest, OptionsReachTheCompiler) {
  const char* source = "#ifndef ANVIL_SCALE\n#error ANVIL_SCALE is not defined\n#endif\n"
                       "extern \"C\" __global__ void scale(float* y) { y[threadIdx.x] *= ANVIL_SCALE; }\n";
  auto without = Nvrtc().Compile(source, "scale.cu", 80);
  ASSERT_FALSE(without.ok());
  const std::string& message = without.status().message();
  EXPECT_TRUE(Contains(message, "scale.cu(2): catastrophic error: #error directive: ANVIL_SCALE is not defined"))
      << message;
  auto with = Nvrtc().Compile(source, "scale.cu", 80, {"-DANVIL_SCALE=2.0f"});
  ASSERT_TRUE(with.ok()) << with.status().message();
  ExpectCubin(*with);
}

TEST_F(NvrtcCompilerTest, CompilesOnManyThreadsAtOnce) {
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < errors.size(); ++t)
    threads.emplace_back([this, &errors, t] {
      auto cubin = Nvrtc().Compile(kSaxpy, "saxpy" + std::to_string(t) + ".cu", t % 2 ? 90 : 80);
      errors[t] = cubin.ok() ? (cubin->size() > 4 ? "" : "empty cubin") : cubin.status().message();
    });
  for (auto& thread : threads) thread.join();
  for (const std::string& error : errors) EXPECT_EQ(error, "");
}

TEST_F(NvrtcCompilerTest, TheOverrideVariableChoosesTheLibrary) {
  setenv("ANVIL_NVRTC_LIBRARY", ANVIL_NVRTC_LIBRARY, 1);
  auto nvrtc = NvrtcCompiler::Load();
  ASSERT_TRUE(nvrtc.ok()) << nvrtc.status().message();
  // The same file, though perhaps by another name: the fixture's Get() may
  // have loaded it through a soname already, and the loader reuses that.
  EXPECT_TRUE(std::filesystem::equivalent((*nvrtc)->library_path(), ANVIL_NVRTC_LIBRARY)) << (*nvrtc)->library_path();
  // A pinned library that cannot load is an error, not a cue to look elsewhere.
  setenv("ANVIL_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so", 1);
  auto missing = NvrtcCompiler::Load();
  unsetenv("ANVIL_NVRTC_LIBRARY");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().message().starts_with(
      "ANVIL_NVRTC_LIBRARY names an NVRTC that cannot be loaded: /nonexistent/libnvrtc.so: "))
      << missing.status().message();
}

#define ASSERT_CU(call, ...)                                                        \
  do {                                                                            \
    hlo::Status s = driver.Check(driver.api().call(__VA_ARGS__), #call);          \
    ASSERT_TRUE(s.ok()) << device.name << ": " << s.message();                    \
  } while (0)

// The whole path a CUDA plugin takes, on each device: compile for its sm,
// load, upload on one stream, hand over to a second through an event,
// launch, copy and clear on the device, download. Where there is no device
// the driver must say why instead.
TEST_F(CudaEndToEndTest, SaxpyRunsOnEveryDeviceOrTheDriverSaysWhyThereIsNone) {
  const CudaDriver& driver = CudaDriver::Get();
  if (driver.DeviceList().devices.empty()) {
    EXPECT_FALSE(driver.DeviceList().reason.empty());
  }
  for (const CudaDeviceInfo& device : driver.DeviceList().devices) {
    auto cubin = Nvrtc().Compile(kSaxpy, "saxpy.cu", device.sm());
    ASSERT_TRUE(cubin.ok()) << device.name << ": " << cubin.status().message();
    CUcontext context = nullptr;
    ASSERT_CU(cuDevicePrimaryCtxRetain, &context, device.device);
    ASSERT_CU(cuCtxSetCurrent, context);
    CUmodule module = nullptr;
    CUfunction saxpy = nullptr;
    ASSERT_CU(cuModuleLoadData, &module, cubin->data());
    ASSERT_CU(cuModuleGetFunction, &saxpy, module, "saxpy");

    int n = 1 << 20;
    float a = 3.0f;
    std::vector<float> x(n), y(n), out(n, -1.0f), cleared(n, -1.0f);
    for (int i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i % 1000);  // a * x + y is exact, fused or not
      y[i] = 0.5f;
    }
    size_t bytes = n * sizeof(float);
    CUdeviceptr dx = 0, dy = 0, dz = 0;
    ASSERT_CU(cuMemAlloc, &dx, bytes);
    ASSERT_CU(cuMemAlloc, &dy, bytes);
    ASSERT_CU(cuMemAlloc, &dz, bytes);
    CUstream upload = nullptr, compute = nullptr;
    CUevent uploaded = nullptr;
    ASSERT_CU(cuStreamCreate, &upload, kCuStreamNonBlocking);
    ASSERT_CU(cuStreamCreate, &compute, kCuStreamNonBlocking);
    ASSERT_CU(cuEventCreate, &uploaded, kCuEventDisableTiming);
    ASSERT_CU(cuMemcpyHtoDAsync, dx, x.data(), bytes, upload);
    ASSERT_CU(cuMemcpyHtoDAsync, dy, y.data(), bytes, upload);
    ASSERT_CU(cuEventRecord, uploaded, upload);
    ASSERT_CU(cuStreamWaitEvent, compute, uploaded, 0);
    void* params[] = {&n, &a, &dx, &dy};
    ASSERT_CU(cuLaunchKernel, saxpy, 256, 1, 1, 256, 1, 1, 0, compute, params, nullptr);
    ASSERT_CU(cuMemcpyDtoDAsync, dz, dy, bytes, compute);
    ASSERT_CU(cuMemcpyDtoHAsync, out.data(), dz, bytes, compute);
    ASSERT_CU(cuMemsetD8Async, dz, 0, bytes, compute);
    ASSERT_CU(cuMemcpyDtoHAsync, cleared.data(), dz, bytes, compute);
    ASSERT_CU(cuStreamSynchronize, compute);
    ASSERT_CU(cuEventSynchronize, uploaded);
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(out[i], a * x[i] + y[i]) << device.name << " at " << i;
      ASSERT_EQ(cleared[i], 0.0f) << device.name << " at " << i;
    }
    ASSERT_CU(cuEventDestroy, uploaded);
    ASSERT_CU(cuStreamDestroy, upload);
    ASSERT_CU(cuStreamDestroy, compute);
    for (CUdeviceptr p : {dx, dy, dz}) ASSERT_CU(cuMemFree, p);
    ASSERT_CU(cuModuleUnload, module);
    ASSERT_CU(cuDevicePrimaryCtxRelease, device.device);
  }
}

}  // namespace
}  // namespace anvil::cuda
