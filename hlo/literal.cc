#include "hlo/literal.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

namespace anvil::hlo {
namespace {

int ByteSize(ElementType t) { return Info(t).byte_size; }

// Mantissa width and canonical quiet-NaN bits of a float type's storage.
struct NanInfo {
  int mantissa_bits;
  uint64_t canonical;  // sign bit clear
  int sign_bit;
};

NanInfo NanInfoOf(ElementType t) {
  switch (t) {
    case ElementType::kF32: return {23, 0x7FC00000u, 31};
    case ElementType::kF64: return {52, 0x7FF8000000000000ull, 63};
    default: {
      const FloatFormat& f = *Info(t).float_format;
      uint64_t canonical = EncodeFloat(f, std::nan(""));
      return {f.mantissa_bits, canonical, f.exponent_bits + f.mantissa_bits};
    }
  }
}

double BitsToDouble(ElementType t, uint64_t bits) {
  switch (t) {
    case ElementType::kF32: return std::bit_cast<float>(static_cast<uint32_t>(bits));
    case ElementType::kF64: return std::bit_cast<double>(bits);
    default: return DecodeFloat(*Info(t).float_format, static_cast<uint32_t>(bits));
  }
}

uint64_t DoubleToBits(ElementType t, double v) {
  switch (t) {
    case ElementType::kF32: return std::bit_cast<uint32_t>(static_cast<float>(v));
    case ElementType::kF64: return std::bit_cast<uint64_t>(v);
    default: return EncodeFloat(*Info(t).float_format, v);
  }
}

}  // namespace

std::string FloatBitsToString(ElementType type, uint64_t bits) {
  double v = BitsToDouble(type, bits);
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (std::isnan(v)) {
    NanInfo n = NanInfoOf(type);
    bool negative = (bits >> n.sign_bit) & 1;
    // FNUZ formats encode their one NaN with the sign bit set: that is not a sign.
    const FloatFormat* f = Info(type).float_format;
    if (f && f->nan == FloatFormat::Nan::kNegativeZero) return "nan";
    uint64_t sign_mask = (uint64_t{1} << n.sign_bit);
    uint64_t magnitude = bits & ~sign_mask;
    std::string out = negative ? "-nan" : "nan";
    if (magnitude != n.canonical) {
      uint64_t payload = magnitude & ((uint64_t{1} << n.mantissa_bits) - 1);
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof(buf), payload, 16);
      out += "(0x" + std::string(buf, r.ptr) + ")";
    }
    return out;
  }
  char buf[64];
  std::to_chars_result r;
  if (type == ElementType::kF64) {
    r = std::to_chars(buf, buf + sizeof(buf), v);
  } else {
    // Every narrower format is exactly representable in f32, and the shortest
    // f32 text converts back to the same f32, hence to the same bits.
    r = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v));
  }
  return std::string(buf, r.ptr);
}

Literal::Literal(Shape shape) : shape_(std::move(shape)) {
  if (shape_.IsTuple()) {
    for (const Shape& e : shape_.tuple_elements()) elements_.emplace_back(e);
  } else if (shape_.IsArray()) {
    data_.assign(static_cast<size_t>(shape_.ByteSize()), 0);
  }
}

void Literal::BroadcastFirstElement() {
  // Doubling copies: log2(n) large memcpys instead of n small ones.
  const size_t total = data_.size();
  size_t filled = shape_.IsArray() && total > 0 ? static_cast<size_t>(ByteSize(shape_.element_type())) : total;
  while (filled < total) {
    const size_t chunk = std::min(filled, total - filled);
    std::memcpy(data_.data() + filled, data_.data(), chunk);
    filled += chunk;
  }
}

bool Literal::IsSplat() const {
  if (!shape_.IsArray() || elided_ || element_count() < 2) return false;
  // Every element equals the one before it, so all equal the first: one
  // comparison of the data with itself shifted by an element (a call per
  // element took 100 ms over the 29 splats of 8 MB that JAX's exact GELU
  // writes).
  const size_t size = static_cast<size_t>(ByteSize(shape_.element_type()));
  return std::memcmp(data_.data(), data_.data() + size, data_.size() - size) == 0;
}

Literal Literal::Elided(Shape shape) {
  Literal l;
  l.shape_ = std::move(shape);
  l.elided_ = true;
  return l;
}

