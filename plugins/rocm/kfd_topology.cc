#include "plugins/rocm/kfd_topology.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace anvil::rocm {
namespace {

// A node's properties: "name value" lines.
std::map<std::string, uint64_t> ReadProperties(const std::filesystem::path& file) {
  std::map<std::string, uint64_t> properties;
  std::ifstream in(file);
  std::string name;
  uint64_t value = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    if (fields >> name >> value) properties[name] = value;
  }
  return properties;
}

}  // namespace

std::string GfxTargetName(uint32_t version) {
  char name[32];
  std::snprintf(name, sizeof name, "gfx%u%x%x", version / 10000, (version / 100) % 100, version % 100);
  return name;
}

hlo::StatusOr<std::string> GfxTargetOf(const std::string& pci_bus_id) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) {
    return hlo::NotFound("the HIP runtime gives the PCI location \"" + pci_bus_id + "\", which is not domain:bus:device.function");
  }
  const uint64_t location = (bus << 8) | (device << 3) | function;
  const char* root_env = std::getenv("ANVIL_KFD_TOPOLOGY");
  const std::filesystem::path root = root_env && *root_env ? root_env : "/sys/class/kfd/kfd/topology/nodes";
  std::error_code error;
  for (const auto& node : std::filesystem::directory_iterator(root, error)) {
    std::map<std::string, uint64_t> p = ReadProperties(node.path() / "properties");
    auto version = p.find("gfx_target_version");
    if (version == p.end() || version->second == 0) continue;  // a CPU node
    // Partitioned GPUs (MI300) add the partition to location_id's high
    // bits; kernels before 5.12 write no domain.
    auto at = p.find("location_id");
    if (at == p.end() || (at->second & 0xffff) != location) continue;
    if (auto d = p.find("domain"); d != p.end() && d->second != domain) continue;
    return GfxTargetName(static_cast<uint32_t>(version->second));
  }
  if (error) {
    return hlo::NotFound("cannot read the kernel driver's topology (" + root.string() + ": " + error.message() +
                         "), which says the GPU's gfx target");
  }
  return hlo::NotFound("the kernel driver's topology (" + root.string() + ") has no GPU at PCI location " + pci_bus_id);
}

}  // namespace anvil::rocm
