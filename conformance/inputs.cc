#include "conformance/inputs.h"

#include <cmath>

namespace anvil::conformance {

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
  for (int64_t k = 0, k_end = l.element_count(); k < k_end; ++k) {
    uint64_t r = next();
    if (hlo::IsFloat(t) && shape.rank() == 0) {
      // A float scalar argument is, in real programs, a hyperparameter: a
      // learning rate, a momentum, a clip bound such as ReLU6's 6. Those are
      // positive, and a negative one can make a whole network degenerate (a
      // ReLU6 cap below zero makes every activation one constant, and batch
      // norm then scales rounding noise by 1/sqrt(epsilon)), so scalars are
      // drawn from (0, 1].
      l.SetDouble(k, 1.0 - static_cast<double>(r >> 11) / 9007199254740992.0);
    } else if (hlo::IsFloat(t)) {
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

uint64_t HashString(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h;
}

void FillElidedConstants(hlo::Module& module) {
  for (auto& c : module.computations) {
    for (auto& i : c->instructions) {
      if (i->opcode == hlo::Opcode::kConstant && i->literal && i->literal->elided()) {
        i->literal = DeterministicLiteral(i->shape, HashString(i->name));
      }
    }
  }
}

namespace {

void NudgeUp(hlo::Literal& l) {
  for (hlo::Literal& e : l.mutable_tuple_elements()) NudgeUp(e);
  const hlo::ElementType t = l.shape().element_type();
  if (!l.shape().IsArray() || !hlo::IsFloat(t)) return;
  const hlo::FloatFormat* f = hlo::Info(t).float_format;
  const int mantissa = t == hlo::ElementType::kF64 ? 52 : t == hlo::ElementType::kF32 ? 23 : (f ? f->mantissa_bits : 23);
  for (int64_t k = 0, k_end = l.element_count(); k < k_end; ++k) {
    const double v = l.GetDouble(k);
    // One ULP of a normal number of this type: exact, so nothing rounds.
    if (std::isfinite(v) && v != 0) l.SetDouble(k, v + std::copysign(std::ldexp(1.0, std::ilogb(v) - mantissa), v));
  }
}

}  // namespace

std::vector<hlo::Literal> NudgedByOneUlp(std::vector<hlo::Literal> arguments) {
  for (hlo::Literal& a : arguments) NudgeUp(a);
  return arguments;
}

}  // namespace anvil::conformance
