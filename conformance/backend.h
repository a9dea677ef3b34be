// Where the conformance runner runs programs: the reference evaluator in
// process, or a device plugin through libanvil's C ABI.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"
#include "hlo/status.h"

namespace anvil::conformance {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Runs the entry of `module` on `arguments`; one literal per result (a root
  // tuple is flattened).
  virtual hlo::StatusOr<std::vector<hlo::Literal>> Run(const hlo::Module& module,
                                                       const std::vector<hlo::Literal>& arguments) = 0;
};

// The hlo/ reference evaluator.
std::unique_ptr<Backend> MakeReferenceBackend();
// The plugin `name` (found on ANVIL_PLUGIN_PATH or beside libanvil.so), or
// the plugin file `name` when it holds a '/', device 0, through the public
// C ABI only.
hlo::StatusOr<std::unique_ptr<Backend>> MakePluginBackend(const std::string& name);

}  // namespace anvil::conformance
