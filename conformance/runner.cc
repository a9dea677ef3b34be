#include "conformance/runner.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "conformance/checks.h"
#include "hlo/attributes.h"
#include "hlo/program_text.h"
#include "hlo/verifier.h"

namespace anvil::conformance {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> CollectFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      std::vector<std::string> found;
      for (const auto& e : std::filesystem::recursive_directory_iterator(path, error)) {
        if (e.is_regular_file() && hlo::ProgramFormatFromPath(e.path().string())) found.push_back(e.path().string());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(path);
    }
  }
  return files;
}

// "add_any_float64_2_float64_2.mlir" -> "add_any"; "reduce_window.mlir" -> "reduce_window".
std::string FamilyOf(const std::string& file) {
  std::string stem = std::filesystem::path(file).stem().string();
  static const std::set<std::string> kTypeWords = {"bool", "bfloat16", "float16", "float32", "float64", "int8",
                                                   "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                                   "uint64", "complex64", "complex128", "float8", "in", "out",
                                                   "dtypes", "shape", "lhs", "rhs"};
  std::string family;
  size_t start = 0;
  while (start <= stem.size()) {
    size_t end = stem.find('_', start);
    std::string word = stem.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (word.empty() || std::isdigit(static_cast<unsigned char>(word[0])) || kTypeWords.count(word) ||
        word.rfind("float8", 0) == 0) {
      break;
    }
    family += (family.empty() ? "" : "_") + word;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return family.empty() ? stem : family;
}

// Deterministic values for a parameter or an elided constant.
hlo::Literal DeterministicLiteral(const hlo::Shape& shape, uint64_t seed) {
  hlo::Literal l(shape);
  if (!shape.IsArray()) return l;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&]() {
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  const hlo::ElementType t = shape.element_type();
  for (int64_t k = 0; k < l.element_count(); ++k) {
    uint64_t r = next();
    if (hlo::IsFloat(t)) {
      l.SetDouble(k, static_cast<double>(r >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    } else if (hlo::IsComplex(t)) {
      l.SetComplex(k, static_cast<double>(r >> 40) / 16777216.0 - 0.5, static_cast<double>(r & 0xFFFFFF) / 16777216.0 - 0.5);
    } else if (hlo::IsPred(t)) {
      l.SetUint(k, r & 1);
    } else {
      l.SetInt(k, static_cast<int64_t>(r % 16) - (hlo::IsSignedInt(t) ? 8 : 0));
    }
  }
  return l;
}

uint64_t Hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h;
}

void FillElidedConstants(hlo::Module& module) {
  for (auto& c : module.computations) {
    for (auto& i : c->instructions) {
      if (i->opcode == hlo::Opcode::kConstant && i->literal && i->literal->elided()) {
        i->literal = DeterministicLiteral(i->shape, Hash(i->name));
      }
    }
  }
}

// Functions that are tests: computations nothing calls.
std::vector<std::string> TestFunctions(const hlo::Module& module) {
  std::set<const hlo::Computation*> called;
  for (const auto& c : module.computations) {
    for (const auto& i : c->instructions) {
      for (const hlo::Computation* callee : i->called_computations) called.insert(callee);
    }
  }
  std::vector<std::string> names;
  for (const auto& c : module.computations) {
    if (!called.count(c.get())) names.push_back(c->name);
  }
  return names;
}

bool UsesParallelInterpreter(const hlo::Module& module) {
  for (const auto& c : module.computations) {
    for (const auto& i : c->instructions) {
      if (i->opcode == hlo::Opcode::kCustomCall &&
          hlo::StringAttribute(*i, "custom_call_target") == "interpreter.run_parallel") {
        return true;
      }
    }
  }
  return false;
}

std::vector<hlo::Literal> ArgumentsFor(const hlo::Computation& entry, const std::string& file) {
  std::vector<hlo::Literal> args;
  for (const hlo::Instruction* p : entry.parameters) {
    args.push_back(DeterministicLiteral(p->shape, Hash(file) + static_cast<uint64_t>(p->parameter_number)));
  }
  return args;
}

// One test: a module whose entry is set; the outcome and why.
TestResult RunOne(std::unique_ptr<hlo::Module> module, const std::string& file, Backend& backend, bool is_stablehlo) {
  TestResult r;
  r.file = file;
  r.function = module->entry->name;
  r.family = FamilyOf(file);
  auto fail = [&](TestResult::Status s, std::string why) {
    r.status = s;
    r.reason = std::move(why);
    return r;
  };
  if (UsesParallelInterpreter(*module)) {
    return fail(TestResult::Status::kSkipped, "needs several devices at once (interpreter.run_parallel)");
  }
  FillElidedConstants(*module);
  auto checks = LiftChecks(*module);
  if (!checks.ok()) return fail(TestResult::Status::kFailed, checks.status().message());
  hlo::Status verified = hlo::Verify(*module);
  if (!verified.ok()) return fail(TestResult::Status::kFailed, "rewritten program: " + verified.message());
  auto args = ArgumentsFor(*module->entry, file);
  auto results = backend.Run(*module, args);
  if (!results.ok()) return fail(TestResult::Status::kFailed, results.status().message());
  if (!checks->empty()) {
    for (const Check& check : *checks) {
      hlo::Status s = Compare(check, (*results)[check.actual], (*results)[check.expected]);
      if (!s.ok()) return fail(TestResult::Status::kFailed, s.message());
    }
    return r;
  }
  if (is_stablehlo) return r;  // ran to completion; nothing to compare
  // No checks: compare with the reference evaluator.
  if (backend.name() == "reference") return r;
  auto reference = MakeReferenceBackend()->Run(*module, args);
  if (!reference.ok()) return fail(TestResult::Status::kFailed, "reference evaluator: " + reference.status().message());
  if (reference->size() != results->size()) return fail(TestResult::Status::kFailed, "result counts differ");
  for (size_t k = 0; k < results->size(); ++k) {
    hlo::Status s = CompareResults((*results)[k], (*reference)[k]);
    if (!s.ok()) return fail(TestResult::Status::kFailed, "result " + std::to_string(k) + ": " + s.message());
  }
  return r;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

const char* StatusName(TestResult::Status status) {
  switch (status) {
    case TestResult::Status::kPassed: return "passed";
    case TestResult::Status::kFailed: return "failed";
    case TestResult::Status::kSkipped: return "skipped";
  }
  return "?";
}

std::vector<TestResult> RunConformance(const std::vector<std::string>& paths, Backend& backend,
                                       void (*progress)(const TestResult&)) {
  std::vector<TestResult> results;
  for (const std::string& file : CollectFiles(paths)) {
    auto format = hlo::ProgramFormatFromPath(file);
    auto start = Clock::now();
    auto parsed = hlo::ParseProgramFile(file);
    if (!parsed.ok()) {
      TestResult r;
      r.file = file;
      r.family = FamilyOf(file);
      r.status = TestResult::Status::kFailed;
      r.reason = parsed.status().message();
      results.push_back(r);
      if (progress) progress(r);
      continue;
    }
    const bool is_stablehlo = format == hlo::ProgramFormat::kStableHloText;
    for (size_t m = 0; m < parsed->size(); ++m) {
      std::vector<std::string> tests =
          is_stablehlo ? TestFunctions(*(*parsed)[m]) : std::vector<std::string>{(*parsed)[m]->entry->name};
      for (const std::string& function : tests) {
        // Each test gets a fresh copy of the module: lifting rewrites it.
        auto fresh = hlo::ParseProgramFile(file);
        std::unique_ptr<hlo::Module> module = std::move((*fresh)[m]);
        module->entry = module->FindComputation(function);
        auto test_start = Clock::now();
        TestResult r = RunOne(std::move(module), file, backend, is_stablehlo);
        r.seconds = std::chrono::duration<double>(Clock::now() - test_start).count();
        results.push_back(r);
        if (progress) progress(r);
      }
    }
    (void)start;
  }
  return results;
}

std::string ToJson(const std::vector<TestResult>& results) {
  std::string out = "[\n";
  for (size_t k = 0; k < results.size(); ++k) {
    const TestResult& r = results[k];
    char time[32];
    snprintf(time, sizeof(time), "%.6f", r.seconds);
    out += "  {\"file\": " + JsonString(r.file) + ", \"function\": " + JsonString(r.function) +
           ", \"status\": " + JsonString(StatusName(r.status)) + ", \"reason\": " + JsonString(r.reason) +
           ", \"time\": " + time + "}" + (k + 1 < results.size() ? ",\n" : "\n");
  }
  return out + "]\n";
}

std::string ToReport(const std::vector<TestResult>& results, const std::string& backend) {
  struct Counts {
    int passed = 0, failed = 0, skipped = 0;
    std::map<std::string, int> reasons;
  };
  std::map<std::string, Counts> families;
  Counts total;
  for (const TestResult& r : results) {
    Counts& c = families[r.family];
    for (Counts* x : {&c, &total}) {
      if (r.status == TestResult::Status::kPassed) ++x->passed;
      if (r.status == TestResult::Status::kFailed) ++x->failed;
      if (r.status == TestResult::Status::kSkipped) ++x->skipped;
    }
    if (r.status != TestResult::Status::kPassed) {
      // Reasons grouped without the file-specific prefix.
      std::string reason = r.reason;
      size_t error = reason.find("error: ");
      if (error != std::string::npos) reason = reason.substr(error + 7);
      if (reason.size() > 160) reason = reason.substr(0, 157) + "...";
      ++c.reasons[reason];
    }
  }
  std::ostringstream out;
  out << "# Conformance on `" << backend << "`\n\n";
  out << total.passed << " passed, " << total.failed << " failed, " << total.skipped << " skipped\n\n";
  out << "| op family | passed | failed | skipped | reasons |\n| --- | ---: | ---: | ---: | --- |\n";
  for (const auto& [family, c] : families) {
    std::string reasons;
    for (const auto& [reason, n] : c.reasons) {
      std::string safe = reason;
      for (char& ch : safe) {
        if (ch == '|' || ch == '\n') ch = ' ';
      }
      reasons += (reasons.empty() ? "" : "<br>") + std::to_string(n) + "× " + safe;
    }
    out << "| " << family << " | " << c.passed << " | " << c.failed << " | " << c.skipped << " | " << reasons << " |\n";
  }
  return out.str();
}

}  // namespace anvil::conformance
