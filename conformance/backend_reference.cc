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
    std::vector<hlo::Literal> results;
    if (result.shape().IsTuple()) {
      for (auto& e : result.mutable_tuple_elements()) results.push_back(std::move(e));
    } else {
      results.push_back(std::move(result));
    }
    return results;
  }
};

}  // namespace

std::unique_ptr<Backend> MakeReferenceBackend() { return std::make_unique<ReferenceBackend>(); }

}  // namespace anvil::conformance
