// A GPU's gfx target ("gfx90a"), the ISA its code objects must be compiled
// for, from the Linux kernel driver's topology: one folder per node under
// /sys/class/kfd/kfd/topology/nodes, whose `properties` file has lines
// "name value", among them the node's PCI location (domain, location_id =
// bus << 8 | device << 3 | function) and gfx_target_version (major * 10000
// + minor * 100 + stepping: 90010 is gfx90a). ROCm's own runtime reads the
// same; HIP's attributes do not tell gfx908 from gfx90a, and its properties
// struct changes layout between releases.
#pragma once

#include <cstdint>
#include <string>

#include "hlo/status.h"

namespace anvil::rocm {

// The target of the GPU at `pci_bus_id` ("0000:03:00.0", as
// hipDeviceGetPCIBusId writes it), or NOT_FOUND saying why. The nodes
// folder is ANVIL_KFD_TOPOLOGY when set (tests), else the kernel's.
hlo::StatusOr<std::string> GfxTargetOf(const std::string& pci_bus_id);

// "gfx" then the major version in decimal, the minor and the stepping in
// hex: 90010 -> gfx90a, 110000 -> gfx1100, 90008 -> gfx908.
std::string GfxTargetName(uint32_t gfx_target_version);

}  // namespace anvil::rocm
