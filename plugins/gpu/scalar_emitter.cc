#include "plugins/gpu/scalar_emitter.h"

#include <cctype>
#include <map>

#include "hlo/attributes.h"
#include "plugins/gpu/element_types.h"

namespace anvil::gpu {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

namespace {

const char* kLibrary =
#include "plugins/gpu/library_helpers.inc"
    ;
// The high 64 bits of a 128-bit product, from 32-bit halves.
const char* kMulhi64 = R"GLSL(
uint64_t xmulhi_u64(uint64_t a, uint64_t b) {
  uint64_t al = a & 0xfffffffful, ah = a >> 32, bl = b & 0xfffffffful, bh = b >> 32;
  uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  uint64_t mid = (ll >> 32) + (lh & 0xfffffffful) + (hl & 0xfffffffful);
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}
int64_t xmulhi_s64(int64_t a, int64_t b) {
  uint64_t hi = xmulhi_u64(uint64_t(a), uint64_t(b));
  if (a < 0l) hi -= uint64_t(b);
  if (b < 0l) hi -= uint64_t(a);
  return int64_t(hi);
}
)GLSL";
const char* kMath =
#include "plugins/gpu/library_math.inc"
    ;

// The element width XLA's integer ops wrap and shift at.
int Width(ElementType t) { return hlo::Info(t).bit_width; }

bool Is64(ElementType t) { return t == ElementType::kS64 || t == ElementType::kU64; }

std::string Call(const std::string& f, const std::vector<std::string>& args) {
  std::string s = f + "(";
  for (size_t k = 0; k < args.size(); ++k) s += (k ? ", " : "") + args[k];
  return s + ")";
}

// An elementary function at the register type, computed in double by the
// generator's own functions (library_math.inc: GLSL has none for double,
// and drivers' single-precision ones may be several ULP off); on a device
// without double, the language's single-precision builtin.
std::string Transcendental(const std::string& reg, const std::string& f, const std::vector<std::string>& args,
                           KernelLibrary& lib) {
  std::vector<std::string> converted;
  if (!lib.float64()) {
    for (const std::string& a : args) converted.push_back("float(" + a + ")");
    return reg + "(" + Call(f, converted) + ")";
  }
  lib.Need("MATH");
  for (const std::string& a : args) converted.push_back("double(" + a + ")");
  return reg + "(" + Call("d" + f, converted) + ")";
}

std::string CompareDirection(const Instruction& i) { return hlo::StringAttribute(i, "direction"); }

hlo::StatusOr<std::string> CompareExpr(const Instruction& i, const std::vector<std::string>& v, KernelLibrary&) {
  const ElementType a = i.operands[0]->shape.element_type();
  const std::string dir = CompareDirection(i);
  static const std::pair<const char*, const char*> kOps[] = {{"EQ", "=="}, {"NE", "!="}, {"LT", "<"},
                                                             {"LE", "<="}, {"GT", ">"},  {"GE", ">="}};
  std::string op;
  for (const auto& [name, spelling] : kOps) {
    if (dir == name) op = spelling;
  }
  if (op.empty()) return hlo::InvalidArgument("compare %" + i.name + " has no direction");
  if (hlo::IsComplex(a)) {
    if (dir == "EQ") return "all(equal(" + v[0] + ", " + v[1] + "))";
    if (dir == "NE") return "any(notEqual(" + v[0] + ", " + v[1] + "))";
    return hlo::Unimplemented("ordered compare of complex values");
  }
  std::string x = v[0], y = v[1];
  if (hlo::IsPred(a)) {
    x = "uint(" + x + ")";
    y = "uint(" + y + ")";
  } else if (hlo::IsFloat(a) && hlo::StringAttribute(i, "type") == "TOTALORDER") {
    x = TotalOrderKey(a, x);
    y = TotalOrderKey(a, y);
  }
  return "(" + x + " " + op + " " + y + ")";
}

hlo::StatusOr<std::string> FloatUnary(Opcode op, const std::string& T, const std::string& x, KernelLibrary& lib) {
  auto need = [&](const char* family) {
    lib.Need("MATH");
    lib.Need(std::string(family) + "(" + T + ")");
  };
  switch (op) {
    case Opcode::kAbs: return "abs(" + x + ")";
    case Opcode::kNegate: return "(-" + x + ")";
    case Opcode::kCopy: return x;
    case Opcode::kSqrt: return "sqrt(" + x + ")";
    case Opcode::kRsqrt: return "(" + T + "(1) / sqrt(" + x + "))";
    case Opcode::kCbrt: need("DEF_XCBRT"); return "xcbrt(" + x + ")";
    case Opcode::kExp: return Transcendental(T, "exp", {x}, lib);
    case Opcode::kExpm1: need("DEF_XEXPM1"); return "xexpm1(" + x + ")";
    case Opcode::kLog: return Transcendental(T, "log", {x}, lib);
    case Opcode::kLog1p: need("DEF_XLOG1P"); return "xlog1p(" + x + ")";
    case Opcode::kLogistic: need("DEF_XLOGISTIC"); return "xlogistic(" + x + ")";
    case Opcode::kSin: return Transcendental(T, "sin", {x}, lib);
    case Opcode::kCos: return Transcendental(T, "cos", {x}, lib);
    case Opcode::kTan: return Transcendental(T, "tan", {x}, lib);
    case Opcode::kTanh: return Transcendental(T, "tanh", {x}, lib);
    case Opcode::kSinh: return Transcendental(T, "sinh", {x}, lib);
    case Opcode::kCosh: return Transcendental(T, "cosh", {x}, lib);
    case Opcode::kAsin: return Transcendental(T, "asin", {x}, lib);
    case Opcode::kAcos: return Transcendental(T, "acos", {x}, lib);
    case Opcode::kAtan: return Transcendental(T, "atan", {x}, lib);
    case Opcode::kAsinh: return Transcendental(T, "asinh", {x}, lib);
    case Opcode::kAcosh: return Transcendental(T, "acosh", {x}, lib);
    case Opcode::kAtanh: return Transcendental(T, "atanh", {x}, lib);
    case Opcode::kErf: need("DEF_XERF"); return "xerf(" + x + ")";
    case Opcode::kFloor: return "floor(" + x + ")";
    case Opcode::kCeil: return "ceil(" + x + ")";
    case Opcode::kRoundNearestEven: return "roundEven(" + x + ")";
    case Opcode::kRoundNearestAfz: need("DEF_XRAFZ"); return "xrafz(" + x + ")";
    case Opcode::kSign: need("DEF_XSIGN"); return "xsign(" + x + ")";
    case Opcode::kIsFinite: return "!(isnan(" + x + ") || isinf(" + x + "))";
    default: return hlo::Unimplemented("");
  }
}

hlo::StatusOr<std::string> FloatBinary(Opcode op, const std::string& T, const std::string& x, const std::string& y,
                                       KernelLibrary& lib) {
  auto need = [&](const char* family) {
    lib.Need("MATH");
    lib.Need(std::string(family) + "(" + T + ")");
  };
  switch (op) {
    case Opcode::kAdd: return "(" + x + " + " + y + ")";
    case Opcode::kSubtract: return "(" + x + " - " + y + ")";
    case Opcode::kMultiply: return "(" + x + " * " + y + ")";
    case Opcode::kDivide: return "(" + x + " / " + y + ")";
    case Opcode::kMaximum: need("DEF_XMAX"); return "xmax(" + x + ", " + y + ")";
    case Opcode::kMinimum: need("DEF_XMIN"); return "xmin(" + x + ", " + y + ")";
    case Opcode::kRemainder: need("DEF_XFMOD"); return "xfmod(" + x + ", " + y + ")";
    case Opcode::kPower: need("DEF_XFMOD"); need("DEF_XPOW"); return "xpow(" + x + ", " + y + ")";
    case Opcode::kAtan2: return Transcendental(T, "atan2", {x, y}, lib);
    default: return hlo::Unimplemented("");
  }
}

hlo::StatusOr<std::string> ComplexOp(Opcode op, ElementType t, const std::vector<std::string>& v, KernelLibrary& lib) {
  // c64's functions beyond arithmetic compute in double and round once.
  const bool arithmetic = op == Opcode::kAdd || op == Opcode::kSubtract || op == Opcode::kMultiply ||
                          op == Opcode::kDivide || op == Opcode::kNegate || op == Opcode::kCopy ||
                          op == Opcode::kMaximum || op == Opcode::kMinimum;
  if (t == ElementType::kC64 && !arithmetic && lib.float64()) {
    std::vector<std::string> wide;
    for (const std::string& x : v) wide.push_back("dvec2(" + x + ")");
    ANVIL_ASSIGN_OR_RETURN(std::string e, ComplexOp(op, ElementType::kC128, wide, lib));
    return "vec2(" + e + ")";
  }
  const std::string C = RegisterType(t), R = C == "vec2" ? "float" : "double";
  lib.Need("MATH");
  lib.Need("DEF_COMPLEX(" + C + ", " + R + ")");
  switch (op) {
    case Opcode::kAdd: return "(" + v[0] + " + " + v[1] + ")";
    case Opcode::kSubtract: return "(" + v[0] + " - " + v[1] + ")";
    case Opcode::kMultiply: return "cmul(" + v[0] + ", " + v[1] + ")";
    case Opcode::kDivide: return "cdiv(" + v[0] + ", " + v[1] + ")";
    case Opcode::kPower: return "cpow(" + v[0] + ", " + v[1] + ")";
    case Opcode::kNegate: return "(-" + v[0] + ")";
    case Opcode::kCopy: return v[0];
    case Opcode::kMaximum: return "cmax(" + v[0] + ", " + v[1] + ")";
    case Opcode::kMinimum: return "cmin(" + v[0] + ", " + v[1] + ")";
    case Opcode::kExp: return "cexp(" + v[0] + ")";
    case Opcode::kExpm1: return "cexpm1(" + v[0] + ")";
    case Opcode::kLog: return "clog(" + v[0] + ")";
    case Opcode::kLog1p: return "clog1p(" + v[0] + ")";
    case Opcode::kSqrt: return "csqrt(" + v[0] + ")";
    case Opcode::kRsqrt: return "crsqrt(" + v[0] + ")";
    case Opcode::kSin: return "csin(" + v[0] + ")";
    case Opcode::kCos: return "ccos(" + v[0] + ")";
    case Opcode::kTan: return "ctan(" + v[0] + ")";
    case Opcode::kTanh: return "ctanh(" + v[0] + ")";
    case Opcode::kSign: return "csign(" + v[0] + ")";
    case Opcode::kAsinh: return "casinh(" + v[0] + ")";
    case Opcode::kAsin: return "casin(" + v[0] + ")";
    case Opcode::kAcos: return "cacos(" + v[0] + ")";
    case Opcode::kAtanh: return "catanh(" + v[0] + ")";
    case Opcode::kAtan: return "catan(" + v[0] + ")";
    case Opcode::kCosh: return "ccosh(" + v[0] + ")";
    case Opcode::kSinh: return "csinh(" + v[0] + ")";
    case Opcode::kAcosh: return "cacosh(" + v[0] + ")";
    case Opcode::kLogistic: return "clogistic(" + v[0] + ")";
    case Opcode::kAtan2: return "catan2(" + v[0] + ", " + v[1] + ")";
    case Opcode::kCbrt: return "ccbrt(" + v[0] + ")";
    default: return hlo::Unimplemented("");
  }
}

hlo::StatusOr<std::string> IntegerOp(const Instruction& i, ElementType t, const std::vector<std::string>& v,
                                     KernelLibrary& lib) {
  const std::string T = RegisterType(t);
  const std::string U = Is64(t) ? "uint64_t" : "uint";
  const bool is_signed = hlo::IsSignedInt(t);
  const std::string w = std::to_string(Width(t)) + "u";
  auto need = [&](const std::string& family) { lib.Need(family + "(" + T + ")"); };
  auto masked = [&](const std::string& x) {
    return Width(t) >= 32 ? U + "(" + x + ")" : "(" + U + "(" + x + ") & " + std::to_string((1u << Width(t)) - 1) + "u)";
  };
  switch (i.opcode) {
    case Opcode::kAdd: return "(" + v[0] + " + " + v[1] + ")";
    case Opcode::kSubtract: return "(" + v[0] + " - " + v[1] + ")";
    case Opcode::kMultiply: return "(" + v[0] + " * " + v[1] + ")";
    case Opcode::kDivide: need(is_signed ? "DEF_XDIV_S" : "DEF_XDIV_U"); return "xdiv(" + v[0] + ", " + v[1] + ")";
    case Opcode::kRemainder: need(is_signed ? "DEF_XREM_S" : "DEF_XREM_U"); return "xrem(" + v[0] + ", " + v[1] + ")";
    case Opcode::kMaximum: return "max(" + v[0] + ", " + v[1] + ")";
    case Opcode::kMinimum: return "min(" + v[0] + ", " + v[1] + ")";
    case Opcode::kAnd: return "(" + v[0] + " & " + v[1] + ")";
    case Opcode::kOr: return "(" + v[0] + " | " + v[1] + ")";
    case Opcode::kXor: return "(" + v[0] + " ^ " + v[1] + ")";
    case Opcode::kNot: return "(~" + v[0] + ")";
    case Opcode::kNegate: return "(-" + v[0] + ")";
    case Opcode::kCopy: return v[0];
    case Opcode::kAbs: return is_signed ? "abs(" + v[0] + ")" : v[0];
    case Opcode::kSign:
      return is_signed ? "sign(" + v[0] + ")" : "(" + v[0] + " != " + T + "(0) ? " + T + "(1) : " + T + "(0))";
    case Opcode::kPower: need(is_signed ? "DEF_XIPOW" : "DEF_XUPOW"); return "xipow(" + v[0] + ", " + v[1] + ")";
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical: {
      lib.Need("DEF_XSHIFT(" + T + ", " + U + ", " + (Is64(t) ? "int64_t, 64u" : "int, 32u") + ")");
      const char* f = i.opcode == Opcode::kShiftLeft ? "xshl" : i.opcode == Opcode::kShiftRightLogical ? "xshrl" : "xshra";
      return std::string(f) + "(" + v[0] + ", " + v[1] + ", " + w + ")";
    }
    case Opcode::kPopulationCount: return T + "(xpopcnt(" + masked(v[0]) + "))";
    case Opcode::kClz: return T + "(xclz(" + masked(v[0]) + ", " + w + "))";
    default: return hlo::Unimplemented("");
  }
}

}  // namespace

