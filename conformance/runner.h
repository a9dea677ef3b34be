// The conformance runner: runs the corpora's programs on a backend and says,
// per test, passed, failed or skipped, and why.
//
// StableHLO programs that check (check.* ops, @check.* custom calls) run with
// their checked values as outputs and are compared on the host by each
// check's rule; every function nobody calls is one test. Programs without
// checks (XLA HLO files) run on the backend and on the reference evaluator
// with the same deterministic inputs, and the results are compared.
#pragma once

#include <string>
#include <vector>

#include "conformance/backend.h"

namespace anvil::conformance {

struct TestResult {
  std::string file;
  std::string function;  // the tested function; for an .hlo file of several modules, ENTRY#N (N from 1)
  std::string family;  // the op the file tests ("add", "reduce_window"), for the report
  enum class Status { kPassed, kFailed, kSkipped } status = Status::kPassed;
  std::string reason;
  double seconds = 0;
  // The element types of every array the program holds ("f32", "pred"...),
  // for the report's pass rates by type.
  std::vector<std::string> element_types;
};

const char* StatusName(TestResult::Status status);

struct RunOptions {
  // Called after each test (may be null).
  void (*progress)(const TestResult&) = nullptr;
  // The most work (element computations; multiply-adds for dot and
  // convolution) the reference evaluator is given to check one .hlo program.
  // A program over it still runs on the backend, and is reported skipped
  // with the estimate, so the list of known skips shows it.
  double reference_budget = 2e11;
  // Where results of programs without checks are compared from: the
  // reference evaluator when null, else this backend (another plugin).
  Backend* reference = nullptr;
  // Compile each test program for the backend's compile-only targets
  // (Backend::CompileForTargets) instead of running it: a test passes when
  // it compiles for all of them. Skips decided before running (programs for
  // several devices, or too big for one) stay skips.
  bool compile_only = false;
};

// Runs every .mlir and .hlo under each path (files or folders, walked in
// sorted order).
std::vector<TestResult> RunConformance(const std::vector<std::string>& paths, Backend& backend,
                                       const RunOptions& options = {});

// Compares the failures and skips of `results` with the list in
// `expectations_file` (PATH:FUNCTION<TAB>REASON per line, PATH relative to
// the corpus root, that is with everything up to `corpus/` removed; # starts
// a comment). Returns one line per mismatch: a failure or skip not listed,
// listed with another reason, or listed but passing now.
hlo::StatusOr<std::vector<std::string>> CheckExpectations(const std::vector<TestResult>& results,
                                                          const std::string& expectations_file);

// One JSON record per test: file, function, status, reason, time.
std::string ToJson(const std::vector<TestResult>& results);
// A Markdown table per op family: passed, failed, skipped, with reasons;
// before it, the pass rate of each corpus folder, over all its tests and
// over those whose arrays are all f32, s32, pred or u32.
std::string ToReport(const std::vector<TestResult>& results, const std::string& backend);

}  // namespace anvil::conformance
