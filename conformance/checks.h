// The check ops of StableHLO's test programs, lifted out of a module: the
// runner makes each checked value an output, runs the program, and compares
// on the host with the check's own rule.
#pragma once

#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"
#include "hlo/status.h"

namespace anvil::conformance {

struct Check {
  std::string kind;  // "expect_eq", "expect_almost_eq", "expect_close", "expect_eq_const", ...
  int actual = -1;    // output index of the checked value
  int expected = -1;  // output index of the expected value (a constant for *_const)
  double tolerance = 1e-4;         // expect_almost_eq*
  uint64_t max_ulp_difference = 3;  // expect_close
  uint64_t min_ulp_difference = 0;
};

// Rewrites `module` (calls inlined first) so its entry's root is a tuple of
// every value a check reads, and returns the checks. Programs with no checks
// are left alone (empty result). A check kind the runner cannot compare
// (expect_serialized_eq needs the interpreter's probe files) is UNIMPLEMENTED.
hlo::StatusOr<std::vector<Check>> LiftChecks(hlo::Module& module);

// Compares per the check's rule; OK, or an error that says which element
// differs and by how much.
hlo::Status Compare(const Check& check, const hlo::Literal& actual, const hlo::Literal& expected);

// Elementwise closeness used to compare a plugin's results with the
// evaluator's on programs without checks: exact for integers, ULP-bounded
// for floats (or an absolute floor for values near zero). `longest_sum` is
// the most terms any one value of the program adds up (a dot's contracted
// size, a reduction's count): the plugin and the evaluator sum in different
// orders, and the rounding error of an n-term sum typically grows as
// sqrt(n), so the absolute floor grows with its square root.
hlo::Status CompareResults(const hlo::Literal& actual, const hlo::Literal& expected, int64_t longest_sum = 1);
// The largest |a - b| over the float (or complex) elements of two literals of
// one shape (tuples element by element); infinity where one is NaN and the
// other not, 0 for integers.
double MaxAbsDifference(const hlo::Literal& a, const hlo::Literal& b);

}  // namespace anvil::conformance
