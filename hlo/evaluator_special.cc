// The chlo ops that reach the IR as named custom calls ("chlo.lgamma",
// ...), for the reference evaluator: functions of real arguments by
// hlo/special_functions.cc, next_after and mulhi here.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "hlo/attributes.h"
#include "hlo/evaluator_internal.h"
#include "hlo/scalar_functions.h"

namespace anvil::hlo::eval {
namespace {

// The next representable value after x toward y, on x's own format.
uint64_t NextAfterBits(const Literal& xs, int64_t k, double x, double y) {
  const ElementType t = xs.shape().element_type();
  const int width = Info(t).bit_width;
  const uint64_t sign = uint64_t{1} << (width - 1);
  uint64_t bits = xs.GetBits(k);
  if (x == 0) return (std::signbit(y) ? sign : 0) | 1;
  return ((x < y) == (x > 0)) ? bits + 1 : bits - 1;
}

}  // namespace

StatusOr<Literal> EvalChlo(const Instruction& i, const std::string& op, const std::vector<const Literal*>& operands) {
  if (!i.shape.IsArray() || operands.empty()) return Unimplemented("the evaluator does not run chlo." + op);
  Literal out(Shape(i.shape.element_type(), i.shape.dims()));
  const Literal& a = *operands.at(0);
  const ElementType t = a.shape().element_type();
  const ChloReal real = ChloRealOf(op);
  if (real.fn && IsFloat(t)) {
    const ChloRealFunction fn = real.fn;
    const size_t arity = real.arity;
    if (operands.size() < arity) return InvalidArgument("chlo." + op + " takes " + std::to_string(arity) + " operands");
    auto arg = [&](size_t n, int64_t k) { return n < arity ? operands[n]->GetDouble(k) : 0.0; };
    for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) out.SetDouble(k, fn(arg(0, k), arg(1, k), arg(2, k)));
    return out;
  }
  if (op == "next_after" && IsFloat(t) && operands.size() == 2) {
    for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
      double x = a.GetDouble(k), y = operands[1]->GetDouble(k);
      if (std::isnan(x) || std::isnan(y)) {
        out.SetNan(k, false, std::nullopt);
      } else if (x == y) {
        CopyElement(*operands[1], k, out, k);
      } else {
        uint64_t bits = NextAfterBits(a, k, x, y);
        std::memcpy(out.mutable_data().data() + k * Info(t).byte_size, &bits, Info(t).byte_size);
      }
    }
    return out;
  }
  if (op == "mulhi" && IsInteger(t) && operands.size() == 2) {
    const int width = Info(t).bit_width;
    for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
      __int128 product = IsSignedInt(t) ? static_cast<__int128>(a.GetInt(k)) * operands[1]->GetInt(k)
                                        : static_cast<__int128>(static_cast<unsigned __int128>(BitsAt(a, k)) *
                                                                BitsAt(*operands[1], k));
      SetBits(out, k, static_cast<uint64_t>(product >> width));
    }
    return out;
  }
  return Unimplemented("the evaluator does not run chlo." + op + " on " + std::string(HloName(t)));
}

}  // namespace anvil::hlo::eval
