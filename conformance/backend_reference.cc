#include <functional>

#include "conformance/backend.h"
#include "hlo/evaluator.h"

namespace anvil::conformance {
namespace {

class ReferenceBackend : public Backend {
 public:
  std::string name() const override { return "reference"; }
  hlo::StatusOr<std::vector<hlo::Literal>> Run(const hlo::Module& module,
                                               const std::vector<hlo::Literal>& arguments) override {
    std::vector<const hlo::Literal*> args;
    for (const auto& a : arguments) args.push_back(&a);
    ANVIL_ASSIGN_OR_RETURN(hlo::Literal result, hlo::EvaluateModule(module, args));
    // One literal per array leaf, as a plugin's results come.
    std::vector<hlo::Literal> results;
    std::function<void(hlo::Literal&)> leaves = [&](hlo::Literal& l) {
      if (l.shape().IsTuple()) {
        for (auto& e : l.mutable_tuple_elements()) leaves(e);
      } else {
        results.push_back(std::move(l));
      }
    };
    leaves(result);
    return results;
  }
};

}  // namespace

std::unique_ptr<Backend> MakeReferenceBackend() { return std::make_unique<ReferenceBackend>(); }

}  // namespace anvil::conformance