std::string KernelLibrary::Text() const {
  std::string text = kLibrary;
  if (needed_.count("MATH")) text += kMath;
  if (needed_.count("MULHI64")) text += kMulhi64;
  for (const std::string& n : needed_) {
    if (n != "MATH" && n != "MULHI64") text += n + "\n";
  }
  return text;
}

hlo::StatusOr<std::string> ElementwiseExpr(const Instruction& i, const std::vector<std::string>& v, KernelLibrary& lib) {
  const ElementType t = i.shape.element_type();
  const ElementType a = i.operands.empty() ? t : i.operands[0]->shape.element_type();
  auto unimplemented = [&] {
    return hlo::Unimplemented(lib.dialect().Compiler() + " has no kernel for " + std::string(i.OpcodeSpelling()) + " on " +
                              std::string(hlo::HloName(a)) + " yet");
  };
  hlo::StatusOr<std::string> e = hlo::Unimplemented("");
  switch (i.opcode) {
    case Opcode::kCompare: return CompareExpr(i, v, lib);
    case Opcode::kSelect: return "(" + v[0] + " ? " + v[1] + " : " + v[2] + ")";
    case Opcode::kClamp: {
      // clamp(lo, x, hi) = min(max(x, lo), hi) with the op's own max and min.
      Instruction max_i, min_i;
      max_i.opcode = Opcode::kMaximum;
      min_i.opcode = Opcode::kMinimum;
      max_i.shape = min_i.shape = hlo::Shape::Scalar(t);
      max_i.operands = min_i.operands = {i.operands[1], i.operands[1]};
      ANVIL_ASSIGN_OR_RETURN(std::string lo, ElementwiseExpr(max_i, {v[1], v[0]}, lib));
      return ElementwiseExpr(min_i, {lo, v[2]}, lib);
    }
    case Opcode::kConvert: return ConvertExpr(a, t, v[0], lib);
    case Opcode::kBitcastConvert:
      if (a == t) return v[0];
      if (a == ElementType::kC128 || t == ElementType::kC128 || hlo::Info(a).bit_width != hlo::Info(t).bit_width) {
        return hlo::Unimplemented("bitcast-convert between widths (" + std::string(hlo::HloName(a)) + " to " +
                                  std::string(hlo::HloName(t)) + ")");
      }
      return FromBits(t, BitsOf(a, v[0]));
    case Opcode::kReal:
      return hlo::IsComplex(a) ? v[0] + ".x" : v[0];
    case Opcode::kImag:
      return hlo::IsComplex(a) ? v[0] + ".y" : ZeroExpr(t);
    case Opcode::kComplex: return RegisterType(t) + "(" + v[0] + ", " + v[1] + ")";
    case Opcode::kAbs:
      if (hlo::IsComplex(a)) {
        lib.Need("MATH");
        lib.Need("DEF_COMPLEX(" + RegisterType(a) + ", " + RegisterType(t) + ")");
        return "cabs(" + v[0] + ")";
      }
      break;
    case Opcode::kReducePrecision: {
      ANVIL_ASSIGN_OR_RETURN(int64_t ebits, hlo::IntAttribute(i, "exponent_bits", std::nullopt));
      ANVIL_ASSIGN_OR_RETURN(int64_t mbits, hlo::IntAttribute(i, "mantissa_bits", std::nullopt));
      if (t == ElementType::kF64) {
        lib.Need("DEF_XREDUCEPREC64(double)");
        return "xreduceprec64(" + v[0] + ", " + std::to_string(ebits) + ", " + std::to_string(mbits) + ")";
      }
      lib.Need("DEF_XREDUCEPREC(float)");
      return Normalize(t, "xreduceprec(" + v[0] + ", " + std::to_string(ebits) + ", " + std::to_string(mbits) + ")");
    }
    default: break;
  }
  if (hlo::IsPred(a)) {
    switch (i.opcode) {
      case Opcode::kAnd: case Opcode::kMinimum: case Opcode::kMultiply: return "(" + v[0] + " && " + v[1] + ")";
      case Opcode::kOr: case Opcode::kMaximum: case Opcode::kAdd: return "(" + v[0] + " || " + v[1] + ")";
      case Opcode::kXor: return "(" + v[0] + " ^^ " + v[1] + ")";
      case Opcode::kNot: return "(!" + v[0] + ")";
      case Opcode::kCopy: return v[0];
      default: return unimplemented();
    }
  }
  if (hlo::IsComplex(a)) {
    e = ComplexOp(i.opcode, a, v, lib);
  } else if (hlo::IsFloat(a)) {
    const std::string T = RegisterType(a);
    if (i.opcode == Opcode::kIsFinite) {
      e = FloatUnary(i.opcode, T, v[0], lib);
      if (e.ok()) return e;
    }
    e = v.size() == 1 ? FloatUnary(i.opcode, T, v[0], lib) : FloatBinary(i.opcode, T, v[0], v[1], lib);
  } else if (hlo::IsInteger(a)) {
    e = IntegerOp(i, a, v, lib);
  }
  if (!e.ok()) return unimplemented();
  return Normalize(t, *e);
}

