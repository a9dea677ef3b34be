// Kernels that move bits rather than values: bitcast-convert through pred
// (64 preds are one s64's bits; the plan aliases every bitcast-convert
// between whole-byte types of one size instead, plan_builder.cc), and
// get-dimension-size, whose answer the plan's static shapes already hold.
// Both write what the evaluator writes (hlo/evaluator_elementwise.cc,
// hlo/evaluator.cc).
#include <cstdint>
#include <cstring>

#include "hlo/attributes.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;

// A pred is one bit, stored as a byte of 0 or 1; the other types here take
// whole bytes, which, little-endian, hold their bits lowest first.
bool StreamsBits(ElementType t) {
  const hlo::ElementTypeInfo& info = hlo::Info(t);
  return t == ElementType::kPred ||
         (info.type_class != hlo::TypeClass::kComplex && info.bit_width % 8 == 0 && info.byte_size * 8 == info.bit_width);
}

}  // namespace

Kernel BitcastConvertKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.operands.size() != 1 || in.size() != 1 || !i.shape.IsArray() || !i.operands[0]->shape.IsArray()) return nullptr;
  const ElementType from = i.operands[0]->shape.element_type(), to = i.shape.element_type();
  if (!StreamsBits(from) || !StreamsBits(to)) return nullptr;
  const int64_t from_bits = hlo::Info(from).bit_width, to_bits = hlo::Info(to).bit_width;
  const int64_t bits = i.operands[0]->shape.ElementCount() * from_bits;
  if (bits != i.shape.ElementCount() * to_bits) return nullptr;  // the verifier's to refuse
  const Slot source = in[0];
  if (from == ElementType::kPred && to == ElementType::kPred) {
    return [=](const Frame& frame) {
      const uint8_t* x = static_cast<const uint8_t*>(frame.At(source));
      uint8_t* y = static_cast<uint8_t*>(frame.At(out));
      for (int64_t k = 0; k < bits; ++k) y[k] = x[k] & 1;
    };
  }
  if (from == ElementType::kPred) {
    // Each 8 preds, lowest first, are one byte of the result.
    return [=](const Frame& frame) {
      const uint8_t* x = static_cast<const uint8_t*>(frame.At(source));
      uint8_t* y = static_cast<uint8_t*>(frame.At(out));
      for (int64_t byte = 0; byte < bits / 8; ++byte) {
        uint8_t v = 0;
        for (int b = 0; b < 8; ++b) v |= static_cast<uint8_t>((x[byte * 8 + b] & 1) << b);
        y[byte] = v;
      }
    };
  }
  if (to == ElementType::kPred) {
    return [=](const Frame& frame) {
      const uint8_t* x = static_cast<const uint8_t*>(frame.At(source));
      uint8_t* y = static_cast<uint8_t*>(frame.At(out));
      for (int64_t k = 0; k < bits; ++k) y[k] = (x[k / 8] >> (k % 8)) & 1;
    };
  }
  // Whole bytes both sides: the same bytes in another shape.
  return [=](const Frame& frame) {
    if (bits) std::memcpy(frame.At(out), frame.At(source), static_cast<size_t>(bits / 8));
  };
}

Kernel GetDimensionSizeKernel(const hlo::Instruction& i, const Slot& out) {
  if (i.operands.size() != 1 || !i.operands[0]->shape.IsArray() || !i.shape.IsArray() || i.shape.rank() != 0) {
    return nullptr;
  }
  auto dims = hlo::IntListAttribute(i, "dimensions");
  if (!dims.ok() || dims->size() != 1 || (*dims)[0] < 0 || (*dims)[0] >= i.operands[0]->shape.rank()) return nullptr;
  const int64_t size = i.operands[0]->shape.dim(static_cast<int>((*dims)[0]));
  const ElementType t = i.shape.element_type();
  if (t != ElementType::kS32 && t != ElementType::kS64 && t != ElementType::kU32 && t != ElementType::kU64) {
    return nullptr;
  }
  const size_t bytes = static_cast<size_t>(hlo::Info(t).byte_size);
  return [=](const Frame& frame) {
    // Little-endian: the low bytes of the 64-bit size are its value in
    // any integer type that holds it.
    std::memcpy(frame.At(out), &size, bytes);
  };
}

}  // namespace anvil::cpu
