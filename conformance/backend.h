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
  // The compile-only targets this backend compiles for instead of running
  // (RunOptions::compile_only); none for a backend that runs.
  virtual std::vector<std::string> targets() const { return {}; }
  // Compiles `module` for every one of targets() and runs nothing: OK when
  // it compiles for all of them, else the first failure prefixed by its
  // target's name ("sm_90: ...").
  virtual hlo::Status CompileForTargets(const hlo::Module& module) {
    (void)module;
    return hlo::Unimplemented(name() + " has no compile-only targets");
  }
};

// The hlo/ reference evaluator.
std::unique_ptr<Backend> MakeReferenceBackend();
// The plugin `name` (found on ANVIL_PLUGIN_PATH or beside libanvil.so), or
// the plugin file `name` when it holds a '/', device 0, through the public
// C ABI only.
hlo::StatusOr<std::unique_ptr<Backend>> MakePluginBackend(const std::string& name);
// The plugin `name` (as above) for compiling only: no device is needed, and
// CompileForTargets compiles for each of the plugin's compile-only targets
// named in `targets`, or for all of them when `targets` is empty. Fails
// when the plugin has no compile-only targets or lacks one named.
hlo::StatusOr<std::unique_ptr<Backend>> MakeCompileOnlyBackend(const std::string& name,
                                                               const std::vector<std::string>& targets);

}  // namespace anvil::conformance
