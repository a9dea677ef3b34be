#include "conformance/runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "conformance/checks.h"
#include "conformance/inputs.h"
#include "hlo/attributes.h"
#include "hlo/cost.h"
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

int64_t ShapeBytes(const hlo::Shape& shape) {
  if (shape.IsArray()) return shape.ByteSize();
  int64_t bytes = 0;
  if (shape.IsTuple()) {
    for (const hlo::Shape& e : shape.tuple_elements()) bytes += ShapeBytes(e);
  }
  return bytes;
}

std::string GiB(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(int64_t{1} << 30));
  return text;
}

// Ops whose result may be (part of) an operand's memory rather than new memory.
bool MayAlias(hlo::Opcode op) {
  switch (op) {
    case hlo::Opcode::kParameter: case hlo::Opcode::kGetTupleElement: case hlo::Opcode::kTuple:
    case hlo::Opcode::kBitcast: case hlo::Opcode::kReshape: case hlo::Opcode::kOptimizationBarrier:
    case hlo::Opcode::kWhile: case hlo::Opcode::kConditional: case hlo::Opcode::kCall:
      return true;
    default: return false;
  }
}

// Why an .hlo program is out of scope for one device with 8 GiB, or "".
// Memory is judged by a lower bound that holds for any schedule: the
// caller's arguments stay live for the whole execution, and each new value
// of the entry is live beside them when it is made.
std::string OutOfScope(const hlo::Module& module) {
  constexpr int64_t kMaxBytes = int64_t{8} << 30;
  int64_t parameter_bytes = 0;
  for (const hlo::Instruction* p : module.entry->parameters) parameter_bytes += ShapeBytes(p->shape);
  for (const auto& c : module.computations) {
    for (const auto& i : c->instructions) {
      switch (i->opcode) {
        case hlo::Opcode::kAllReduce: case hlo::Opcode::kAllReduceStart: case hlo::Opcode::kAllGather:
        case hlo::Opcode::kAllGatherStart: case hlo::Opcode::kAllToAll: case hlo::Opcode::kRaggedAllToAll:
        case hlo::Opcode::kCollectivePermute: case hlo::Opcode::kCollectivePermuteStart:
        case hlo::Opcode::kReduceScatter: case hlo::Opcode::kCollectiveBroadcast:
        case hlo::Opcode::kSend: case hlo::Opcode::kRecv:
          return "uses collectives across devices (" + std::string(i->OpcodeSpelling()) + ")";
        default: break;
      }
      if (i->shape.IsArray()) {
        const int64_t bytes = i->shape.ByteSize();
        if (bytes > kMaxBytes) return "does not fit in 8 GiB (%" + i->name + " is " + i->shape.ToString(false) + ")";
      }
    }
  }
  if (parameter_bytes > kMaxBytes) return "does not fit in 8 GiB (parameters: " + GiB(parameter_bytes) + ")";
  const hlo::Instruction* largest = nullptr;
  int64_t largest_bytes = 0;
  for (const auto& i : module.entry->instructions) {
    if (MayAlias(i->opcode)) continue;
    const int64_t bytes = ShapeBytes(i->shape);
    if (bytes > largest_bytes) {
      largest = i.get();
      largest_bytes = bytes;
    }
  }
  if (largest && parameter_bytes + largest_bytes > kMaxBytes) {
    return "does not fit in 8 GiB: its parameters (" + GiB(parameter_bytes) + ") and %" + largest->name + " (" +
           GiB(largest_bytes) + ") are live at once";
  }
  return "";
}

// About how many element computations (multiply-adds for dot and
// convolution) the reference evaluator spends on `module`, counting each
// loop body once.
double ReferenceWork(const hlo::Module& module) {
  double work = 0;
  for (const auto& c : module.computations) {
    for (const auto& i : c->instructions) {
      if (i->shape.IsArray()) work += static_cast<double>(i->shape.ElementCount()) * hlo::TermsPerElement(*i);
    }
  }
  return work;
}

// The most terms any one value of `module` sums (see TermsPerElement).
int64_t LongestSum(const hlo::Module& module) {
  double longest = 1;
  for (const auto& c : module.computations) {
    for (const auto& i : c->instructions) longest = std::max(longest, hlo::TermsPerElement(*i));
  }
  return static_cast<int64_t>(longest);
}

