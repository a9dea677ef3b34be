// The fused loop's pass for an op chain (HornerTile; polynomials by
// Horner's rule were its first use), built for each instruction set this
// CPU runs, checked bit for bit against the same steps done one at a time:
// from a tile or from one value, with terms that are tiles or values, each
// of the four ops with its term on either side, on lengths that leave a partial
// block of registers and a scalar tail, with signed zeros, infinities and
// NaN among the operands, and written over its own x (the loop may store
// the chain's result where its x was).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "plugins/cpu/kernels_fused.h"

namespace anvil::cpu {
namespace {

float Apply(ChainBinary op, float a, float b) {
  switch (op) {
    case ChainBinary::kAdd: return a + b;
    case ChainBinary::kSubtract: return a - b;
    case ChainBinary::kMultiply: return a * b;
    case ChainBinary::kDivide: return a / b;
    case ChainBinary::kSquare: return a * a;
  }
  return 0;
}

float StepByStep(float x, float p, const std::vector<HornerStep>& steps, int64_t k) {
  for (const HornerStep& s : steps) {
    if (s.multiply) {
      p = p * x;
      continue;
    }
    const float term = s.tile ? s.tile[k] : s.value;
    p = s.term_first ? Apply(s.op, term, p) : Apply(s.op, p, term);
  }
  return p;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

std::vector<float> Values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[k] = static_cast<float>((k * 7919 + seed * 104729) % 2001 - 1000) / 613.0f;
  return v;
}

TEST(HornerTile, EachInstructionSetGivesTheStepByStepBits) {
  for (const int64_t n : {int64_t{1}, int64_t{15}, int64_t{128}, int64_t{200}, int64_t{1024}}) {
    std::vector<float> x = Values(n, 1), p0 = Values(n, 2), t1 = Values(n, 3), t2 = Values(n, 4);
    if (n >= 8) {
      x[0] = -0.0f;
      p0[1] = -0.0f;
      x[2] = INFINITY;
      t1[3] = NAN;
      p0[4] = -INFINITY;
      x[5] = 1e-30f;  // products that underflow
      p0[5] = 1e-20f;
      x[n - 1] = -0.0f;  // the scalar tail
    }
    const std::vector<HornerStep> steps = {
        {true, nullptr, 0},    {false, nullptr, -0.375f}, {true, nullptr, 0}, {false, t1.data(), 0},
        {false, nullptr, 2.5f}, {true, nullptr, 0},       {false, t2.data(), 0}, {true, nullptr, 0},
        {false, nullptr, -0.0f}};
    for (const Isa isa : TileIsasThisCpuRuns()) {
      for (const bool from_tile : {true, false}) {
        std::vector<float> out(static_cast<size_t>(n));
        RunHornerChainWith(isa, x.data(), from_tile ? p0.data() : nullptr, -1.75f, steps, out.data(), n);
        int wrong = 0;
        for (int64_t k = 0; k < n; ++k) {
          const float want = StepByStep(x[k], from_tile ? p0[k] : -1.75f, steps, k);
          if (!SameBits(out[k], want) && wrong++ < 4) {
            ADD_FAILURE() << "isa " << static_cast<int>(isa) << ", n " << n << (from_tile ? ", from a tile" : ", from a value")
                          << ", element " << k << ": " << out[k] << ", expected " << want;
          }
        }
        EXPECT_EQ(wrong, 0);
      }
    }
  }
}

// Chains of any of the four ops, each term (a tile or a value) on either
// side of p, and squares: layer norm's (x - mean) * scale * gamma + beta
// and (x - mean)^2, erfc's 1 - x * p, divisions both ways.
TEST(HornerTile, EveryOpWithItsTermOnEitherSideGivesTheStepByStepBits) {
  for (const int64_t n : {int64_t{1}, int64_t{17}, int64_t{128}, int64_t{1000}}) {
    std::vector<float> x = Values(n, 7), p0 = Values(n, 8), t1 = Values(n, 9), t2 = Values(n, 10);
    if (n >= 8) {
      t1[0] = 0.0f;  // a division by zero, both ways
      p0[1] = -0.0f;
      t2[2] = NAN;
      t1[3] = INFINITY;
      x[4] = 1e-38f;  // quotients that underflow
      t2[4] = 1e30f;
    }
    for (const bool term_first : {false, true}) {
      std::vector<HornerStep> steps;
      for (const ChainBinary op : {ChainBinary::kSubtract, ChainBinary::kDivide, ChainBinary::kAdd,
                                   ChainBinary::kMultiply}) {
        steps.push_back(HornerStep{false, t1.data(), 0, op, term_first});
        steps.push_back(HornerStep{false, nullptr, -1.5f, op, !term_first});
        steps.push_back(HornerStep{false, t2.data(), 0, op, !term_first});
        steps.push_back(HornerStep{true, nullptr, 0});
        steps.push_back(HornerStep{false, nullptr, 0.25f, op, term_first});
        steps.push_back(HornerStep{false, nullptr, 0, ChainBinary::kSquare});
      }
      for (const Isa isa : TileIsasThisCpuRuns()) {
        std::vector<float> out(static_cast<size_t>(n));
        RunHornerChainWith(isa, x.data(), p0.data(), 0, steps, out.data(), n);
        int wrong = 0;
        for (int64_t k = 0; k < n; ++k) {
          const float want = StepByStep(x[k], p0[k], steps, k);
          if (!SameBits(out[k], want) && wrong++ < 4) {
            ADD_FAILURE() << "isa " << static_cast<int>(isa) << ", n " << n << ", terms first " << term_first
                          << ", element " << k << ": " << out[k] << ", expected " << want;
          }
        }
        EXPECT_EQ(wrong, 0);
      }
    }
  }
}

TEST(HornerTile, WritesOverItsOwnX) {
  constexpr int64_t kN = 333;
  const std::vector<float> x = Values(kN, 5), t = Values(kN, 6);
  const std::vector<HornerStep> steps = {{true, nullptr, 0}, {false, t.data(), 0}, {true, nullptr, 0}};
  for (const Isa isa : TileIsasThisCpuRuns()) {
    std::vector<float> inout = x;
    RunHornerChainWith(isa, inout.data(), nullptr, 0.5f, steps, inout.data(), kN);
    for (int64_t k = 0; k < kN; ++k) {
      ASSERT_TRUE(SameBits(inout[k], StepByStep(x[k], 0.5f, steps, k))) << "isa " << static_cast<int>(isa) << ", element " << k;
    }
  }
}

TEST(HornerTile, AChainOfOver64StepsIsRefused) {
  const std::vector<HornerStep> steps(65, HornerStep{true, nullptr, 0});
  float x = 1, out = 0;
  EXPECT_THROW(RunHornerChainWith(Isa::kBaseline, &x, nullptr, 1.0f, steps, &out, 1), std::invalid_argument);
}

}  // namespace
}  // namespace anvil::cpu