hlo::StatusOr<std::string> CustomCallExpr(const Instruction& i, const std::string& function,
                                          const std::vector<std::string>& v, KernelLibrary& lib) {
  const ElementType t = i.shape.element_type();
  auto refuse = [&] {
    return hlo::Unimplemented(lib.dialect().Compiler() + " has no kernel for " + function + " on " + std::string(hlo::HloName(t)));
  };
  static const std::map<std::string, Opcode> kOpcodes = {
      {"acos", Opcode::kAcos}, {"acosh", Opcode::kAcosh}, {"asin", Opcode::kAsin}, {"asinh", Opcode::kAsinh},
      {"atan", Opcode::kAtan}, {"atanh", Opcode::kAtanh}, {"cosh", Opcode::kCosh}, {"sinh", Opcode::kSinh},
      {"erf", Opcode::kErf},   {"tan", Opcode::kTan}};
  if (auto op = kOpcodes.find(function); op != kOpcodes.end() && v.size() == 1) {
    Instruction as_op = i;
    as_op.opcode = op->second;
    return ElementwiseExpr(as_op, v, lib);
  }
  if (function == "mulhi" && hlo::IsInteger(t) && v.size() == 2) {
    const int w = Width(t);
    if (w <= 32) {
      const std::string wide = hlo::IsSignedInt(t) ? "int64_t" : "uint64_t";
      return Normalize(t, RegisterType(t) + "((" + wide + "(" + v[0] + ") * " + wide + "(" + v[1] + ")) >> " +
                              std::to_string(w) + ")");
    }
    lib.Need("MULHI64");
    return std::string(hlo::IsSignedInt(t) ? "xmulhi_s64" : "xmulhi_u64") + "(" + v[0] + ", " + v[1] + ")";
  }
  if (function == "next_after" && hlo::IsFloat(t) && v.size() == 2) {
    const int w = Width(t);
    const std::string B = w == 64 ? "uint64_t" : "uint";
    const std::string sign = w == 64 ? "0x8000000000000000ul" : std::to_string(1u << (w - 1)) + "u";
    const std::string x = v[0], y = v[1], bits = BitsOf(t, x);
    const std::string one = B + "(1)";
    return "((isnan(" + x + ") || isnan(" + y + ")) ? " + RegisterType(t) + "(0.0 / 0.0) : (" + x + " == " + y + ") ? " + y +
           " : (" + x + " == " + RegisterType(t) + "(0)) ? " + FromBits(t, "((" + y + " < " + RegisterType(t) + "(0) ? " + sign +
           " : " + B + "(0)) | " + one + ")") + " : " +
           FromBits(t, "(((" + x + " < " + y + ") == (" + x + " > " + RegisterType(t) + "(0))) ? " + bits + " + " + one + " : " +
                           bits + " - " + one + ")") + ")";
  }
  if (!hlo::IsFloat(t) || !lib.float64()) return refuse();
  // name -> (function in library_math.inc, arity)
  static const std::map<std::string, std::pair<std::string, size_t>> kDouble = {
      {"lgamma", {"dlgamma", 1}},          {"digamma", {"ddigamma", 1}},
      {"erf_inv", {"derf_inv", 1}},        {"erfc", {"derfc", 1}},
      {"bessel_i1e", {"dbessel_i1e", 1}},  {"igamma", {"digamma_lower", 2}},
      {"igamma_grad_a", {"digamma_grad_a", 2}}, {"random_gamma_grad", {"drandom_gamma_grad", 2}},
      {"regularized_incomplete_beta", {"dreg_inc_beta", 3}}};
  auto f = kDouble.find(function);
  if (f == kDouble.end() || v.size() != f->second.second) return refuse();
  lib.Need("MATH");
  std::vector<std::string> args;
  for (const std::string& x : v) args.push_back("double(" + x + ")");
  return ConvertExpr(ElementType::kF64, t, Call(f->second.first, args), lib);
}