// Inputs are seeded by the file's name and the entry's, not by the path the
// file was reached by, so every checkout and working directory draws the
// same inputs and the expected list means the same everywhere.
std::vector<hlo::Literal> ArgumentsFor(const hlo::Computation& entry, const std::string& file) {
  const std::string name = std::filesystem::path(file).filename().string() + ":" + entry.name;
  std::vector<hlo::Literal> args;
  for (const hlo::Instruction* p : entry.parameters) {
    args.push_back(DeterministicLiteral(p->shape, HashString(name) + static_cast<uint64_t>(p->parameter_number)));
  }
  return args;
}

// The element types of every array value the entry computation (and what
// it calls) holds, sorted.
std::vector<std::string> ElementTypesOf(const hlo::Module& module) {
  std::set<std::string> names;
  std::function<void(const hlo::Shape&)> add = [&](const hlo::Shape& s) {
    if (s.IsTuple()) {
      for (const hlo::Shape& e : s.tuple_elements()) add(e);
    } else if (s.IsArray()) {
      names.insert(std::string(hlo::HloName(s.element_type())));
    }
  };
  std::set<const hlo::Computation*> seen;
  std::vector<const hlo::Computation*> pending{module.entry};
  while (!pending.empty()) {
    const hlo::Computation* c = pending.back();
    pending.pop_back();
    if (!c || !seen.insert(c).second) continue;
    for (const auto& i : c->instructions) {
      add(i->shape);
      for (const hlo::Computation* callee : i->called_computations) pending.push_back(callee);
    }
  }
  return {names.begin(), names.end()};
}

