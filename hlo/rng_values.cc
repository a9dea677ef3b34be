#include "hlo/rng_values.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "hlo/attributes.h"
#include "hlo/scalar_ops.h"

namespace anvil::hlo {
namespace {

uint32_t RotateLeft(uint32_t v, int distance) { return (v << distance) | (v >> (32 - distance)); }

// A 64-bit FNV-1a hash: each rng instruction's key, from its name.
uint64_t HashName(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

int MantissaBits(ElementType t) {
  if (t == ElementType::kF64) return 52;
  if (t == ElementType::kF32) return 23;
  return Info(t).float_format->mantissa_bits;
}

}  // namespace

std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> x, std::array<uint32_t, 2> key) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  x[0] += ks[0];
  x[1] += ks[1];
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x[0] += x[1];
      x[1] = RotateLeft(x[1], kRotations[(group % 2) * 4 + r]) ^ x[0];
    }
    // Key injection after every four rounds.
    x[0] += ks[(group + 1) % 3];
    x[1] += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return x;
}

StatusOr<RngValues> RngValues::Of(const Instruction& i) {
  const ElementType t = i.shape.element_type();
  const std::string distribution = StringAttribute(i, "distribution");
  RngValues v;
  v.is_float_ = i.shape.IsArray() && Info(t).type_class == TypeClass::kFloat;
  if (!i.shape.IsArray() || IsComplex(t) || IsPred(t) || (distribution == "rng_normal" && !v.is_float_)) {
    return Unimplemented(distribution + " of " + i.shape.ToString() + " is not defined");
  }
  // The bounds are read as elements of the result's type.
  if (i.operands.size() < 2) return InvalidArgument("rng %" + i.name + " takes two bounds");
  for (const Instruction* bound : {i.operands[0], i.operands[1]}) {
    if (!bound->shape.IsArray() || bound->shape.rank() != 0 || bound->shape.element_type() != t) {
      return InvalidArgument("rng %" + i.name + " takes two scalars of its result's type " +
                             std::string(Info(t).hlo_name) + ", not " + bound->shape.ToString());
    }
  }
  if (distribution != "rng_uniform" && distribution != "rng_normal") {
    return InvalidArgument("unknown rng distribution '" + distribution + "'");
  }
  v.type_ = t;
  v.normal_ = distribution == "rng_normal";
  v.width_ = Info(t).bit_width > 32 ? 64 : 32;
  if (v.is_float_) v.mantissa_ = MantissaBits(t);
  v.elements_ = i.shape.ElementCount();
  // An inlined copy keeps its callee's name as its key (canonicalize.cc).
  const Attribute* key = i.FindAttribute(kRngKeyAttribute);
  v.key_ = HashName(key ? key->value : i.name);
  return v;
}

// Draw k of the stream: THREE_FRY of counter k / 2 (32-bit words, the
// counter's two words filling neighbouring draws) or of counter k (64-bit).
uint64_t RngValues::Bits(int64_t k) const {
  const auto key = WordHalves(key_);
  if (width_ == 64) {
    const auto words = ThreeFry2x32(WordHalves(static_cast<uint64_t>(k)), key);
    return uint64_t{words[0]} | (uint64_t{words[1]} << 32);
  }
  return ThreeFry2x32(WordHalves(static_cast<uint64_t>(k / 2)), key)[k % 2];
}

double RngValues::Uniform(int64_t k) const {
  return std::ldexp(static_cast<double>(Bits(k) >> (width_ - mantissa_)), -mantissa_);
}

void RngValues::Fill(const void* a, const void* b, int64_t begin, int64_t end, void* out) const {
  const int64_t bytes = Info(type_).byte_size;
  auto* base = static_cast<unsigned char*>(out);
  const Scalar sa = LoadScalar(type_, a), sb = LoadScalar(type_, b);
  if (!is_float_) {
    // Uniform integers in [a, b): the bits modulo the range, from a.
    const uint64_t low = sa.bits, range = sb.bits - low;
    for (int64_t k = begin; k < end; ++k) {
      Scalar s;
      s.bits = low + (range == 0 ? 0 : Bits(k) % range);
      StoreScalar(type_, s, base + k * bytes);
    }
    return;
  }
  const double p = sa.re, q = sb.re;
  if (!normal_) {
    for (int64_t k = begin; k < end; ++k) {
      Scalar s;
      s.re = p + Uniform(k) * (q - p);
      StoreScalar(type_, s, base + k * bytes);
    }
    return;
  }
  // Box-Muller on pairs of uniforms (2j, 2j + 1); mean p, standard
  // deviation q. Each pair gives two elements, so a range starting at an
  // odd element recomputes its pair.
  for (int64_t k = begin - begin % 2; k < end; k += 2) {
    const double radius = std::sqrt(-2 * std::log(std::max(Uniform(k), 1e-7)));
    const double angle = 2 * M_PI * Uniform(k + 1);
    Scalar s;
    if (k >= begin) {
      s.re = p + q * radius * std::sin(angle);
      StoreScalar(type_, s, base + k * bytes);
    }
    if (k + 1 < end && k + 1 < elements_) {
      s.re = p + q * radius * std::cos(angle);
      StoreScalar(type_, s, base + (k + 1) * bytes);
    }
  }
}

}  // namespace anvil::hlo