std::string ConvertExpr(ElementType from, ElementType to, const std::string& v, KernelLibrary& lib) {
  const std::string T = RegisterType(to);
  if (from == to) return v;
  if (hlo::IsPred(to)) {
    if (hlo::IsComplex(from)) return "(" + v + ".x != 0)";
    return "(" + v + " != " + ZeroExpr(from) + ")";
  }
  if (hlo::IsPred(from)) {
    if (hlo::IsComplex(to)) return T + "(" + v + " ? 1 : 0, 0)";
    return "(" + v + " ? " + T + "(1) : " + T + "(0))";
  }
  if (hlo::IsComplex(from)) {
    if (hlo::IsComplex(to)) return T + "(" + v + ")";
    return ConvertExpr(hlo::ComponentType(from), to, v + ".x", lib);
  }
  if (hlo::IsComplex(to)) return T + "(" + ConvertExpr(from, hlo::ComponentType(to), v, lib) + ", 0)";
  if (hlo::IsFloat(from) && hlo::IsInteger(to)) {
    const std::string w = std::to_string(Width(to)) + "u";
    const std::string wide = hlo::IsSignedInt(to) ? "xf2s(double(" + v + "), " + w + ")" : "xf2u(double(" + v + "), " + w + ")";
    return Normalize(to, T + "(" + wide + ")");
  }
  if (hlo::IsInteger(from) && hlo::IsInteger(to)) {
    // Through 64 bits so that widening sign-extends signed sources.
    if (Is64(to) || Is64(from)) {
      const std::string wide = hlo::IsSignedInt(from) ? "int64_t(" + v + ")" : "uint64_t(" + v + ")";
      return Normalize(to, T + "(" + wide + ")");
    }
    return Normalize(to, T + "(" + v + ")");
  }
  // To a float: from an integer (rounded once to f32 or f64) or a float.
  if (to == ElementType::kF64) return "double(" + v + ")";
  if (to == ElementType::kF32) return "float(" + v + ")";
  // A double narrowed to a float type below f32 rounds once, as the
  // evaluator's EncodeFloat: to odd in float first, then to the type.
  if (from == ElementType::kF64) {
    lib.Need("DEF_ROUND_ODD(double)");
    return Normalize(to, "round_odd(" + v + ")");
  }
  return Normalize(to, "float(" + v + ")");
}