// One test: a module whose entry is set; the outcome and why.
TestResult RunOne(std::unique_ptr<hlo::Module> module, const std::string& file, Backend& backend, bool is_stablehlo,
                  const RunOptions& options) {
  TestResult r;
  r.file = file;
  r.function = module->entry->name;
  r.family = FamilyOf(file);
  r.element_types = ElementTypesOf(*module);
  auto fail = [&](TestResult::Status s, std::string why) {
    r.status = s;
    r.reason = std::move(why);
    return r;
  };
  if (UsesParallelInterpreter(*module)) {
    return fail(TestResult::Status::kSkipped, "needs several devices at once (interpreter.run_parallel)");
  }
  if (!is_stablehlo) {
    std::string why = OutOfScope(*module);
    if (!why.empty()) return fail(TestResult::Status::kSkipped, why);
  }
  FillElidedConstants(*module);
  auto checks = LiftChecks(*module);
  if (!checks.ok()) return fail(TestResult::Status::kFailed, checks.status().message());
  hlo::Status verified = hlo::Verify(*module);
  if (!verified.ok()) return fail(TestResult::Status::kFailed, "rewritten program: " + verified.message());
  if (options.compile_only) {
    // The program as it would run (checks lifted into outputs), compiled
    // for every target and run nowhere.
    hlo::Status compiled = backend.CompileForTargets(*module);
    if (!compiled.ok()) return fail(TestResult::Status::kFailed, compiled.message());
    return r;
  }
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
  // No checks: compare with the reference evaluator (or the backend given
  // as the reference).
  if (backend.name() == "reference") return r;
  std::string reference_name = "the evaluator";
  hlo::StatusOr<std::vector<hlo::Literal>> reference = hlo::Unimplemented("");
  if (options.reference) {
    reference_name = options.reference->name();
    reference = options.reference->Run(*module, args);
    if (!reference.ok()) return fail(TestResult::Status::kFailed, reference_name + ": " + reference.status().message());
  } else {
    const double work = ReferenceWork(*module);
    if (work > options.reference_budget) {
      char estimate[64];
      std::snprintf(estimate, sizeof estimate, "%.0f G", work / 1e9);
      return fail(TestResult::Status::kSkipped, std::string("ran on ") + backend.name() +
                                                    ", not compared: the reference evaluator would need about " +
                                                    estimate + " multiply-adds");
    }
    reference = MakeReferenceBackend()->Run(*module, args);
    if (!reference.ok()) return fail(TestResult::Status::kFailed, "reference evaluator: " + reference.status().message());
  }
  if (reference->size() != results->size()) return fail(TestResult::Status::kFailed, "result counts differ");
  // Every result is compared, so a failure says how widespread it is.
  std::vector<size_t> differing;
  std::string first;
  const int64_t longest_sum = LongestSum(*module);
  for (size_t k = 0; k < results->size(); ++k) {
    hlo::Status s = CompareResults((*results)[k], (*reference)[k], longest_sum);
    if (s.ok()) continue;
    if (differing.empty()) first = "result " + std::to_string(k) + ": " + s.message();
    differing.push_back(k);
  }
  if (differing.empty()) return r;
  const std::string verdict =
      first + " (" + std::to_string(differing.size()) + " of " + std::to_string(results->size()) + " results differ)";
  // Some programs amplify rounding so much (a deep network's training step
  // with random weights) that two correct f32 implementations cannot agree
  // elementwise. Their own sensitivity says how far apart correct answers
  // may be: the backend and the reference both run again on the inputs
  // moved by one ULP, and a differing result passes when it is no further
  // from the reference than a few times that move. A well-conditioned
  // program moves by ULPs, so a wrong answer there still fails. Each
  // implementation's move is one draw of the program's sensitivity (on one
  // of MobileNet's training step's results the CPU plugin's was 27 times
  // the evaluator's), so the larger counts; but the backend's only up to
  // kDrawRatio times the reference's: an element a kernel never writes holds whatever
  // memory its buffer was given, which changes from run to run, and counted
  // as the backend's sensitivity it let a GPU scan that wrote a fifth of
  // its output pass. The backend must also answer the same inputs with the
  // same bits (a race, or such an element, shows there first).
  auto again = backend.Run(*module, args);
  if (!again.ok() || *again != *results) {
    return fail(TestResult::Status::kFailed,
                verdict + "; and a second run on the same inputs gave other results (an element the program never "
                          "writes, or a race)");
  }
  const std::vector<hlo::Literal> nudged = NudgedByOneUlp(args);
  auto moved = backend.Run(*module, nudged);
  auto reference_moved =
      options.reference ? options.reference->Run(*module, nudged) : MakeReferenceBackend()->Run(*module, nudged);
  if (!moved.ok() || moved->size() != results->size() || !reference_moved.ok() ||
      reference_moved->size() != results->size()) {
    return fail(TestResult::Status::kFailed, verdict);
  }
  constexpr double kSensitivityFactor = 4, kDrawRatio = 64;
  double worst_ratio = 0;
  for (size_t k : differing) {
    const double reference_spread = MaxAbsDifference((*reference)[k], (*reference_moved)[k]);
    const double backend_spread = MaxAbsDifference((*results)[k], (*moved)[k]);
    const double spread = std::max(reference_spread, std::min(backend_spread, kDrawRatio * reference_spread));
    const double error = MaxAbsDifference((*results)[k], (*reference)[k]);
    if (!(spread > 0) || !(error <= kSensitivityFactor * spread)) {
      char why[240];
      std::snprintf(why, sizeof why,
                    "; moving the inputs by one ULP moves result %zu by %.3g on %s and %.3g here, it is %.3g from it",
                    k, reference_spread, reference_name.c_str(), backend_spread, error);
      return fail(TestResult::Status::kFailed, verdict + why);
    }
    worst_ratio = std::max(worst_ratio, error / spread);
  }
  char note[200];
  std::snprintf(note, sizeof note,
                "%zu of %zu results agree only within the program's own sensitivity: at most %.2f times what moving "
                "the inputs by one ULP changes",
                differing.size(), results->size(), worst_ratio);
  r.reason = note;
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
                                       const RunOptions& options) {
  auto progress = options.progress;
  std::vector<TestResult> results;
  for (const std::string& file : CollectFiles(paths)) {
    auto format = hlo::ProgramFormatFromPath(file);
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
        TestResult r = RunOne(std::move(module), file, backend, is_stablehlo, options);
        // XLA files split by `// -----` often reuse an entry name; the
        // module's place in the file tells their tests apart.
        if (!is_stablehlo && parsed->size() > 1) r.function += "#" + std::to_string(m + 1);
        r.seconds = std::chrono::duration<double>(Clock::now() - test_start).count();
        results.push_back(r);
        if (progress) progress(r);
      }
    }
  }
  return results;
}

