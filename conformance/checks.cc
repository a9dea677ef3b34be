#include "conformance/checks.h"

#include <limits>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <complex>
#include <cstring>
#include <map>
#include <set>

#include "hlo/attributes.h"
#include "hlo/canonicalize.h"
#include "hlo/constant_folding.h"

namespace anvil::conformance {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Literal;
using hlo::Opcode;
using hlo::Status;

// Options the lowering kept in backend_config: `{tolerance = 0.1, ...}`.
std::map<std::string, std::string> Options(const Instruction& i) {
  std::map<std::string, std::string> options;
  std::string quoted = hlo::StringAttribute(i, "backend_config"), config;
  for (size_t k = 0; k < quoted.size(); ++k) {  // undo the string's escapes
    if (quoted[k] == '\\' && k + 1 < quoted.size()) ++k;
    config += quoted[k];
  }
  if (config.size() >= 2 && config.front() == '{') config = config.substr(1, config.size() - 2);
  size_t start = 0;
  while (start < config.size()) {
    size_t comma = config.find(',', start);
    std::string item = config.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t eq = item.find('=');
    if (eq != std::string::npos) {
      auto trim = [](std::string s) {
        size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
        return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
      };
      options[trim(item.substr(0, eq))] = trim(item.substr(eq + 1));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return options;
}

// ULP distance between two values of one float format, counting subnormals
// and across zero, as StableHLO's check.expect_close does.
uint64_t UlpDistance(ElementType t, uint64_t a_bits, uint64_t b_bits, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : UINT64_MAX;
  if (std::isinf(a) || std::isinf(b)) return a == b ? 0 : UINT64_MAX;
  const int width = hlo::Info(t).bit_width;
  const uint64_t sign = uint64_t{1} << (width - 1);
  uint64_t ma = a_bits & (sign - 1), mb = b_bits & (sign - 1);
  if ((a_bits & sign) != (b_bits & sign)) return ma + mb;
  return ma > mb ? ma - mb : mb - ma;
}

// The bits of component `c` (0 real, 1 imaginary) of float or complex element k.
uint64_t ComponentBits(const Literal& l, int64_t k, int c) {
  const ElementType t = l.shape().element_type();
  const int part_size = hlo::Info(hlo::ComponentType(t)).byte_size;
  uint64_t bits = 0;
  std::memcpy(&bits, l.data().data() + k * hlo::Info(t).byte_size + c * part_size, static_cast<size_t>(part_size));
  return bits;
}

std::string Describe(const Literal& l, int64_t k) { return l.ElementToString(k); }

Status Mismatch(const Check& check, const Literal& actual, const Literal& expected, int64_t k, std::string extra = "") {
  return hlo::InvalidArgument(check.kind + ": element " + std::to_string(k) + " is " + Describe(actual, k) +
                              ", expected " + Describe(expected, k) + extra);
}

}  // namespace

hlo::StatusOr<std::vector<Check>> LiftChecks(hlo::Module& module) {
  ANVIL_RETURN_IF_ERROR(hlo::InlineCalls(module));
  hlo::Computation& entry = *module.entry;
  std::vector<Check> checks;
  std::vector<Instruction*> outputs;
  auto output_of = [&](Instruction* value) {
    outputs.push_back(value);
    return static_cast<int>(outputs.size()) - 1;
  };
  // interpreter.probe records a value and passes it on: the value a later
  // check.expect_serialized_eq compares with. Probes become their operand.
  std::map<std::string, Instruction*> probes;
  for (const auto& owned : entry.instructions) {
    Instruction& i = *owned;
    if (i.opcode == Opcode::kCustomCall && hlo::StringAttribute(i, "custom_call_target") == "interpreter.probe") {
      auto options = Options(i);
      std::string id = options.count("probe_id") ? options["probe_id"] : "";
      if (id.size() >= 2 && id.front() == '"') id = id.substr(1, id.size() - 2);
      probes[id] = i.operands.at(0);
      hlo::ReplaceAllUses(entry, &i, i.operands.at(0));
    }
  }
  for (const auto& owned : entry.instructions) {
    Instruction& i = *owned;
    if (i.opcode != Opcode::kCustomCall) continue;
    std::string target = hlo::StringAttribute(i, "custom_call_target");
    if (target.rfind("check.", 0) != 0) continue;
    Check check;
    check.kind = target.substr(6);
    if (check.kind == "expect_serialized_eq") {
      auto options = Options(i);
      std::string id = options.count("probe_id") ? options["probe_id"] : "";
      if (id.size() >= 2 && id.front() == '"') id = id.substr(1, id.size() - 2);
      if (options.count("iter") || !probes.count(id)) {
        return hlo::Unimplemented("check.expect_serialized_eq of probe '" + id +
                                  "' needs values a probe recorded inside a loop");
      }
      check.kind = "expect_eq";
      check.actual = output_of(i.operands.at(0));
      check.expected = output_of(probes[id]);
      checks.push_back(check);
      continue;
    }
    if (check.kind == "eq") check.kind = "expect_eq";  // check.eq: the same comparison, as a value
    if (i.operands.size() != 2) return hlo::InvalidArgument(target + " needs two operands");
    auto options = Options(i);
    if (options.count("tolerance")) check.tolerance = std::strtod(options["tolerance"].c_str(), nullptr);
    if (options.count("max_ulp_difference")) check.max_ulp_difference = std::strtoull(options["max_ulp_difference"].c_str(), nullptr, 10);
    if (options.count("min_ulp_difference")) check.min_ulp_difference = std::strtoull(options["min_ulp_difference"].c_str(), nullptr, 10);
    check.actual = output_of(i.operands[0]);
    check.expected = output_of(i.operands[1]);
    checks.push_back(check);
  }
  if (checks.empty()) return checks;
  // The checked values become the outputs; the check calls themselves go
  // (as does whatever only they or the old root needed).
  auto tuple = std::make_unique<Instruction>();
  tuple->opcode = Opcode::kTuple;
  tuple->name = "conformance.checked_values";
  std::vector<hlo::Shape> shapes;
  for (Instruction* o : outputs) shapes.push_back(o->shape);
  tuple->shape = hlo::Shape::Tuple(shapes);
  tuple->operands = outputs;
  std::set<const Instruction*> used = {entry.root};
  for (const auto& other : entry.instructions) {
    for (const Instruction* o : other->operands) used.insert(o);
  }
  std::vector<std::unique_ptr<Instruction>> kept;
  for (auto& owned : entry.instructions) {
    if (owned->opcode == Opcode::kCustomCall &&
        hlo::StringAttribute(*owned, "custom_call_target") == "interpreter.probe") {
      continue;  // replaced by its operand above
    }
    bool is_check = owned->opcode == Opcode::kCustomCall &&
                    hlo::StringAttribute(*owned, "custom_call_target").rfind("check.", 0) == 0;
    if (is_check) {
      // A check.eq used as a value (its i1 result returned) just drops out;
      // anything reading it reads a constant true.
      if (used.count(owned.get())) {
        owned->opcode = Opcode::kConstant;
        owned->operands.clear();
        owned->attributes.clear();
        Literal yes(owned->shape);
        if (owned->shape.IsArray()) {
          for (int64_t k = 0, k_end = yes.element_count(); k < k_end; ++k) yes.SetUint(k, 1);
        }
        owned->literal = std::move(yes);
        kept.push_back(std::move(owned));
      }
      continue;
    }
    kept.push_back(std::move(owned));
  }
  entry.instructions = std::move(kept);
  entry.root = entry.AddInstruction(std::move(tuple));
  hlo::RemoveDeadCode(module);
  return checks;
}

Status Compare(const Check& check, const Literal& actual, const Literal& expected) {
  const ElementType t = actual.shape().element_type();
  if (!actual.shape().Compatible(expected.shape())) {
    return hlo::InvalidArgument(check.kind + ": shapes differ: " + actual.shape().ToString(false) + " vs " +
                                expected.shape().ToString(false));
  }
  const bool is_close = check.kind == "expect_close";
  const bool is_almost = check.kind == "expect_almost_eq" || check.kind == "expect_almost_eq_const";
  for (int64_t k = 0, k_end = actual.element_count(); k < k_end; ++k) {
    if (hlo::IsFloat(t) || hlo::IsComplex(t)) {
      const ElementType part = hlo::ComponentType(t);
      std::complex<double> a = actual.GetComplex(k), e = expected.GetComplex(k);
      const int components = hlo::IsComplex(t) ? 2 : 1;
      for (int c = 0; c < components; ++c) {
        double x = c == 0 ? a.real() : a.imag(), y = c == 0 ? e.real() : e.imag();
        if (is_close) {
          uint64_t d = UlpDistance(part, ComponentBits(actual, k, c), ComponentBits(expected, k, c), x, y);
          if (d > check.max_ulp_difference || d < check.min_ulp_difference) {
            return Mismatch(check, actual, expected, k, " (" + std::to_string(d) + " ULP apart, allowed " +
                                                            std::to_string(check.min_ulp_difference) + ".." +
                                                            std::to_string(check.max_ulp_difference) + ")");
          }
        } else if (is_almost) {
          bool same = x == y || (std::isnan(x) && std::isnan(y)) ||
                      (std::isfinite(x) && std::isfinite(y) && std::signbit(x) == std::signbit(y) &&
                       std::fabs(x - y) <= check.tolerance);
          if (!same) return Mismatch(check, actual, expected, k, " (tolerance " + std::to_string(check.tolerance) + ")");
        } else {
          // Exact: equal values, or both NaN.
          bool same = x == y || (std::isnan(x) && std::isnan(y));
          if (!same) return Mismatch(check, actual, expected, k);
        }
      }
    } else if (actual.GetBits(k) != expected.GetBits(k) && actual.GetInt(k) != expected.GetInt(k)) {
      return Mismatch(check, actual, expected, k);
    }
  }
  return hlo::OkStatus();
}

namespace {

// Plugin against evaluator, floats: within 16 ULP, or within a tolerance
// scaled by the largest expected magnitude, since a sum whose terms cancel
// keeps the absolute error of its terms, not of its (small) result.
Status CompareFloats(const Literal& actual, const Literal& expected, int64_t longest_sum) {
  const ElementType t = actual.shape().element_type();
  const ElementType part = hlo::ComponentType(t);
  const int mantissa = part == ElementType::kF64 ? 52 : part == ElementType::kF32 ? 23
                       : hlo::Info(part).float_format ? hlo::Info(part).float_format->mantissa_bits : 23;
  double scale = 0;
  for (int64_t k = 0, k_end = expected.element_count(); k < k_end; ++k) {
    std::complex<double> e = expected.GetComplex(k);
    if (std::isfinite(std::abs(e))) scale = std::max(scale, std::abs(e));
  }
  // 256 ULP of the largest value, or 8 sqrt(n) ULP for sums of n > 1024
  // terms, counted in f32's ULPs for types narrower than f32: their sums
  // and math are computed in f32 or wider and rounded once, so the error
  // that cancellation keeps is the wide computation's. In the type's own
  // ULPs the floor would pass anything (256 bf16 ULPs are twice the
  // largest value; 256 of f8e4m3's, 32 times); each element still passes
  // within 16 of its own ULPs below.
  const double ulps = std::max(256.0, 8.0 * std::sqrt(static_cast<double>(std::max<int64_t>(longest_sum, 1))));
  const double tolerance = std::ldexp(std::max(scale, 1.0), -std::max(mantissa, 23)) * ulps;
  constexpr uint64_t kMaxUlps = 16;
  for (int64_t k = 0, k_end = actual.element_count(); k < k_end; ++k) {
    std::complex<double> a = actual.GetComplex(k), e = expected.GetComplex(k);
    const bool same_special = (std::isnan(a.real()) && std::isnan(e.real())) || a == e;
    if (same_special || std::abs(a - e) <= tolerance) continue;
    // Past the absolute floor: still close when within a few ULP of itself.
    uint64_t ulps = 0;
    for (int c = 0; c < (hlo::IsComplex(t) ? 2 : 1); ++c) {
      ulps = std::max(ulps, UlpDistance(part, ComponentBits(actual, k, c), ComponentBits(expected, k, c),
                                        c == 0 ? a.real() : a.imag(), c == 0 ? e.real() : e.imag()));
    }
    if (ulps <= kMaxUlps) continue;
    return hlo::InvalidArgument("element " + std::to_string(k) + " is " + actual.ElementToString(k) + ", expected " +
                                expected.ElementToString(k) + " (" + std::to_string(ulps) + " ULP apart and " +
                                std::to_string(std::abs(a - e)) + " absolute; allowed " + std::to_string(kMaxUlps) +
                                " ULP or " + std::to_string(tolerance) + " absolute)");
  }
  return hlo::OkStatus();
}

}  // namespace

Status CompareResults(const Literal& actual, const Literal& expected, int64_t longest_sum) {
  if (actual.shape().IsTuple()) {
    if (!expected.shape().IsTuple() || actual.tuple_elements().size() != expected.tuple_elements().size()) {
      return hlo::InvalidArgument("result tuples differ in size");
    }
    for (size_t i = 0; i < actual.tuple_elements().size(); ++i) {
      Status s = CompareResults(actual.tuple_elements()[i], expected.tuple_elements()[i], longest_sum);
      if (!s.ok()) return hlo::InvalidArgument("result " + std::to_string(i) + ": " + s.message());
    }
    return hlo::OkStatus();
  }
  const ElementType t = actual.shape().element_type();
  if (!actual.shape().Compatible(expected.shape())) {
    return hlo::InvalidArgument("shapes differ: " + actual.shape().ToString(false) + " vs " +
                                expected.shape().ToString(false));
  }
  if (hlo::IsFloat(t) || hlo::IsComplex(t)) return CompareFloats(actual, expected, longest_sum);
  Check exact;
  exact.kind = "expect_eq";
  return Compare(exact, actual, expected);
}

double MaxAbsDifference(const Literal& a, const Literal& b) {
  double worst = 0;
  if (a.shape().IsTuple()) {
    for (size_t k = 0; k < a.tuple_elements().size() && k < b.tuple_elements().size(); ++k) {
      worst = std::max(worst, MaxAbsDifference(a.tuple_elements()[k], b.tuple_elements()[k]));
    }
    return worst;
  }
  const ElementType t = a.shape().element_type();
  if (!(hlo::IsFloat(t) || hlo::IsComplex(t)) || a.element_count() != b.element_count()) return worst;
  for (int64_t k = 0, k_end = a.element_count(); k < k_end; ++k) {
    const std::complex<double> x = a.GetComplex(k), y = b.GetComplex(k);
    const bool x_nan = std::isnan(x.real()) || std::isnan(x.imag()), y_nan = std::isnan(y.real()) || std::isnan(y.imag());
    if (x_nan || y_nan) {
      if (x_nan != y_nan) return std::numeric_limits<double>::infinity();
      continue;
    }
    if (x == y) continue;  // equal infinities too
    worst = std::max(worst, std::abs(x - y));
  }
  return worst;
}

}  // namespace anvil::conformance
