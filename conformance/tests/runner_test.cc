// When the runner lets a result that differs from the evaluator's pass:
// only within the program's own sensitivity, the larger response to inputs
// moved by one ULP of the evaluator's and the backend's, the backend's
// counting at most 64 times the evaluator's, and only from a backend that
// gives the same answer to the same inputs. Uncapped, the backend's own
// response let a kernel that wrote a fifth of its output pass: an element
// never written holds whatever memory its buffer was given.
#include "conformance/runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "conformance/backend.h"

namespace anvil::conformance {
namespace {

// The evaluator's results, changed by `tamper` (which sees the arguments
// and how many runs came before).
class TamperedBackend final : public Backend {
 public:
  using Tamper = std::function<void(const std::vector<hlo::Literal>& args, int run, std::vector<hlo::Literal>&)>;
  explicit TamperedBackend(Tamper tamper) : tamper_(std::move(tamper)) {}
  std::string name() const override { return "tampered"; }
  hlo::StatusOr<std::vector<hlo::Literal>> Run(const hlo::Module& module,
                                               const std::vector<hlo::Literal>& arguments) override {
    auto results = reference_->Run(module, arguments);
    if (results.ok()) tamper_(arguments, runs_++, *results);
    return results;
  }
  int runs() const { return runs_; }

 private:
  Tamper tamper_;
  std::unique_ptr<Backend> reference_ = MakeReferenceBackend();
  int runs_ = 0;
};

TestResult RunProgram(const std::string& name, const std::string& text, Backend& backend) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("anvil_runner_test_" + name + ".hlo");
  std::ofstream(file) << text;
  std::vector<TestResult> results = RunConformance({file.string()}, backend, RunOptions{});
  std::filesystem::remove(file);
  EXPECT_EQ(results.size(), 1u);
  return results.empty() ? TestResult{} : results[0];
}

// sin(x * 1e9): a one-ULP move of x moves the result by up to 2.
constexpr char kChaotic[] =
    "HloModule chaotic\nENTRY e {\n  x = f32[64] parameter(0)\n  c = f32[] constant(1e9)\n"
    "  cb = f32[64] broadcast(c), dimensions={}\n  m = f32[64] multiply(x, cb)\n  ROOT s = f32[64] sine(m)\n}\n";
constexpr char kCalm[] =
    "HloModule calm\nENTRY e {\n  x = f32[8] parameter(0)\n  ROOT s = f32[8] add(x, x)\n}\n";

void AddToElement(std::vector<hlo::Literal>& results, int64_t k, float delta) {
  results[0].SetF32(k, static_cast<float>(results[0].GetDouble(k)) + delta);
}

TEST(RunConformance, ADifferenceWithinTheProgramsOwnSensitivityPasses) {
  TamperedBackend backend([](const std::vector<hlo::Literal>&, int, std::vector<hlo::Literal>& r) {
    AddToElement(r, 0, 0.05f);
  });
  const TestResult r = RunProgram("chaotic", kChaotic, backend);
  EXPECT_EQ(r.status, TestResult::Status::kPassed) << r.reason;
  EXPECT_NE(r.reason.find("sensitivity"), std::string::npos) << r.reason;
}

TEST(RunConformance, TheSameDifferenceInAWellConditionedProgramFails) {
  TamperedBackend backend([](const std::vector<hlo::Literal>&, int, std::vector<hlo::Literal>& r) {
    AddToElement(r, 0, 0.05f);
  });
  const TestResult r = RunProgram("calm", kCalm, backend);
  EXPECT_EQ(r.status, TestResult::Status::kFailed);
}

// An element never written: the same stale value for the same inputs, a
// wild one for the moved inputs. Counted in full as the backend's
// sensitivity, the wild value passed it.
TEST(RunConformance, AnElementThatOnlyMovesWithTheBackendsMemoryFails) {
  std::vector<hlo::Literal> first;
  TamperedBackend backend([&](const std::vector<hlo::Literal>& args, int, std::vector<hlo::Literal>& r) {
    if (first.empty()) first = args;
    r[0].SetF32(1, args == first ? 0.0f : 1e30f);
  });
  const TestResult r = RunProgram("stale", kCalm, backend);
  EXPECT_EQ(r.status, TestResult::Status::kFailed);
  EXPECT_NE(r.reason.find("on the evaluator and 1e+30 here"), std::string::npos) << r.reason;
}

TEST(RunConformance, ADifferentAnswerToTheSameInputsFails) {
  TamperedBackend backend([](const std::vector<hlo::Literal>&, int run, std::vector<hlo::Literal>& r) {
    r[0].SetF32(1, static_cast<float>(run) * 1e6f);
  });
  const TestResult r = RunProgram("racy", kChaotic, backend);
  EXPECT_EQ(r.status, TestResult::Status::kFailed);
  EXPECT_NE(r.reason.find("a second run on the same inputs gave other results"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace anvil::conformance
