#include "elementwise_program.h"

#include <anvil/anvil.h>  // anvil_status_code values only: a plugin calls no libanvil function

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <utility>

namespace elementwise {
namespace {

struct OpName {
  const char* name;
  Op op;
  int arity;
};
constexpr OpName kElementwiseOps[] = {
    {"abs", Op::kAbs, 1},         {"copy", Op::kCopy, 1},         {"exponential", Op::kExp, 1},
    {"log", Op::kLog, 1},         {"logistic", Op::kLogistic, 1}, {"negate", Op::kNegate, 1},
    {"rsqrt", Op::kRsqrt, 1},     {"sqrt", Op::kSqrt, 1},         {"tanh", Op::kTanh, 1},
    {"add", Op::kAdd, 2},         {"divide", Op::kDivide, 2},     {"maximum", Op::kMaximum, 2},
    {"minimum", Op::kMinimum, 2}, {"multiply", Op::kMultiply, 2}, {"power", Op::kPower, 2},
    {"subtract", Op::kSubtract, 2},
};

constexpr size_t kMissing = ~size_t{0};  // a parameter number not seen yet

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Reads one line of the entry computation; every error names the line.
class Line {
 public:
  Line(std::string_view text, size_t number) : rest_(Trim(text)), number_(number) {}

  [[noreturn]] void Fail(int32_t code, const std::string& what) const {
    throw Error(code, "line " + std::to_string(number_) + ": " + what);
  }
  [[noreturn]] void Refuse(const std::string& what) const {
    Fail(ANVIL_UNIMPLEMENTED, what + "; this plugin runs elementwise f32 programs only");
  }

  bool Consume(std::string_view prefix) {
    if (rest_.substr(0, prefix.size()) != prefix) return false;
    rest_ = Trim(rest_.substr(prefix.size()));
    return true;
  }
  void Expect(std::string_view prefix) {
    if (!Consume(prefix)) Fail(ANVIL_INVALID_ARGUMENT, "expected '" + std::string(prefix) + "'");
  }
  // Up to (not including) the first character of `stops`.
  std::string_view Until(std::string_view stops) {
    std::string_view word = rest_.substr(0, std::min(rest_.find_first_of(stops), rest_.size()));
    rest_ = Trim(rest_.substr(word.size()));
    return word;
  }
  // The text between an opening bracket here and its match; brackets of
  // the other kinds nest inside.
  std::string_view Bracketed() {
    int depth = 0;
    for (size_t k = 0; k < rest_.size(); ++k) {
      char c = rest_[k];
      depth += (c == '(' || c == '[' || c == '{') - (c == ')' || c == ']' || c == '}');
      if (depth == 0) {
        std::string_view inside = rest_.substr(1, k - 1);
        rest_ = Trim(rest_.substr(k + 1));
        return inside;
      }
    }
    Fail(ANVIL_INVALID_ARGUMENT, "unbalanced brackets");
  }
  std::string_view rest() const { return rest_; }

