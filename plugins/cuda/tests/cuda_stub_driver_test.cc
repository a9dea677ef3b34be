// CudaDriver on the CUDA toolkit's link stub (lib64/stubs/libcuda.so): a
// real driver's export table, so every symbol name CudaDriver resolves is
// checked against one, and the reason it gives when the stub is what the
// loader finds. Its own binary: the stub's soname is libcuda.so.1, and once
// loaded it would stand in for the real driver in the other tests.
#include <gtest/gtest.h>

#include "plugins/cuda/cuda_driver.h"

namespace anvil::cuda {
namespace {

TEST(CudaStubDriverTest, ResolvesEveryEntryPointAndSaysItIsTheStub) {
  CudaDriver driver(ANVIL_CUDA_STUB_LIBRARY);
  EXPECT_TRUE(driver.loaded()) << driver.DeviceList().reason;
  EXPECT_TRUE(driver.DeviceList().devices.empty());
  // The stub answers every call, cuGetErrorName too, with
  // CUDA_ERROR_STUB_LIBRARY: the words come from CudaDriver's own table.
  EXPECT_EQ(driver.DeviceList().reason, "cuInit failed: CUDA_ERROR_STUB_LIBRARY (CUDA driver is a stub library)");
}

}  // namespace
}  // namespace anvil::cuda
