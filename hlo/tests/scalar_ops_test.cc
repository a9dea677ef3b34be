// hlo/scalar_ops and hlo/scalar_program against the reference evaluator:
// every elementwise op on every element type it is defined for, on random
// bits (NaNs, infinities, sub-normals, extreme integers), gives the
// evaluator's elements bit for bit; a compiled body gives what evaluating
// the computation gives.
#include "hlo/scalar_ops.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hlo/evaluator.h"
#include "hlo/hlo_parser.h"
#include "hlo/scalar_program.h"

namespace anvil::hlo {
namespace {

constexpr int64_t kElements = 257;

// A literal of `shape` with random bits, each element made canonical.
Literal RandomLiteral(const Shape& shape, std::mt19937_64& random) {
  Literal l(shape);
  const ElementType t = shape.element_type();
  const size_t size = static_cast<size_t>(Info(t).byte_size);
  for (int64_t k = 0; k < l.element_count(); ++k) {
    unsigned char element[16];
    for (unsigned char& byte : element) byte = static_cast<unsigned char>(random());
    if (k % 7 == 0) std::memset(element, 0, sizeof element);  // zeros and small values too
    if (k % 11 == 1) element[0] = static_cast<unsigned char>(k);
    Scalar s = LoadScalar(t, element);
    StoreScalar(t, s, l.mutable_data().data() + static_cast<size_t>(k) * size);
  }
  return l;
}

// Every instruction of the entry but its parameters and root, each checked
// element by element against the evaluator on random operands.
void ExpectOpsAgree(const std::string& entry_body) {
  const std::string text = "HloModule m\nENTRY e {\n" + entry_body + "}\n";
  auto module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::mt19937_64 random(42);
  int checked = 0;
  for (const auto& owned : (*module)->entry->instructions) {
    const Instruction& i = *owned;
    if (i.opcode == Opcode::kParameter || &i == (*module)->entry->root) continue;
    SCOPED_TRACE(i.name);
    std::vector<Literal> operands;
    for (const Instruction* o : i.operands) operands.push_back(RandomLiteral(o->shape, random));
    std::vector<const Literal*> args;
    for (const Literal& o : operands) args.push_back(&o);
    auto expected = EvaluateInstruction(i, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    auto op = ScalarOp::Of(i);
    ASSERT_TRUE(op.ok()) << op.status().message();
    const ElementType result = i.shape.element_type();
    const size_t size = static_cast<size_t>(Info(result).byte_size);
    for (int64_t k = 0; k < expected->element_count(); ++k) {
      Scalar x[3];
      for (size_t v = 0; v < operands.size(); ++v) {
        const Literal& o = operands[v];
        const int64_t at = o.element_count() == 1 ? 0 : k;
        x[v] = LoadScalar(o.shape().element_type(), o.data().data() + at * Info(o.shape().element_type()).byte_size);
      }
      unsigned char got[16] = {};
      StoreScalar(result, op->Apply(x), got);
      ASSERT_EQ(std::memcmp(got, expected->data().data() + static_cast<size_t>(k) * size, size), 0)
          << "element " << k << ": " << expected->ElementToString(k);
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

std::string Unary(const std::string& type, const std::vector<std::string>& ops) {
  std::string body = "  a = " + type + "[" + std::to_string(kElements) + "] parameter(0)\n";
  for (const std::string& op : ops) {
    body += "  " + op + "_ = " + type + "[" + std::to_string(kElements) + "] " + op + "(a)\n";
  }
  return body + "  ROOT r = " + type + "[" + std::to_string(kElements) + "] copy(a)\n";
}

std::string Binary(const std::string& type, const std::vector<std::string>& ops) {
  const std::string shape = type + "[" + std::to_string(kElements) + "]";
  std::string body = "  a = " + shape + " parameter(0)\n  b = " + shape + " parameter(1)\n";
  for (const std::string& op : ops) body += "  " + op + "_ = " + shape + " " + op + "(a, b)\n";
  return body + "  ROOT r = " + shape + " copy(a)\n";
}

const std::vector<std::string> kFloatTypes = {"f32", "f64", "bf16", "f16", "f8e4m3fn", "f8e5m2"};
const std::vector<std::string> kIntegerTypes = {"s4", "s8", "s16", "s32", "s64", "u4", "u8", "u16", "u32", "u64"};

TEST(ScalarOpsTest, FloatOpsAgreeWithTheEvaluator) {
  for (const std::string& t : kFloatTypes) {
    SCOPED_TRACE(t);
    ExpectOpsAgree(Unary(t, {"abs", "negate", "sign", "exponential", "log", "sqrt", "rsqrt", "tanh", "sine", "floor",
                             "round-nearest-even", "logistic", "cbrt", "erf"}));
    ExpectOpsAgree(Binary(t, {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder",
                              "atan2"}));
  }
}

TEST(ScalarOpsTest, IntegerOpsAgreeWithTheEvaluator) {
  for (const std::string& t : kIntegerTypes) {
    SCOPED_TRACE(t);
    ExpectOpsAgree(Unary(t, {"abs", "negate", "sign", "not", "popcnt", "count-leading-zeros"}));
    ExpectOpsAgree(Binary(t, {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and", "or",
                              "xor", "shift-left", "shift-right-logical", "shift-right-arithmetic", "power"}));
  }
  ExpectOpsAgree(Binary("pred", {"and", "or", "xor"}));
  ExpectOpsAgree(Unary("pred", {"not"}));
}

TEST(ScalarOpsTest, ComplexOpsAgreeWithTheEvaluator) {
  for (const std::string t : {"c64", "c128"}) {
    SCOPED_TRACE(t);
    ExpectOpsAgree(Unary(t, {"negate", "exponential", "log", "sqrt", "tanh", "sine"}));
    ExpectOpsAgree(Binary(t, {"add", "subtract", "multiply", "divide"}));
    ExpectOpsAgree(std::string("  a = ") + t + "[9] parameter(0)\n" + "  re = " + (std::string(t) == "c64" ? "f32" : "f64") +
                   "[9] real(a)\n  im = " + (std::string(t) == "c64" ? "f32" : "f64") + "[9] imag(a)\n  ab = " +
                   (std::string(t) == "c64" ? "f32" : "f64") + "[9] abs(a)\n  ROOT r = " + t + "[9] copy(a)\n");
  }
}

TEST(ScalarOpsTest, ComparesSelectsClampsAndConvertsAgreeWithTheEvaluator) {
  std::string body;
  int n = 0;
  auto add = [&](const std::string& line) { body += "  v" + std::to_string(n++) + " = " + line + "\n"; };
  body += "  f = f32[64] parameter(0)\n  h = bf16[64] parameter(1)\n  s = s4[64] parameter(2)\n"
          "  u = u64[64] parameter(3)\n  c = c64[64] parameter(4)\n  p = pred[64] parameter(5)\n"
          "  d = f64[64] parameter(6)\n  q = pred[] parameter(7)\n";
  for (const std::string dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    add("pred[64] compare(f, f), direction=" + dir);
    add("pred[64] compare(h, h), direction=" + dir);
    add("pred[64] compare(s, s), direction=" + dir);
    add("pred[64] compare(u, u), direction=" + dir);
    add("pred[64] compare(d, d), direction=" + dir + ", type=TOTALORDER");
  }
  add("pred[64] compare(c, c), direction=NE");
  add("f32[64] select(p, f, f)");
  add("bf16[64] select(q, h, h)");
  add("s4[64] clamp(s, s, s)");
  add("f32[64] clamp(f, f, f)");
  add("pred[64] is-finite(h)");
  add("c64[64] complex(f, f)");
  add("bf16[64] reduce-precision(h), exponent_bits=4, mantissa_bits=3");
  for (const std::string from : {"f", "h", "s", "u", "c", "p", "d"}) {
    for (const std::string to : {"f32", "bf16", "f16", "s4", "s8", "s64", "u8", "u64", "pred", "c64", "c128", "f64"}) {
      add(to + "[64] convert(" + from + ")");
    }
  }
  body += "  ROOT r = f32[64] copy(f)\n";
  ExpectOpsAgree(body);
}

TEST(ScalarOpsTest, AnOpWithoutAnElementwiseFormIsRefused) {
  auto module = ParseHloModule("HloModule m\nENTRY e {\n  a = f32[4,4] parameter(0)\n"
                               "  ROOT t = f32[4,4] transpose(a), dimensions={1,0}\n}\n");
  ASSERT_TRUE(module.ok());
  auto op = ScalarOp::Of(*(*module)->entry->root);
  ASSERT_FALSE(op.ok());
  EXPECT_EQ(op.status().code(), StatusCode::kUnimplemented);
}

TEST(ScalarProgramTest, ABodyGivesWhatEvaluatingItGives) {
  auto module = ParseHloModule(R"(HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  v = f32[] select(gt, v0, v1)
  i = s32[] select(gt, i0, i1)
  half = f32[] constant(0.5)
  scaled = f32[] multiply(v, half)
  ROOT r = (f32[], s32[]) tuple(scaled, i)
}
ENTRY e {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
)");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const Computation* body = nullptr;
  for (const auto& c : (*module)->computations) {
    if (c->name == "argmax") body = c.get();
  }
  ASSERT_NE(body, nullptr);
  auto program = ScalarProgram::Compile(*body);
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ(program->parameter_count(), 4);
  EXPECT_EQ(program->result_count(), 2);
  std::vector<Scalar> registers = program->NewRegisters();
  auto f = [](float v) {
    Scalar s;
    s.re = v;
    return Canonical(ElementType::kF32, s);
  };
  auto i = [](int64_t v) {
    Scalar s;
    s.bits = static_cast<uint64_t>(v);
    return s;
  };
  const Scalar args[4] = {f(3.0f), i(7), f(5.0f), i(9)};
  Scalar results[2];
  program->Run(args, registers, results);
  EXPECT_EQ(results[0].re, 2.5);
  EXPECT_EQ(static_cast<int64_t>(results[1].bits), 9);
  const Scalar again[4] = {f(8.0f), i(1), f(-1.0f), i(2)};
  program->Run(again, registers, results);
  EXPECT_EQ(results[0].re, 4.0);
  EXPECT_EQ(static_cast<int64_t>(results[1].bits), 1);
}

TEST(ScalarProgramTest, ABodyThatIsNotOnScalarsIsRefused) {
  auto module = ParseHloModule(R"(HloModule m
body {
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a)
}
ENTRY e {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
)");
  ASSERT_TRUE(module.ok()) << module.status().message();
  for (const auto& c : (*module)->computations) {
    if (c->name != "body") continue;
    auto program = ScalarProgram::Compile(*c);
    ASSERT_FALSE(program.ok());
    EXPECT_NE(program.status().message().find("not a scalar"), std::string::npos) << program.status().message();
  }
}

}  // namespace
}  // namespace anvil::hlo
