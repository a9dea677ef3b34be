// The fused loop's pass for a polynomial by Horner's rule (HornerTile),
// built for each instruction set this CPU runs, checked bit for bit
// against the same steps done one at a time: from a tile or from one value,
// with terms that are tiles or values, on lengths that leave a partial
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

float StepByStep(float x, float p, const std::vector<HornerStep>& steps, int64_t k) {
  for (const HornerStep& s : steps) p = s.multiply ? p * x : p + (s.tile ? s.tile[k] : s.value);
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
