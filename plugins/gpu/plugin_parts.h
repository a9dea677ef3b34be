// Parts of a GPU plugin's entry file that do not depend on its driver: the
// compile-only targets it lists (plugin ABI minor 4) and the answer for a
// device it does not have, so that every GPU plugin says them the same way.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "hlo/status.h"
#include "plugins/common/plugin_error.h"

namespace anvil::gpu {

// The targets a plugin compiles for with no device present, and why any it
// would list are missing (no compiler, no device library...).
class CompileTargets {
 public:
  explicit CompileTargets(std::string plugin) : plugin_(std::move(plugin)) {}

  void Add(std::string name) { names_.push_back(std::move(name)); }
  void Missing(const std::string& why) { why_missing_ += (why_missing_.empty() ? "" : "; ") + why; }

  size_t size() const { return names_.size(); }
  const std::string& name(size_t target) const { return names_[target]; }
  const std::string& why_missing() const { return why_missing_; }
  // OK for a listed target; INVALID_ARGUMENT saying how many there are and
  // why not more.
  hlo::Status Check(size_t target) const {
    if (target < names_.size()) return hlo::OkStatus();
    return hlo::InvalidArgument(plugin_ + " has " + std::to_string(names_.size()) + " compile-only targets, not target " +
                                std::to_string(target) + (why_missing_.empty() ? "" : " (" + why_missing_ + ")"));
  }

 private:
  std::string plugin_;  // "the CUDA plugin"
  std::vector<std::string> names_;
  std::string why_missing_;
};

// The plugin ABI's target_count and target_name, answered from a plugin's
// targets.
inline anvil_plugin_error* TargetCount(const CompileTargets& targets, size_t* out) {
  *out = targets.size();
  return nullptr;
}

inline anvil_plugin_error* TargetName(const CompileTargets& targets, size_t target, const char** out) {
  if (auto* e = anvil::plugin::FromStatus(targets.Check(target))) return e;
  *out = targets.name(target).c_str();
  return nullptr;
}

// INVALID_ARGUMENT for a device index past `count`, with why there are no
// (more) devices when the driver said.
inline hlo::Status NoSuchDevice(const std::string& plugin, size_t count, size_t device, const std::string& reason) {
  return hlo::InvalidArgument(plugin + " has " + std::to_string(count) + " devices, not device " +
                              std::to_string(device) + (reason.empty() ? "" : " (" + reason + ")"));
}

}  // namespace anvil::gpu