namespace {

// "…/shared/corpus/stablehlo/interpret/add.mlir" -> "stablehlo/interpret/add.mlir".
std::string CorpusRelative(const std::string& file) {
  for (const char* root : {"stablehlo/", "xla-hlo/"}) {
    size_t at = file.rfind(std::string("/") + root);
    if (at != std::string::npos) return file.substr(at + 1);
    if (file.rfind(root, 0) == 0) return file;
  }
  return file;
}

}  // namespace

hlo::StatusOr<std::vector<std::string>> CheckExpectations(const std::vector<TestResult>& results,
                                                          const std::string& expectations_file) {
  std::ifstream in(expectations_file);
  if (!in) return hlo::NotFound(expectations_file + ": cannot open");
  std::map<std::string, std::string> expected;  // test -> reason substring
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.find('\t');
    if (tab == std::string::npos) return hlo::InvalidArgument(expectations_file + ": no tab in '" + line + "'");
    expected[line.substr(0, tab)] = line.substr(tab + 1);
  }
  std::vector<std::string> mismatches;
  std::set<std::string> seen;
  for (const TestResult& r : results) {
    const std::string key = CorpusRelative(r.file) + ":" + r.function;
    auto it = expected.find(key);
    if (r.status == TestResult::Status::kPassed) {
      if (it != expected.end()) mismatches.push_back(key + " passes now: remove it from the list");
      continue;
    }
    seen.insert(key);
    if (it == expected.end()) {
      mismatches.push_back(key + " " + StatusName(r.status) + " and is not listed: " + r.reason);
    } else if (r.reason.find(it->second) == std::string::npos) {
      mismatches.push_back(key + " " + StatusName(r.status) + " for another reason: " + r.reason);
    }
  }
  for (const auto& [key, reason] : expected) {
    bool ran = std::any_of(results.begin(), results.end(),
                           [&](const TestResult& r) { return CorpusRelative(r.file) + ":" + r.function == key; });
    if (!ran) mismatches.push_back(key + " is listed but did not run");
  }
  return mismatches;
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
  // Pass rates per corpus folder (skips left out of the count), over every
  // test and over those on f32, s32, pred and u32 alone.
  struct Rate {
    int passed = 0, run = 0, basic_passed = 0, basic_run = 0;
  };
  std::map<std::string, Rate> folders;
  static const std::set<std::string> kBasic = {"f32", "s32", "pred", "u32"};
  for (const TestResult& r : results) {
    if (r.status == TestResult::Status::kSkipped) continue;
    // The corpus and its first folder ("stablehlo/interpret"), or the
    // file's own folder outside a corpus.
    std::string folder = r.file;
    if (size_t at = folder.find("corpus/"); at != std::string::npos) {
      folder = folder.substr(at + 7);
      size_t first = folder.find('/');
      size_t second = first == std::string::npos ? first : folder.find('/', first + 1);
      folder = second == std::string::npos ? folder.substr(0, first) : folder.substr(0, second);
    } else {
      size_t slash = folder.rfind('/');
      folder = slash == std::string::npos ? "." : folder.substr(0, slash);
    }
    Rate& rate = folders[folder];
    const bool passed = r.status == TestResult::Status::kPassed;
    ++rate.run;
    rate.passed += passed;
    bool basic = !r.element_types.empty();
    for (const std::string& t : r.element_types) basic &= kBasic.count(t) > 0;
    if (basic) {
      ++rate.basic_run;
      rate.basic_passed += passed;
    }
  }
  auto percent = [](int a, int b) {
    std::ostringstream p;
    p << std::fixed << std::setprecision(1) << (b ? 100.0 * a / b : 0.0) << " %";
    return p.str();
  };
  out << "| folder | passed | of | rate | f32/s32/pred/u32 only: passed | of | rate |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& [folder, rate] : folders) {
    out << "| " << folder << " | " << rate.passed << " | " << rate.run << " | " << percent(rate.passed, rate.run) << " | "
        << rate.basic_passed << " | " << rate.basic_run << " | " << percent(rate.basic_passed, rate.basic_run) << " |\n";
  }
  out << "\n";
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