void Literal::SetUint(int64_t i, uint64_t v) {
  int n = ByteSize(shape_.element_type());
  if (IsPred(shape_.element_type())) v = v != 0;  // a pred byte holds 0 or 1
  if (IsComplex(shape_.element_type())) {
    SetComplex(i, static_cast<double>(v), 0);
    return;
  }
  if (IsFloat(shape_.element_type())) {
    SetDouble(i, static_cast<double>(v));
    return;
  }
  std::memcpy(&data_[static_cast<size_t>(i) * n], &v, n);  // little-endian host
}

void Literal::SetInt(int64_t i, int64_t v) {
  ElementType t = shape_.element_type();
  if (IsFloat(t)) return SetDouble(i, static_cast<double>(v));
  if (IsComplex(t)) return SetComplex(i, static_cast<double>(v), 0);
  SetUint(i, static_cast<uint64_t>(v));
}

void Literal::SetDouble(int64_t i, double v) {
  ElementType t = shape_.element_type();
  if (t == ElementType::kF32) {
    const float f = static_cast<float>(v);  // rounds to nearest even, as DoubleToBits does
    std::memcpy(data_.data() + static_cast<size_t>(i) * 4, &f, 4);
    return;
  }
  if (t == ElementType::kF64) {
    std::memcpy(data_.data() + static_cast<size_t>(i) * 8, &v, 8);
    return;
  }
  if (IsComplex(t)) return SetComplex(i, v, 0);
  if (!IsFloat(t)) {
    if (IsUnsignedInt(t) || IsPred(t)) return SetUint(i, static_cast<uint64_t>(v));
    return SetInt(i, static_cast<int64_t>(v));
  }
  uint64_t bits = DoubleToBits(t, v);
  std::memcpy(&data_[static_cast<size_t>(i) * ByteSize(t)], &bits, ByteSize(t));
}

void Literal::SetF32(int64_t i, float v) {
  if (shape_.element_type() != ElementType::kF32) return SetDouble(i, v);
  std::memcpy(&data_[static_cast<size_t>(i) * 4], &v, 4);
}

void Literal::SetComplex(int64_t i, double re, double im) {
  ElementType t = shape_.element_type();
  if (t == ElementType::kC64) {
    float parts[2] = {static_cast<float>(re), static_cast<float>(im)};
    std::memcpy(&data_[static_cast<size_t>(i) * 8], parts, 8);
  } else if (t == ElementType::kC128) {
    double parts[2] = {re, im};
    std::memcpy(&data_[static_cast<size_t>(i) * 16], parts, 16);
  } else {
    SetDouble(i, re);
  }
}

void Literal::SetNan(int64_t i, bool negative, std::optional<uint64_t> payload) {
  ElementType t = shape_.element_type();
  if (!IsFloat(t)) return;
  NanInfo n = NanInfoOf(t);
  uint64_t bits = n.canonical;
  const FloatFormat* f = Info(t).float_format;
  bool signless = f && (f->nan == FloatFormat::Nan::kNegativeZero || f->nan == FloatFormat::Nan::kAllOnesNoSign);
  if (payload && *payload != 0 && n.mantissa_bits > 0) {
    uint64_t mant_mask = (uint64_t{1} << n.mantissa_bits) - 1;
    bits = (bits & ~mant_mask) | (*payload & mant_mask);
  }
  if (negative && !signless) bits |= uint64_t{1} << n.sign_bit;
  std::memcpy(&data_[static_cast<size_t>(i) * ByteSize(t)], &bits, ByteSize(t));
}

uint64_t Literal::GetBits(int64_t i) const {
  const ElementTypeInfo& info = Info(shape_.element_type());
  const uint8_t* at = data_.data() + static_cast<size_t>(i) * info.byte_size;
  // Fixed-size reads: the evaluator calls this once per element.
  switch (info.type_class == TypeClass::kComplex ? info.byte_size / 2 : info.byte_size) {
    case 0: return 0;
    case 1: return *at;
    case 2: { uint16_t v; std::memcpy(&v, at, 2); return v; }
    case 4: { uint32_t v; std::memcpy(&v, at, 4); return v; }
    default: { uint64_t v; std::memcpy(&v, at, 8); return v; }
  }
}

