// The f32 functions' tile functions (float_functions.h through
// fused_tiles.inc), built for each instruction set this CPU runs, against
// the scalar functions built for the baseline x86-64 here, bit for bit:
// their fused multiply-adds (MulAdd) must round the same in an FMA
// instruction of the AVX2 and AVX-512 loops as in glibc's fmaf, and no
// loop may contract a multiply and an add of its own. Inputs sweep every
// binade of both signs (subnormals included), with the special values
// among them, on a length that leaves a scalar tail after the vectors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "hlo/opcode.h"
#include "plugins/cpu/float_functions.h"
#include "plugins/cpu/kernels_fused.h"

namespace anvil::cpu {
namespace {

using hlo::Opcode;

std::vector<float> Sweep() {
  std::vector<float> x;
  // Every 8191st bit pattern: about 524,000 floats over all binades.
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 8191) {
    const uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, sizeof f);
    x.push_back(f);
  }
  for (float f : {0.0f, -0.0f, 1e-30f, -1e-30f, 0.5f, -0.5f, 3.92f, 9.1f, 10.1f, 88.0f, 89.0f, -104.0f, -87.5f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()}) {
    x.push_back(f);
  }
  x.push_back(1.0f);  // an odd length: a scalar tail after the vectors
  return x;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

template <typename F>
void ExpectTheScalarBits(const std::string& name, Isa isa, const std::vector<float>& x, const std::vector<float>& got) {
  int wrong = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    const float want = F{}(x[k]);
    if (!SameBits(got[k], want) && wrong++ < 5) {
      ADD_FAILURE() << name << " with instruction set " << static_cast<int>(isa) << " at x = " << std::hexfloat
                    << x[k] << ": " << got[k] << ", the scalar function gives " << want;
    }
  }
  EXPECT_EQ(wrong, 0) << name;
}

TEST(FloatTiles, EachInstructionSetGivesTheScalarFunctionsBits) {
  const std::vector<float> x = Sweep();
  std::vector<float> y(x.size());
  for (Isa isa : TileIsasThisCpuRuns()) {
    auto check = [&](Opcode op, auto f, const char* name) {
      ASSERT_TRUE(RunFloatUnaryTileWith(isa, op, x.data(), y.data(), static_cast<int64_t>(x.size()))) << name;
      ExpectTheScalarBits<decltype(f)>(name, isa, x, y);
    };
    check(Opcode::kExp, float_fn::Exp{}, "exp");
    check(Opcode::kExpm1, float_fn::Expm1{}, "expm1");
    check(Opcode::kTanh, float_fn::Tanh{}, "tanh");
    check(Opcode::kLogistic, float_fn::Logistic{}, "logistic");
    check(Opcode::kErf, float_fn::Erf{}, "erf");
    check(Opcode::kLog, float_fn::Log{}, "log");
    check(Opcode::kLog1p, float_fn::Log1p{}, "log1p");
    RunErfcTileWith(isa, x.data(), y.data(), static_cast<int64_t>(x.size()));
    ExpectTheScalarBits<float_fn::Erfc>("erfc", isa, x, y);
  }
}

}  // namespace
}  // namespace anvil::cpu