std::string BitsOf(ElementType t, const std::string& v) {
  switch (t) {
    case ElementType::kC64:
      return "(uint64_t(floatBitsToUint(" + v + ".x)) | (uint64_t(floatBitsToUint(" + v + ".y)) << 32))";
    case ElementType::kF32: return "floatBitsToUint(" + v + ")";
    case ElementType::kF16: return "uint(float16BitsToUint16(float16_t(" + v + ")))";
    case ElementType::kBF16: return "(floatBitsToUint(" + v + ") >> 16)";
    case ElementType::kF64: return "doubleBitsToUint64(" + v + ")";
    case ElementType::kS64: case ElementType::kU64: return "uint64_t(" + v + ")";
    case ElementType::kPred: return "(" + v + " ? 1u : 0u)";
    default: {
      if (IsNarrowFloat(t)) return std::string(hlo::HloName(t)) + "_encode(" + v + ")";
      const int w = Width(t);
      return w >= 32 ? "uint(" + v + ")" : "(uint(" + v + ") & " + std::to_string((1u << w) - 1) + "u)";
    }
  }
}

std::string TotalOrderKey(ElementType t, const std::string& v) {
  if (!IsNarrowFloat(t)) return "xtotal(" + v + ")";
  return "xtotal_bits(" + BitsOf(t, v) + ", " + std::to_string(hlo::Info(t).bit_width) + "u)";
}