uint64_t Literal::GetUint(int64_t i) const { return GetBits(i); }

int64_t Literal::GetInt(int64_t i) const {
  ElementType t = shape_.element_type();
  if (IsFloat(t) || IsComplex(t)) return static_cast<int64_t>(GetDouble(i));
  uint64_t bits = GetBits(i);
  int width = ByteSize(t) * 8;
  if (IsSignedInt(t)) {
    int value_bits = Info(t).bit_width;
    if (value_bits < 64) {
      uint64_t sign = uint64_t{1} << (value_bits - 1);
      bits &= (sign << 1) - 1;
      return static_cast<int64_t>((bits ^ sign) - sign);
    }
  } else if (width < 64) {
    bits &= (uint64_t{1} << width) - 1;
  }
  return static_cast<int64_t>(bits);
}

double Literal::GetDouble(int64_t i) const {
  ElementType t = shape_.element_type();
  if (t == ElementType::kF32) {
    float v;
    std::memcpy(&v, data_.data() + static_cast<size_t>(i) * 4, 4);
    return v;
  }
  if (t == ElementType::kF64) {
    double v;
    std::memcpy(&v, data_.data() + static_cast<size_t>(i) * 8, 8);
    return v;
  }
  if (IsComplex(t)) return GetComplex(i).real();
  if (IsFloat(t)) return BitsToDouble(t, GetBits(i));
  if (IsUnsignedInt(t) || IsPred(t)) return static_cast<double>(GetBits(i));
  return static_cast<double>(GetInt(i));
}

std::complex<double> Literal::GetComplex(int64_t i) const {
  ElementType t = shape_.element_type();
  if (t == ElementType::kC64) {
    float parts[2];
    std::memcpy(parts, &data_[static_cast<size_t>(i) * 8], 8);
    return {parts[0], parts[1]};
  }
  if (t == ElementType::kC128) {
    double parts[2];
    std::memcpy(parts, &data_[static_cast<size_t>(i) * 16], 16);
    return {parts[0], parts[1]};
  }
  return {GetDouble(i), 0};
}

std::string Literal::ElementToString(int64_t i) const {
  ElementType t = shape_.element_type();
  switch (Info(t).type_class) {
    case TypeClass::kPred: return GetBits(i) & 1 ? "true" : "false";
    case TypeClass::kSigned: return std::to_string(GetInt(i));
    case TypeClass::kUnsigned: return std::to_string(GetUint(i));
    case TypeClass::kFloat: return FloatBitsToString(t, GetBits(i));
    case TypeClass::kComplex: {
      ElementType c = ComponentType(t);
      int half = ByteSize(t) / 2;
      uint64_t re = 0, im = 0;
      std::memcpy(&re, &data_[static_cast<size_t>(i) * ByteSize(t)], half);
      std::memcpy(&im, &data_[static_cast<size_t>(i) * ByteSize(t) + half], half);
      return "(" + FloatBitsToString(c, re) + ", " + FloatBitsToString(c, im) + ")";
    }
    default: return "?";
  }
}

std::string Literal::ToString() const {
  if (elided_) return "{...}";
  if (shape_.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i) out += ", ";
      out += elements_[i].ToString();
    }
    return out + ")";
  }
  if (!shape_.IsArray()) return "";
  if (shape_.rank() == 0) return ElementToString(0);
  std::string out;
  out.reserve(static_cast<size_t>(shape_.ElementCount()) * 4 + 16);
  AppendNested(out, 0, 0);
  return out;
}

void Literal::AppendNested(std::string& out, int dim, int64_t offset) const {
  // `{...}` per dimension; an empty dimension prints as `{}`.
  const auto& dims = shape_.dims();
  int64_t stride = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < dims.size(); ++d) stride *= dims[d];
  out += '{';
  for (int64_t i = 0; i < dims[dim]; ++i) {
    if (i) out += ", ";
    if (dim + 1 == static_cast<int>(dims.size())) {
      out += ElementToString(offset + i);
    } else {
      AppendNested(out, dim + 1, offset + i * stride);
    }
  }
  out += '}';
}

bool Literal::operator==(const Literal& other) const {
  return shape_.Compatible(other.shape_) && elided_ == other.elided_ && data_ == other.data_ &&
         elements_ == other.elements_;
}

}  // namespace anvil::hlo
