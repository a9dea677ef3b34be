// Literals: the values of constants. Array data is stored densely in
// row-major (logical) order, one `Info(type).byte_size` slot per element,
// little-endian, whatever the shape's layout says.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/shape.h"

namespace anvil::hlo {

// The most bytes the constants of one program text may hold together: more
// than any real program writes out (XLA elides large constants as `{...}`),
// and few enough that hostile shapes cannot make a parser allocate without
// bound. Fuzzing builds lower it so that each input stays fast under ASan.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
inline constexpr int64_t kMaxLiteralBytes = int64_t{1} << 26;
#else
inline constexpr int64_t kMaxLiteralBytes = int64_t{1} << 30;
#endif

class Literal {
 public:
  Literal() = default;
  // A zero-filled literal of `shape` (a tuple literal gets zero-filled elements).
  explicit Literal(Shape shape);
  // A constant written as `{...}` in HLO text: its values are not in the
  // program, and a runner fills them with deterministic data.
  static Literal Elided(Shape shape);

  const Shape& shape() const { return shape_; }
  bool elided() const { return elided_; }
  int64_t element_count() const { return shape_.IsArray() ? shape_.ElementCount() : 0; }
  const std::vector<uint8_t>& data() const { return data_; }
  std::vector<uint8_t>& mutable_data() { return data_; }
  const std::vector<Literal>& tuple_elements() const { return elements_; }
  std::vector<Literal>& mutable_tuple_elements() { return elements_; }

  // Copies element 0 into every other element (a splat written as one value).
  void BroadcastFirstElement();
  // True when the array holds more than one element and all have the same bits.
  bool IsSplat() const;

  // Element access by linear row-major index. Integers are sign- or
  // zero-extended; floats of every width go through double.
  void SetInt(int64_t i, int64_t v);
  void SetUint(int64_t i, uint64_t v);
  void SetBool(int64_t i, bool v) { SetUint(i, v ? 1 : 0); }
  void SetDouble(int64_t i, double v);
  // f32 set directly, so decimal text is rounded once, straight to f32.
  void SetF32(int64_t i, float v);
  void SetComplex(int64_t i, double re, double im);
  // A NaN with a sign and, where given, mantissa payload bits.
  void SetNan(int64_t i, bool negative, std::optional<uint64_t> payload);
  // The raw bits of element i (for complex, the real part's bits).
  uint64_t GetBits(int64_t i) const;
  int64_t GetInt(int64_t i) const;
  uint64_t GetUint(int64_t i) const;
  double GetDouble(int64_t i) const;
  std::complex<double> GetComplex(int64_t i) const;

  // HLO spelling of the value: `{{1, 2}, {3, 4}}`, `1.5`, `(1, 2)` for a
  // complex scalar, `{...}` when elided.
  std::string ToString() const;
  // One element in HLO spelling.
  std::string ElementToString(int64_t i) const;

  bool operator==(const Literal& other) const;

 private:
  void AppendNested(std::string& out, int dim, int64_t offset) const;

  Shape shape_;
  bool elided_ = false;
  std::vector<uint8_t> data_;
  std::vector<Literal> elements_;
};

// Text of one floating-point value of type `type` given its bits: the
// shortest decimal that converts back to the same bits, or `inf`, `-inf`,
// `nan`, `-nan`, `nan(0x...)` for a NaN with another payload.
std::string FloatBitsToString(ElementType type, uint64_t bits);

}  // namespace anvil::hlo