std::string FromBits(ElementType t, const std::string& b) {
  switch (t) {
    case ElementType::kC64:
      return "vec2(uintBitsToFloat(uint(" + b + ")), uintBitsToFloat(uint(uint64_t(" + b + ") >> 32)))";
    case ElementType::kF32: return "uintBitsToFloat(uint(" + b + "))";
    case ElementType::kF16: return "float(uint16BitsToFloat16(uint16_t(" + b + ")))";
    case ElementType::kBF16: return "uintBitsToFloat(uint(" + b + ") << 16)";
    case ElementType::kF64: return "uint64BitsToDouble(uint64_t(" + b + "))";
    case ElementType::kPred: return "(" + b + " != 0u)";
    default:
      if (IsNarrowFloat(t)) return std::string(hlo::HloName(t)) + "_decode(uint(" + b + "))";
      return Normalize(t, RegisterType(t) + "(" + b + ")");
  }
}

bool IsAddition(const hlo::Computation& c) {
  const Instruction* r = c.root;
  return r && r->opcode == Opcode::kAdd && c.parameters.size() == 2 && r->operands.size() == 2 &&
         r->operands[0]->opcode == Opcode::kParameter && r->operands[1]->opcode == Opcode::kParameter &&
         r->operands[0] != r->operands[1];
}