 private:
  std::string_view rest_;
  size_t number_;
};

// `f32[2,3]{1,0}`: the element count of a row-major f32 array.
size_t ReadArrayType(Line& line) {
  std::string_view type = line.Until("[");
  if (type != "f32") line.Refuse("element type " + std::string(type));
  if (line.rest().empty() || line.rest()[0] != '[') line.Fail(ANVIL_INVALID_ARGUMENT, "expected '['");
  std::string_view dims = line.Bracketed();
  size_t elements = 1, rank = 0;
  while (!Trim(dims).empty()) {
    const size_t comma = std::min(dims.find(','), dims.size());
    const std::string_view dim = Trim(dims.substr(0, comma));
    dims.remove_prefix(std::min(dims.size(), comma + 1));
    size_t d = 0;
    auto [end, error] = std::from_chars(dim.data(), dim.data() + dim.size(), d);
    if (error != std::errc() || end != dim.data() + dim.size()) line.Refuse("dimension '" + std::string(dim) + "'");
    elements *= d;
    ++rank;
  }
  if (!line.rest().empty() && line.rest()[0] == '{') {
    // The layout must be the row-major one ({1,0} for rank 2): that is how
    // core lays out every buffer it hands over.
    std::string layout(line.Bracketed()), row_major;
    for (size_t d = rank; d-- > 0;) row_major += std::to_string(d) + (d ? "," : "");
    if (layout != row_major) line.Refuse("layout {" + layout + "}");
  }
  return elements;
}

// `0.5` (one value for every element) or `{1, 2.5, -inf}` (nested braces
// for higher ranks).
std::vector<float> ReadLiteral(const Line& line, std::string_view text, size_t elements) {
  std::vector<float> values;
  size_t k = 0;
  while (k < text.size()) {
    size_t end = text.find_first_of(",{} ", k);
    if (end == k) {
      ++k;
      continue;
    }
    if (end == std::string_view::npos) end = text.size();
    float v = 0;
    auto [ptr, error] = std::from_chars(text.data() + k, text.data() + end, v);
    if (error != std::errc() || ptr != text.data() + end) {
      line.Fail(ANVIL_INVALID_ARGUMENT, "bad number '" + std::string(text.substr(k, end - k)) + "'");
    }
    values.push_back(v);
    k = end;
  }
  if (values.size() == 1 && text.find('{') == std::string_view::npos) values.assign(elements, values[0]);
  if (values.size() != elements) line.Fail(ANVIL_INVALID_ARGUMENT, "the constant's element count differs from its shape's");
  return values;
}

float Apply(Op op, float x, float y) {
  // In double, rounded once to f32, as the reference evaluator does.
  const double a = x, b = y;
  switch (op) {
    case Op::kAbs: return std::fabs(x);
    case Op::kCopy: return x;
    case Op::kExp: return static_cast<float>(std::exp(a));
    case Op::kLog: return static_cast<float>(std::log(a));
    case Op::kLogistic: return static_cast<float>(1 / (1 + std::exp(-a)));
    case Op::kNegate: return -x;
    case Op::kRsqrt: return static_cast<float>(1 / std::sqrt(a));
    case Op::kSqrt: return std::sqrt(x);
    case Op::kTanh: return static_cast<float>(std::tanh(a));
    case Op::kAdd: return x + y;
    case Op::kDivide: return x / y;
    case Op::kMultiply: return x * y;
    case Op::kPower: return static_cast<float>(std::pow(a, b));
    case Op::kSubtract: return x - y;
    // HLO's maximum and minimum propagate NaN, and order -0 below +0.
    case Op::kMaximum:
      if (std::isnan(x) || std::isnan(y)) return NAN;
      if (x == 0 && y == 0) return std::signbit(x) ? y : x;
      return x < y ? y : x;
    case Op::kMinimum:
      if (std::isnan(x) || std::isnan(y)) return NAN;
      if (x == 0 && y == 0) return std::signbit(x) ? x : y;
      return y < x ? y : x;
    default: return 0;  // not elementwise; Run handles the others
  }
}

}  // namespace

Program Program::Parse(std::string_view text) {
  Program program;
  std::map<std::string, size_t, std::less<>> names;
  bool in_entry = false, done = false;
  size_t number = 0;
  while (!text.empty() && !done) {
    const size_t eol = std::min(text.find('\n'), text.size());
    Line line(text.substr(0, eol), ++number);
    text.remove_prefix(std::min(text.size(), eol + 1));
    if (line.rest().empty() || line.Consume("//") || line.Consume("HloModule")) continue;
    if (!in_entry) {
      // Core inlines calls, so the entry is the only computation left unless
      // an op needs one (a reduction's combiner...): none that runs here.
      if (!line.Consume("ENTRY")) line.Refuse("computation " + std::string(line.Until(" ")) + " besides the entry");
      in_entry = true;
      continue;
    }
    if (line.Consume("}")) {
      done = true;
      continue;
    }
    const bool root = line.Consume("ROOT");
    line.Consume("%");
    const std::string name(line.Until(" ="));
    line.Expect("=");
    Instruction i{};
    const bool tuple_type = !line.rest().empty() && line.rest()[0] == '(';
    if (tuple_type) {
      line.Bracketed();  // the tuple's element types are its operands'
    } else {
      i.elements = ReadArrayType(line);
    }
    const std::string opcode(line.Until("("));
    if (line.rest().empty()) line.Fail(ANVIL_INVALID_ARGUMENT, "expected '(' after " + opcode);
    const std::string_view inside = line.Bracketed();
    const std::string_view attributes = line.rest();

    if (opcode == "parameter" || opcode == "constant") {
      i.op = opcode == "parameter" ? Op::kParameter : Op::kConstant;
      if (i.op == Op::kParameter) {
        auto [end, error] = std::from_chars(inside.data(), inside.data() + inside.size(), i.parameter);
        if (error != std::errc() || end != inside.data() + inside.size() || i.parameter > 1 << 20) {
          line.Fail(ANVIL_INVALID_ARGUMENT, "bad parameter number '" + std::string(inside) + "'");
        }
        auto& sizes = program.parameter_elements_;
        if (sizes.size() <= i.parameter) sizes.resize(i.parameter + 1, kMissing);
        if (sizes[i.parameter] != kMissing) line.Fail(ANVIL_INVALID_ARGUMENT, "parameter " + std::string(inside) + " twice");
        sizes[i.parameter] = i.elements;
      } else {
        i.constant = ReadLiteral(line, inside, i.elements);
      }
    } else {
      for (std::string_view rest = inside; !Trim(rest).empty();) {
        const size_t comma = std::min(rest.find(','), rest.size());
        std::string_view operand = Trim(rest.substr(0, comma));
        rest.remove_prefix(std::min(rest.size(), comma + 1));
        if (!operand.empty() && operand[0] == '%') operand.remove_prefix(1);
        auto found = names.find(operand);
        if (found == names.end()) line.Fail(ANVIL_INVALID_ARGUMENT, "unknown operand '" + std::string(operand) + "'");
        i.operands.push_back(found->second);
      }
      if (opcode == "tuple") {
        if (!root) line.Refuse("a tuple that is not the root");
        for (size_t o : i.operands) program.outputs_.push_back(o);
        done = true;  // the root is the entry's last instruction
        continue;
      }
      if (tuple_type) line.Refuse(opcode + " of tuple type");
      if (opcode == "broadcast") {
        // Only a scalar broadcast is elementwise; core folds the constant
        // ones, so these broadcast parameters or computed scalars.
        if (i.operands.size() != 1 || program.instructions_[i.operands[0]].elements != 1 ||
            attributes.find("dimensions={}") == std::string_view::npos) {
          line.Refuse("broadcast of a non-scalar");
        }
        i.op = Op::kBroadcast;
      } else {
        const OpName* known = nullptr;
        for (const OpName& o : kElementwiseOps) {
          if (opcode == o.name) known = &o;
        }
        if (!known) line.Refuse("op '" + opcode + "'");
        if (i.operands.size() != static_cast<size_t>(known->arity)) {
          line.Fail(ANVIL_INVALID_ARGUMENT, opcode + " takes " + std::to_string(known->arity) + " operand(s)");
        }
        for (size_t o : i.operands) {
          if (program.instructions_[o].elements != i.elements) line.Fail(ANVIL_INVALID_ARGUMENT, "operand shapes differ");
        }
        i.op = known->op;
      }
    }
    names[name] = program.instructions_.size();
    program.instructions_.push_back(std::move(i));
    if (root) {
      program.outputs_.push_back(program.instructions_.size() - 1);
      done = true;
    }
  }
  if (program.outputs_.empty()) throw Error(ANVIL_INVALID_ARGUMENT, "no ENTRY computation with a ROOT");
  for (size_t p = 0; p < program.parameter_elements_.size(); ++p) {
    if (program.parameter_elements_[p] == kMissing) throw Error(ANVIL_INVALID_ARGUMENT, "no parameter " + std::to_string(p));
  }
  return program;
}

std::vector<size_t> Program::output_elements() const {
  std::vector<size_t> elements;
  for (size_t o : outputs_) elements.push_back(instructions_[o].elements);
  return elements;
}

void Program::Run(const float* const* parameters, float* const* outputs) const {
  // Each instruction's values: parameters and constants where they are,
  // computed ones in arrays of this run (so runs may overlap on threads).
  std::vector<std::vector<float>> computed(instructions_.size());
  std::vector<const float*> values(instructions_.size());
  for (size_t k = 0; k < instructions_.size(); ++k) {
    const Instruction& i = instructions_[k];
    if (i.op == Op::kParameter) {
      values[k] = parameters[i.parameter];
      continue;
    }
    if (i.op == Op::kConstant) {
      values[k] = i.constant.data();
      continue;
    }
    std::vector<float>& out = computed[k];
    out.resize(i.elements);
    const float* a = values[i.operands[0]];
    const float* b = i.operands.size() > 1 ? values[i.operands[1]] : a;
    for (size_t e = 0; e < i.elements; ++e) out[e] = i.op == Op::kBroadcast ? a[0] : Apply(i.op, a[e], b[e]);
    values[k] = out.data();
  }
  for (size_t r = 0; r < outputs_.size(); ++r) {
    const float* v = values[outputs_[r]];
    std::copy(v, v + instructions_[outputs_[r]].elements, outputs[r]);
  }
}

}  // namespace elementwise
