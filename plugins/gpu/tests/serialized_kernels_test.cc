// A GPU executable's serialised form read back (GpuExecutable::ReadSerialized):
// what was written comes back; every truncation, and counts the bytes cannot
// hold, are INVALID_ARGUMENT with the byte offset, allocating nothing first.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "plugins/gpu/gpu_executable.h"

namespace anvil::gpu {
namespace {

const ExecutableKind kKind{nullptr, nullptr, "the test plugin", std::string_view("ANVKTST1", 8)};

void Put(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
void PutBytes(std::string& out, const std::string& b) {
  Put(out, b.size());
  out += b;
}

// Two code objects; three passes, two in the second object.
std::string Serialized() {
  std::string out = "ANVKTST1";
  PutBytes(out, "HloModule m");
  Put(out, 2);
  PutBytes(out, "object zero");
  PutBytes(out, "object one");
  Put(out, 3);
  const char* entries[] = {"anvil_kernel", "anvil_kernel_1", "anvil_kernel_2"};
  for (int k = 0; k < 3; ++k) {
    PutBytes(out, std::string(31, 'a') + static_cast<char>('0' + k));
    Put(out, k == 0 ? 0 : 1);
    PutBytes(out, entries[k]);
  }
  return out;
}

TEST(SerializedKernels, ReadsBackCodeObjectsAndEachPassesEntry) {
  auto read = GpuExecutable::ReadSerialized(kKind, Serialized());
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->canonical_text, "HloModule m");
  ASSERT_EQ(read->kernels.images.size(), 2u);
  EXPECT_EQ(read->kernels.images[1], "object one");
  ASSERT_EQ(read->kernels.passes.size(), 3u);
  EXPECT_EQ(read->kernels.passes[2].image, 1u);
  EXPECT_EQ(read->kernels.passes[2].entry, "anvil_kernel_2");
}

TEST(SerializedKernels, EveryTruncationIsRefusedWithItsOffset) {
  const std::string bytes = Serialized();
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto read = GpuExecutable::ReadSerialized(kKind, bytes.substr(0, n));
    ASSERT_FALSE(read.ok()) << n;
    EXPECT_EQ(read.status().code(), hlo::StatusCode::kInvalidArgument);
    EXPECT_NE(read.status().message().find("the test plugin: byte "), std::string::npos) << read.status().message();
  }
  EXPECT_FALSE(GpuExecutable::ReadSerialized(kKind, bytes + "x").ok());
}

TEST(SerializedKernels, ACountTheBytesCannotHoldAllocatesNothing) {
  std::string bytes = "ANVKTST1";
  PutBytes(bytes, "HloModule m");
  Put(bytes, uint64_t{1} << 60);  // code objects
  auto read = GpuExecutable::ReadSerialized(kKind, bytes);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("truncated code object"), std::string::npos) << read.status().message();
}

}  // namespace
}  // namespace anvil::gpu