hlo::StatusOr<std::string> EmitScalarComputation(const hlo::Computation& c, KernelLibrary& lib, std::string& functions,
                                                 std::set<std::string>& emitted) {
  std::string name = "fn_";
  for (char ch : c.name) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  if (emitted.count(name)) return name;
  std::string body;
  std::string signature = "void " + name + "(";
  for (size_t p = 0; p < c.parameters.size(); ++p) {
    const hlo::Shape& s = c.parameters[p]->shape;
    if (!s.IsArray() || s.ElementCount() != 1) {
      return hlo::Unimplemented("a combiner computation %" + c.name + " with a non-scalar parameter");
    }
    signature += (p ? ", " : "") + lib.dialect().InParameter(RegisterType(s.element_type()), "p" + std::to_string(p));
  }
  std::vector<const Instruction*> results;
  if (c.root->opcode == Opcode::kTuple) {
    results.assign(c.root->operands.begin(), c.root->operands.end());
  } else {
    results.push_back(c.root);
  }
  for (size_t r = 0; r < results.size(); ++r) {
    signature += (c.parameters.empty() && r == 0 ? "" : ", ") +
                 lib.dialect().OutParameter(RegisterType(results[r]->shape.element_type()), "r" + std::to_string(r));
  }
  signature += ")";
  std::map<const Instruction*, std::string> value;
  int counter = 0;
  for (const auto& owned : c.instructions) {
    const Instruction& i = *owned;
    const std::string var = "v" + std::to_string(counter++);
    if (i.opcode == Opcode::kTuple) continue;
    if (!i.shape.IsArray() || i.shape.ElementCount() != 1) {
      return hlo::Unimplemented("%" + i.name + " in combiner %" + c.name + " is not a scalar");
    }
    const std::string T = RegisterType(i.shape.element_type());
    std::string expr;
    if (i.opcode == Opcode::kParameter) {
      expr = "p" + std::to_string(i.parameter_number);
    } else if (i.opcode == Opcode::kConstant) {
      if (!i.literal || i.literal->elided()) return hlo::Unimplemented("an elided constant in %" + c.name);
      expr = LiteralExpr(*i.literal, 0);
    } else if (i.opcode == Opcode::kBroadcast || i.opcode == Opcode::kReshape || i.opcode == Opcode::kBitcast) {
      expr = value.at(i.operands[0]);
    } else if (i.opcode == Opcode::kCall && i.called_computations.size() == 1) {
      ANVIL_ASSIGN_OR_RETURN(std::string callee, EmitScalarComputation(*i.called_computations[0], lib, functions, emitted));
      if (i.called_computations[0]->root->opcode == Opcode::kTuple) {
        return hlo::Unimplemented("a call returning a tuple inside combiner %" + c.name);
      }
      std::vector<std::string> args;
      for (const Instruction* o : i.operands) args.push_back(value.at(o));
      args.push_back(var);
      body += "  " + T + " " + var + ";\n  " + Call(callee, args) + ";\n";
      value[&i] = var;
      continue;
    } else {
      std::vector<std::string> args;
      for (const Instruction* o : i.operands) args.push_back(value.at(o));
      auto e = ElementwiseExpr(i, args, lib);
      if (!e.ok()) {
        return hlo::Status(e.status().code(), "in combiner %" + c.name + ", %" + i.name + ": " + e.status().message());
      }
      expr = *e;
    }
    body += "  " + T + " " + var + " = " + expr + ";\n";
    value[&i] = var;
  }
  for (size_t r = 0; r < results.size(); ++r) body += "  r" + std::to_string(r) + " = " + value.at(results[r]) + ";\n";
  functions += signature + " {\n" + body + "}\n";
  emitted.insert(name);
  return name;
}

}  // namespace anvil::gpu
