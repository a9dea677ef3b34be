// One element of any array type, and an elementwise instruction bound to
// its element types, computed the way the reference evaluator computes it
// (hlo/scalar_functions for the arithmetic, the same loads, roundings and
// stores as a Literal's). A plugin that runs an op element by element
// through these matches the evaluator bit for bit, for every type the
// evaluator runs, sub-byte integers and narrow floats included; the
// evaluator's own convert and compare are these functions.
#pragma once

#include <cstdint>
#include <vector>

#include "hlo/element_type.h"
#include "hlo/ir.h"
#include "hlo/scalar_functions.h"
#include "hlo/status.h"

namespace anvil::hlo {

// An element as the evaluator computes with it.
struct Scalar {
  // Integers and pred: the value, signed types sign-extended to 64 bits and
  // unsigned ones zero-extended. Floats: the stored bits (for TOTALORDER).
  uint64_t bits = 0;
  double re = 0;  // floats: the value (exact in double); complex: the real part
  double im = 0;  // complex: the imaginary part
};

// Reads an element of type `t` stored at `element` (byte_size bytes).
Scalar LoadScalar(ElementType t, const void* element);
// Stores `v` as type `t`: floats rounded to nearest even, integers wrapped
// to their width (sub-byte signed ones sign-extended to their byte), pred
// as 0 or 1.
void StoreScalar(ElementType t, const Scalar& v, void* element);
// `v` stored as `t` and read back: the value an element of type t holds.
Scalar Canonical(ElementType t, const Scalar& v);

// convert of one element (XLA's choices where the spec leaves them: NaN to
// 0, out-of-range floats saturate, complex to real keeps the real part);
// the result is canonical in `to`. Unimplemented for types the evaluator
// does not convert.
StatusOr<Scalar> ConvertScalar(ElementType from, ElementType to, const Scalar& v);

// compare's answer from the ordering of two elements: a mask over
// ordering + 1 (-1 less, 0 equal, 1 greater, 2 unordered) for a direction.
StatusOr<unsigned> CompareDirectionMask(const std::string& direction);

// An elementwise instruction (unary and binary ops, compare, select,
// clamp, convert, is-finite, complex, real, imag, reduce-precision, copy)
// resolved once for its operand and result types. Apply takes one element
// per operand (canonical in its type) and gives the result's, canonical.
class ScalarOp {
 public:
  // Unimplemented when the instruction is not such an op or the evaluator
  // has no answer for it on these types.
  static StatusOr<ScalarOp> Of(const Instruction& i);

  Scalar Apply(const Scalar* operands) const;
  ElementType result_type() const { return result_; }
  int operand_count() const { return operand_count_; }

 private:
  enum class Kind : uint8_t {
    kCopy, kRealUnary, kRealBinary, kComplexUnary, kComplexBinary, kIntegerUnary, kIntegerBinary, kImagOfReal,
    kCompare, kSelect, kClamp, kConvert, kIsFinite, kMakeComplex, kRealPart, kImagPart, kComplexAbs,
    kReducePrecision,
  };
  // How compare and clamp order their operands' elements.
  enum class Order : uint8_t { kComplex, kTotal, kFloat, kSigned, kUnsigned };

  Kind kind_ = Kind::kCopy;
  Order order_ = Order::kUnsigned;
  Opcode opcode_ = Opcode::kCopy;
  ElementType operand_ = ElementType::kF32, result_ = ElementType::kF32;
  int operand_count_ = 1;
  unsigned compare_mask_ = 0;
  int exponent_bits_ = 0, mantissa_bits_ = 0;
  RealUnaryFunction real_unary_ = nullptr;
  RealBinaryFunction real_binary_ = nullptr;
  ComplexUnaryFunction complex_unary_ = nullptr;
  ComplexBinaryFunction complex_binary_ = nullptr;
};

}  // namespace anvil::hlo
