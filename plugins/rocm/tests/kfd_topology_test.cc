// A device's gfx target from the kernel driver's topology: the name from
// gfx_target_version, and the node found by PCI location in a test
// topology (tests/kfd_nodes: a CPU node, a gfx90a at 0000:c1:00.0, and
// partition 1 of a gfx942 at 0000:c2:00.0 as a kernel without domain lines
// writes it).
#include "plugins/rocm/kfd_topology.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace anvil::rocm {
namespace {

TEST(KfdTopology, NamesTargetsAsClangDoes) {
  EXPECT_EQ(GfxTargetName(90010), "gfx90a");
  EXPECT_EQ(GfxTargetName(90008), "gfx908");
  EXPECT_EQ(GfxTargetName(90402), "gfx942");
  EXPECT_EQ(GfxTargetName(100300), "gfx1030");
  EXPECT_EQ(GfxTargetName(110000), "gfx1100");
}

TEST(KfdTopology, FindsTheGpuNodeAtTheDevicesPciLocation) {
  setenv("ANVIL_KFD_TOPOLOGY", ANVIL_TEST_KFD_NODES, 1);
  auto found = GfxTargetOf("0000:c1:00.0");
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, "gfx90a");
  auto partition = GfxTargetOf("0000:c2:00.0");
  ASSERT_TRUE(partition.ok()) << partition.status().message();
  EXPECT_EQ(*partition, "gfx942");
  auto elsewhere = GfxTargetOf("0000:c3:00.0");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_NE(elsewhere.status().message().find("no GPU at PCI location 0000:c3:00.0"), std::string::npos)
      << elsewhere.status().message();
  auto garbled = GfxTargetOf("c1");
  EXPECT_FALSE(garbled.ok());
  setenv("ANVIL_KFD_TOPOLOGY", "/nonexistent/kfd", 1);
  auto missing = GfxTargetOf("0000:c1:00.0");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot read the kernel driver's topology"), std::string::npos)
      << missing.status().message();
  unsetenv("ANVIL_KFD_TOPOLOGY");
}

}  // namespace
}  // namespace anvil::rocm
