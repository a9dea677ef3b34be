// What oneDNN chose for each convolution of an executable: the
// implementation, the layouts of its three operands and the size of its
// scratchpad. A compile asks oneDNN (each question walks its list of
// implementations; MobileNet's 155 convolutions take 45M instructions, most
// of a load from the compile cache) and writes the answers here; the
// serialised executable keeps them; a load reads them back and asks oneDNN
// nothing until a step first runs, when the primitive is made (its JIT code
// cannot be serialised on CPU engines) from the recorded layouts.
//
// Choices are keyed by the problem as posed (conv_problem.h), so a program's
// identical convolutions share one (on a cold compile, two built on
// different threads at once may each ask oneDNN; the same answer is
// recorded twice). A book written by another oneDNN release,
// for another instruction set or for another thread count (scratchpads
// depend on it) reads back empty: its choices may not hold there, and the
// convolutions are described again.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "hlo/status.h"

namespace anvil::cpu {

struct ConvProblem;

struct ConvLayout {
  // oneDNN's dnnl_memory_desc_t, as bytes (this header needs no oneDNN):
  // HLO's lhs, rhs and result as the primitive reads or writes them, and its
  // scratchpad.
  std::string ports[3];
  std::string scratchpad;
  std::string impl;  // oneDNN's name for the implementation
};

// A plan's kernels are built on several threads at once (plan_builder.cc):
// look-ups and records lock, and a look-up returns a copy, which a record of
// the same key cannot change under its reader.
class ConvLayoutBook {
 public:
  std::optional<ConvLayout> Find(const std::string& key) const;
  void Record(const std::string& key, ConvLayout layout);
  size_t size() const;

  std::string Write() const;
  // Reads what Write wrote; `what` names the bytes in errors, which give
  // the byte offset of what is wrong.
  static hlo::StatusOr<std::unique_ptr<ConvLayoutBook>> Read(std::string_view bytes, const std::string& what);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, ConvLayout, std::less<>> layouts_;
};

// The key of a problem: every field that decides oneDNN's answer.
std::string ConvProblemKey(const ConvProblem& problem);

}  // namespace anvil::cpu
