#include "hlo/opcode.h"

#include <array>

namespace anvil::hlo {
namespace {

constexpr std::string_view kNames[] = {
#define ANVIL_OPCODE_NAME(e, s) s,
    ANVIL_HLO_OPCODES(ANVIL_OPCODE_NAME)
#undef ANVIL_OPCODE_NAME
};

}  // namespace

std::string_view OpcodeName(Opcode op) { return kNames[static_cast<size_t>(op)]; }

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (kNames[i] == name) return static_cast<Opcode>(i);
  }
  return std::nullopt;
}

bool IsElementwiseUnary(Opcode op) {
  switch (op) {
    case Opcode::kAbs: case Opcode::kAcos: case Opcode::kAcosh: case Opcode::kAsin:
    case Opcode::kAsinh: case Opcode::kAtan: case Opcode::kAtanh: case Opcode::kCbrt:
    case Opcode::kCeil: case Opcode::kClz: case Opcode::kCopy: case Opcode::kCos:
    case Opcode::kCosh: case Opcode::kErf: case Opcode::kExp: case Opcode::kExpm1:
    case Opcode::kFloor: case Opcode::kImag: case Opcode::kIsFinite: case Opcode::kLog:
    case Opcode::kLog1p: case Opcode::kLogistic: case Opcode::kNegate: case Opcode::kNot:
    case Opcode::kPopulationCount: case Opcode::kReal: case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven: case Opcode::kRsqrt: case Opcode::kSign: case Opcode::kSin:
    case Opcode::kSinh: case Opcode::kSqrt: case Opcode::kTan: case Opcode::kTanh:
    case Opcode::kReducePrecision:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(Opcode op) {
  switch (op) {
    case Opcode::kAdd: case Opcode::kAnd: case Opcode::kAtan2: case Opcode::kComplex:
    case Opcode::kDivide: case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kMultiply:
    case Opcode::kOr: case Opcode::kPower: case Opcode::kRemainder: case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical: case Opcode::kSubtract:
    case Opcode::kXor: case Opcode::kCompare: case Opcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

bool IsAsyncWrapper(Opcode op) {
  return op == Opcode::kAsyncStart || op == Opcode::kAsyncUpdate || op == Opcode::kAsyncDone;
}

}  // namespace anvil::hlo
