// Fused loops on the CPU plugin through the C ABI, checked element by
// element against the same arithmetic done here (exact ops only, so the
// results must be equal): masks made and consumed inside one loop, a shared
// scalar broadcast, clamp with scalar bounds, over several tiles; chains of
// binary ops the loop pairs into one pass, the intermediate on either side
// of the second op, across a splatted constant; constants read as scalars
// and bias rows read in place of a tile; selects of constants, and bf16
// constants in bf16 ops, read as scalars; polynomials by Horner's rule,
// run as one pass; a loop op fused with
// nothing (a loop of one), checked bit for bit against the plugin's float
// functions as this test's compiler builds them for the baseline x86-64.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "anvil/anvil.h"
#include "conformance/testkit/abi_session.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/float_functions.h"

namespace {

TEST(CpuFusedLoops, MasksInsideALoopGiveExactResults) {
  constexpr int64_t kN = 5000;  // several 1024-element tiles, and a partial one
  const std::string s = "f32[" + std::to_string(kN) + "]", p = "pred[" + std::to_string(kN) + "]";
  const std::string hlo = "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n  g = " + s +
                          " parameter(1)\n  zero = f32[] constant(0)\n  six = f32[] constant(6)\n"
                          "  z = " + s + " broadcast(zero), dimensions={}\n"
                          "  c = " + p + " compare(g, x), direction=LT\n"
                          "  sel = " + s + " select(c, x, g)\n"
                          "  above = " + p + " compare(sel, z), direction=GT\n"
                          "  y = " + s + " clamp(zero, sel, six)\n"
                          "  w = " + s + " select(above, y, z)\n"
                          "  ROOT n = " + s + " negate(w)\n}\n";
  std::vector<float> x(kN), g(kN);
  for (int64_t k = 0; k < kN; ++k) {
    x[k] = static_cast<float>((k * 7919) % 2001 - 1000) / 97.0f;
    g[k] = static_cast<float>((k * 104729) % 1999 - 999) / 89.0f;
  }
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(hlo, &exe));
  anvil_buffer* bx = session.FromHost(x.data(), ANVIL_F32, {kN});
  anvil_buffer* bg = session.FromHost(g.data(), ANVIL_F32, {kN});
  std::vector<anvil_buffer*> out = session.Execute(exe, {bx, bg}, 1);
  std::vector<float> n = session.ToHost<float>(out[0], kN);
  int wrong = 0;
  for (int64_t k = 0; k < kN; ++k) {
    const float sel = g[k] < x[k] ? x[k] : g[k];
    const float w = sel > 0 ? std::min(std::max(sel, 0.0f), 6.0f) : 0.0f;
    if (n[k] != -w && wrong++ < 5) ADD_FAILURE() << "element " << k << ": " << n[k] << ", expected " << -w;
  }
  EXPECT_EQ(wrong, 0);
  for (anvil_buffer* b : {bx, bg, out[0]}) anvil_buffer_destroy(b);
  anvil_executable_destroy(exe);
}

TEST(CpuFusedLoops, PairedBinaryOpsGiveTheTwoPassResults) {
  constexpr int64_t kN = 3000;
  const std::string s = "f32[" + std::to_string(kN) + "]";
  // m = x*y, then a = m+z (m on the left), d = z/a (a on the right), then
  // q = d - 3 (across the splat of 3), mx = max(q, x), r = min(y, mx).
  const std::string hlo = "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n  y = " + s +
                          " parameter(1)\n  z = " + s + " parameter(2)\n  three = f32[] constant(3)\n"
                          "  m = " + s + " multiply(x, y)\n"
                          "  a = " + s + " add(m, z)\n"
                          "  d = " + s + " divide(z, a)\n"
                          "  t = " + s + " broadcast(three), dimensions={}\n"
                          "  q = " + s + " subtract(d, t)\n"
                          "  mx = " + s + " maximum(q, x)\n"
                          "  ROOT r = " + s + " minimum(y, mx)\n}\n";
  std::vector<float> x(kN), y(kN), z(kN);
  for (int64_t k = 0; k < kN; ++k) {
    x[k] = static_cast<float>((k * 7919) % 2001 - 1000) / 97.0f;
    y[k] = static_cast<float>((k * 104729) % 1999 - 999) / 89.0f;
    z[k] = static_cast<float>((k * 31337) % 997 + 1) / 13.0f;
  }
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(hlo, &exe));
  anvil_buffer* bx = session.FromHost(x.data(), ANVIL_F32, {kN});
  anvil_buffer* by = session.FromHost(y.data(), ANVIL_F32, {kN});
  anvil_buffer* bz = session.FromHost(z.data(), ANVIL_F32, {kN});
  std::vector<anvil_buffer*> out = session.Execute(exe, {bx, by, bz}, 1);
  std::vector<float> r = session.ToHost<float>(out[0], kN);
  int wrong = 0;
  for (int64_t k = 0; k < kN; ++k) {
    const float m = x[k] * y[k];
    const float a = m + z[k];
    const float d = z[k] / a;
    const float q = d - 3.0f;
    const float mx = std::isnan(q) || std::isnan(x[k]) ? NAN : std::max(q, x[k]);
    const float expected = std::isnan(mx) ? NAN : std::min(y[k], mx);
    const bool same = r[k] == expected || (std::isnan(r[k]) && std::isnan(expected));
    if (!same && wrong++ < 5) ADD_FAILURE() << "element " << k << ": " << r[k] << ", expected " << expected;
  }
  EXPECT_EQ(wrong, 0);
  for (anvil_buffer* b : {bx, by, bz, out[0]}) anvil_buffer_destroy(b);
  anvil_executable_destroy(exe);
}

// Polynomials by Horner's rule, which the loop runs as one pass with the
// steps in registers (HornerTile), checked bit for bit against the same
// steps done one at a time here: a chain from a constant with its
// operands in either order; one from an array with an array term and a
// term computed between two of its steps (erf_inv's select of two
// constants); one of 80 steps, past the 64 one pass takes; and one whose
// first result is read again after the chain, which must not be dropped.
// 5000 elements: several tiles, blocks of 128 and a scalar tail.
TEST(CpuFusedLoops, HornerChainsGiveTheStepByStepResults) {
  constexpr int64_t kN = 5000;
  constexpr int kLongPairs = 40;
  const std::string s = "f32[" + std::to_string(kN) + "]";
  std::string hlo = "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n  y = " + s + " parameter(1)\n  z = " + s +
                    " parameter(2)\n  w = " + s + " parameter(3)\n";
  const float c[6] = {0.75f, -1.25f, 0.3f, 2.5f, -0.6f, 1.1f};
  for (int k = 0; k < 6; ++k) {
    hlo += "  c" + std::to_string(k) + " = f32[] constant(" + std::to_string(c[k]) + ")\n  b" + std::to_string(k) +
           " = " + s + " broadcast(c" + std::to_string(k) + "), dimensions={}\n";
  }
  hlo += "  a1 = " + s + " multiply(b0, x)\n  a2 = " + s + " add(b1, a1)\n  a3 = " + s + " multiply(x, a2)\n"
         "  a4 = " + s + " add(a3, b2)\n  a5 = " + s + " multiply(a4, x)\n  a6 = " + s + " add(a5, b3)\n";
  hlo += "  g1 = " + s + " multiply(y, x)\n  g2 = " + s + " add(g1, z)\n"
         "  m = pred[" + std::to_string(kN) + "] compare(x, y), direction=LT\n  t = " + s + " select(m, b4, b5)\n"
         "  g3 = " + s + " multiply(g2, x)\n  g4 = " + s + " add(t, g3)\n  g5 = " + s + " multiply(x, g4)\n"
         "  g6 = " + s + " add(g5, b1)\n";
  std::vector<float> long_c(kLongPairs);
  std::string prev = "b2";
  for (int k = 0; k < kLongPairs; ++k) {
    long_c[k] = static_cast<float>(k % 7 - 3) / 8.0f;
    const std::string n = std::to_string(k);
    hlo += "  lc" + n + " = f32[] constant(" + std::to_string(long_c[k]) + ")\n  lb" + n + " = " + s + " broadcast(lc" +
           n + "), dimensions={}\n  lm" + n + " = " + s + " multiply(" + prev + ", w)\n  la" + n + " = " + s +
           " add(lm" + n + ", lb" + n + ")\n";
    prev = "la" + n;
  }
  hlo += "  d1 = " + s + " multiply(b0, w)\n  d2 = " + s + " add(d1, b1)\n  d3 = " + s + " multiply(d2, w)\n"
         "  d4 = " + s + " add(d3, d1)\n";
  hlo += "  ROOT r = (" + s + ", " + s + ", " + s + ", " + s + ") tuple(a6, g6, " + prev + ", d4)\n}\n";
  std::vector<float> x(kN), y(kN), z(kN), w(kN);
  for (int64_t k = 0; k < kN; ++k) {
    x[k] = static_cast<float>((k * 7919) % 601 - 300) / 97.0f;
    y[k] = static_cast<float>((k * 104729) % 1999 - 999) / 89.0f;
    z[k] = static_cast<float>((k * 31337) % 997 + 1) / 13.0f;
    w[k] = static_cast<float>((k * 7727) % 2001 - 1000) / 1000.0f;
  }
  x[0] = -0.0f;
  x[1] = 0.0f;
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(hlo, &exe));
  anvil_buffer* bx = session.FromHost(x.data(), ANVIL_F32, {kN});
  anvil_buffer* by = session.FromHost(y.data(), ANVIL_F32, {kN});
  anvil_buffer* bz = session.FromHost(z.data(), ANVIL_F32, {kN});
  anvil_buffer* bw = session.FromHost(w.data(), ANVIL_F32, {kN});
  std::vector<anvil_buffer*> out = session.Execute(exe, {bx, by, bz, bw}, 4);
  ASSERT_EQ(out.size(), 4u);
  std::vector<std::vector<float>> got;
  for (anvil_buffer* b : out) got.push_back(session.ToHost<float>(b, kN));
  auto same = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  int wrong = 0;
  for (int64_t k = 0; k < kN; ++k) {
    const float a = (x[k] * (c[1] + c[0] * x[k]) + c[2]) * x[k] + c[3];
    const float t = x[k] < y[k] ? c[4] : c[5];
    const float g = x[k] * (t + (y[k] * x[k] + z[k]) * x[k]) + c[1];
    float l = c[2];
    for (int p = 0; p < kLongPairs; ++p) l = l * w[k] + long_c[p];
    const float d1 = c[0] * w[k];
    const float d = (d1 + c[1]) * w[k] + d1;
    const float want[4] = {a, g, l, d};
    for (int r = 0; r < 4; ++r) {
      if (!same(got[r][k], want[r]) && wrong++ < 8) {
        ADD_FAILURE() << "result " << r << ", element " << k << ": " << got[r][k] << ", expected " << want[r];
      }
    }
  }
  EXPECT_EQ(wrong, 0);
  for (anvil_buffer* b : {bx, by, bz, bw, out[0], out[1], out[2], out[3]}) anvil_buffer_destroy(b);
  anvil_executable_destroy(exe);
}

// Selects whose values are splatted constants read them as scalars (no
// tile filled per tile): both values constants (erf_inv's choices of
// coefficient), one of them (where(mask, x, 0) and its mirror), in f32 with
// -0 and a NaN whose payload must come through, and in s32.
TEST(CpuFusedLoops, SelectsOfConstantsGiveTheTiledResults) {
  constexpr int64_t kN = 3000;
  const std::string s = "f32[" + std::to_string(kN) + "]", i = "s32[" + std::to_string(kN) + "]",
                    p = "pred[" + std::to_string(kN) + "]";
  const std::string hlo = "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n  y = " + s + " parameter(1)\n"
                          "  n = " + i + " parameter(2)\n"
                          "  c1 = f32[] constant(-0)\n  c2 = f32[] constant(2.5)\n  bits = s32[] constant(2143289345)\n"
                          "  q = f32[] bitcast-convert(bits)\n"
                          "  k1 = s32[] constant(-7)\n  k2 = s32[] constant(11)\n"
                          "  b1 = " + s + " broadcast(c1), dimensions={}\n  b2 = " + s + " broadcast(c2), dimensions={}\n"
                          "  bq = " + s + " broadcast(q), dimensions={}\n"
                          "  i1 = " + i + " broadcast(k1), dimensions={}\n  i2 = " + i + " broadcast(k2), dimensions={}\n"
                          "  m = " + p + " compare(x, y), direction=LT\n"
                          "  both = " + s + " select(m, b1, b2)\n"
                          "  if_false = " + s + " select(m, x, bq)\n"
                          "  if_true = " + s + " select(m, b2, y)\n"
                          "  f = " + s + " multiply(both, if_true)\n"
                          "  ints = " + i + " select(m, i1, i2)\n"
                          "  g = " + i + " add(ints, n)\n"
                          "  ROOT r = (" + s + ", " + s + ", " + i + ") tuple(f, if_false, g)\n}\n";
  std::vector<float> x(kN), y(kN);
  std::vector<int32_t> n(kN);
  for (int64_t k = 0; k < kN; ++k) {
    x[k] = static_cast<float>((k * 7919) % 2001 - 1000) / 97.0f;
    y[k] = static_cast<float>((k * 104729) % 1999 - 999) / 89.0f;
    n[k] = static_cast<int32_t>((k * 31337) % 1000) - 500;
  }
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(hlo, &exe));
  anvil_buffer* bx = session.FromHost(x.data(), ANVIL_F32, {kN});
  anvil_buffer* by = session.FromHost(y.data(), ANVIL_F32, {kN});
  anvil_buffer* bn = session.FromHost(n.data(), ANVIL_S32, {kN});
  std::vector<anvil_buffer*> out = session.Execute(exe, {bx, by, bn}, 3);
  ASSERT_EQ(out.size(), 3u);
  const std::vector<float> f = session.ToHost<float>(out[0], kN), if_false = session.ToHost<float>(out[1], kN);
  const std::vector<int32_t> g = session.ToHost<int32_t>(out[2], kN);
  const uint32_t nan_bits = 2143289345u;
  float q;
  std::memcpy(&q, &nan_bits, sizeof q);
  auto bits = [](float v) {
    uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  };
  int wrong = 0;
  for (int64_t k = 0; k < kN; ++k) {
    const bool m = x[k] < y[k];
    const float want_false = m ? x[k] : q;
    const float want_f = (m ? -0.0f : 2.5f) * (m ? 2.5f : y[k]);
    const int32_t want_g = (m ? -7 : 11) + n[k];
    if ((bits(f[k]) != bits(want_f) || bits(if_false[k]) != bits(want_false) || g[k] != want_g) && wrong++ < 5) {
      ADD_FAILURE() << "element " << k << ": " << f[k] << " (" << want_f << "), " << if_false[k] << " (" << want_false
                    << "), " << g[k] << " (" << want_g << ")";
    }
  }
  EXPECT_EQ(wrong, 0);
  for (anvil_buffer* b : {bx, by, bn, out[0], out[1], out[2]}) anvil_buffer_destroy(b);
  anvil_executable_destroy(exe);
}

// bf16 ops whose other operand is a splatted bf16 constant read it as a
// scalar, widened once (no tile filled per tile), on either side and for
// each pairable op, each result rounded to bf16 as the one-op kernels round:
// JAX's (x.astype(bf16) * 2 + 1).astype(f32) and more.
TEST(CpuFusedLoops, Bf16OpsOfConstantsGiveTheRoundedResults) {
  constexpr int64_t kN = 3000;
  const std::string s = "f32[" + std::to_string(kN) + "]", b = "bf16[" + std::to_string(kN) + "]";
  const std::string hlo = "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n"
                          "  c1 = bf16[] constant(2.5)\n  c2 = bf16[] constant(-0.375)\n  c3 = bf16[] constant(3)\n"
                          "  b1 = " + b + " broadcast(c1), dimensions={}\n  b2 = " + b + " broadcast(c2), dimensions={}\n"
                          "  b3 = " + b + " broadcast(c3), dimensions={}\n"
                          "  h = " + b + " convert(x)\n"
                          "  m = " + b + " multiply(h, b1)\n"
                          "  a = " + b + " add(b2, m)\n"
                          "  d = " + b + " subtract(b3, a)\n"
                          "  q = " + b + " divide(d, b3)\n"
                          "  mx = " + b + " maximum(q, b2)\n"
                          "  mn = " + b + " minimum(b1, mx)\n"
                          "  ROOT r = " + s + " convert(mn)\n}\n";
  std::vector<float> x(kN);
  for (int64_t k = 0; k < kN; ++k) x[k] = static_cast<float>((k * 7919) % 2001 - 1000) / 97.0f;
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(hlo, &exe));
  anvil_buffer* bx = session.FromHost(x.data(), ANVIL_F32, {kN});
  std::vector<anvil_buffer*> out = session.Execute(exe, {bx}, 1);
  const std::vector<float> r = session.ToHost<float>(out[0], kN);
  auto round = [](float v) { return anvil::cpu::ToFloat(anvil::cpu::ToBf16(v)); };
  int wrong = 0;
  for (int64_t k = 0; k < kN; ++k) {
    const float h = round(x[k]);
    const float m = round(h * 2.5f);
    const float a = round(-0.375f + m);
    const float d = round(3.0f - a);
    const float q = round(d / 3.0f);
    const float mx = std::max(q, -0.375f);
    const float want = std::min(2.5f, mx);
    if (r[k] != want && wrong++ < 5) ADD_FAILURE() << "element " << k << ": " << r[k] << ", expected " << want;
  }
  EXPECT_EQ(wrong, 0);
  for (anvil_buffer* buffer : {bx, out[0]}) anvil_buffer_destroy(buffer);
  anvil_executable_destroy(exe);
}

// max(x, y) then min(., z), one pair in the loop (vectorised since the
// functions have no early return), on every combination of NaN, signed
// zeros, infinities and ordinary values, each repeated so that both the
// vector body and the scalar tail see it: NaN anywhere gives NaN, and +0
// is above -0 for both ops.
TEST(CpuFusedLoops, MaximumThenMinimumKeepTheNanAndSignedZeroRules) {
  const std::vector<float> values = {NAN, -0.0f, 0.0f, INFINITY, -INFINITY, 1.5f, -2.0f};
  std::vector<float> x, y, z;
  for (int repeat = 0; repeat < 5; ++repeat) {
    for (float a : values) {
      for (float b : values) {
        for (float c : values) {
          x.push_back(a);
          y.push_back(b);
          z.push_back(c);
        }
      }
    }
  }
  const int64_t n = static_cast<int64_t>(x.size());
  const std::string s = "f32[" + std::to_string(n) + "]";
  const std::string hlo = "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n  y = " + s +
                          " parameter(1)\n  z = " + s + " parameter(2)\n  mx = " + s + " maximum(x, y)\n" +
                          "  ROOT r = " + s + " minimum(mx, z)\n}\n";
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(hlo, &exe));
  anvil_buffer* bx = session.FromHost(x.data(), ANVIL_F32, {n});
  anvil_buffer* by = session.FromHost(y.data(), ANVIL_F32, {n});
  anvil_buffer* bz = session.FromHost(z.data(), ANVIL_F32, {n});
  std::vector<anvil_buffer*> out = session.Execute(exe, {bx, by, bz}, 1);
  std::vector<float> r = session.ToHost<float>(out[0], static_cast<size_t>(n));
  auto maximum = [](float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return NAN;
    if (a == 0 && b == 0) return std::signbit(a) ? b : a;
    return a > b ? a : b;
  };
  auto minimum = [](float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return NAN;
    if (a == 0 && b == 0) return std::signbit(a) ? a : b;
    return a < b ? a : b;
  };
  int wrong = 0;
  for (int64_t k = 0; k < n; ++k) {
    const float expected = minimum(maximum(x[k], y[k]), z[k]);
    const bool same = std::isnan(expected) ? std::isnan(r[k])
                                           : r[k] == expected && std::signbit(r[k]) == std::signbit(expected);
    if (!same && wrong++ < 5) {
      ADD_FAILURE() << "min(max(" << x[k] << ", " << y[k] << "), " << z[k] << ") = " << r[k] << ", expected "
                    << expected;
    }
  }
  EXPECT_EQ(wrong, 0);
  for (anvil_buffer* b : {bx, by, bz, out[0]}) anvil_buffer_destroy(b);
  anvil_executable_destroy(exe);
}

TEST(CpuFusedLoops, ConstantsReadAsScalarsAndViewedBiasRowsGiveTheTiledResults) {
  // Rows of 2500: of each row's 1024-element tiles, the first two lie inside
  // the bias row (read in place) and the third crosses into the next row
  // (copied). The constants: two read by subtract and divide on the left,
  // one as a pair's third operand, and one (two) also read by a compare,
  // which still needs it as a tile.
  constexpr int64_t kRows = 3, kCols = 2500, kN = kRows * kCols;
  const std::string s = "f32[" + std::to_string(kRows) + "," + std::to_string(kCols) + "]";
  const std::string hlo = "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n  b = f32[" +
                          std::to_string(kCols) + "] parameter(1)\n"
                          "  two = f32[] constant(2)\n  quarter = f32[] constant(0.25)\n"
                          "  bb = " + s + " broadcast(b), dimensions={1}\n"
                          "  h = " + s + " add(x, bb)\n"
                          "  k2 = " + s + " broadcast(two), dimensions={}\n"
                          "  kq = " + s + " broadcast(quarter), dimensions={}\n"
                          "  a = " + s + " subtract(k2, h)\n"
                          "  m = " + s + " multiply(a, kq)\n"
                          "  d = " + s + " divide(kq, m)\n"
                          "  c = pred[" + std::to_string(kRows) + "," + std::to_string(kCols) + "] compare(d, k2), direction=GT\n"
                          "  sel = " + s + " select(c, d, h)\n"
                          "  ROOT r = " + s + " maximum(sel, bb)\n}\n";
  std::vector<float> x(kN), b(kCols);
  for (int64_t k = 0; k < kN; ++k) x[k] = static_cast<float>((k * 7919) % 2001 - 1000) / 97.0f;
  for (int64_t k = 0; k < kCols; ++k) b[k] = static_cast<float>((k * 104729) % 1999 - 999) / 89.0f;
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(hlo, &exe));
  anvil_buffer* bx = session.FromHost(x.data(), ANVIL_F32, {kRows, kCols});
  anvil_buffer* bb = session.FromHost(b.data(), ANVIL_F32, {kCols});
  std::vector<anvil_buffer*> out = session.Execute(exe, {bx, bb}, 1);
  std::vector<float> r = session.ToHost<float>(out[0], kN);
  int wrong = 0;
  for (int64_t k = 0; k < kN; ++k) {
    const float bias = b[k % kCols];
    const float h = x[k] + bias;
    const float a = 2.0f - h;
    const float m = a * 0.25f;
    const float d = 0.25f / m;
    const float sel = d > 2.0f ? d : h;
    const float expected = std::isnan(sel) ? NAN : std::max(sel, bias);
    const bool same = r[k] == expected || (std::isnan(r[k]) && std::isnan(expected));
    if (!same && wrong++ < 5) ADD_FAILURE() << "element " << k << ": " << r[k] << ", expected " << expected;
  }
  EXPECT_EQ(wrong, 0);
  for (anvil_buffer* buffer : {bx, bb, out[0]}) anvil_buffer_destroy(buffer);
  anvil_executable_destroy(exe);
}

TEST(CpuFusedLoops, ALoopOfOneGivesTheOneOpBits) {
  constexpr int64_t kN = 2500;  // two whole tiles and a partial one
  const std::string s = "f32[" + std::to_string(kN) + "]";
  // Each value leaves the program, so nothing fuses: every op is a loop of
  // one, and the add reads its one operand twice.
  const std::string hlo = "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n"
                          "  e = " + s + " exponential(x)\n"
                          "  t = " + s + " tanh(x)\n"
                          "  d = " + s + " add(x, x)\n"
                          "  ROOT r = (" + s + ", " + s + ", " + s + ") tuple(e, t, d)\n}\n";
  std::vector<float> x(kN);
  for (int64_t k = 0; k < kN; ++k) x[k] = static_cast<float>((k * 7919) % 4001 - 2000) / 17.0f;
  x[0] = NAN;
  x[1] = INFINITY;
  x[2] = -INFINITY;
  x[3] = -0.0f;
  x[4] = 1e-30f;
  x[5] = 88.7f;
  anvil::testkit::AbiSession session("cpu");
  ASSERT_TRUE(session.ok()) << session.error();
  anvil_executable* exe = nullptr;
  ANVIL_TESTKIT_ASSERT_OK(session.Compile(hlo, &exe));
  anvil_buffer* bx = session.FromHost(x.data(), ANVIL_F32, {kN});
  std::vector<anvil_buffer*> out = session.Execute(exe, {bx}, 3);
  ASSERT_EQ(out.size(), 3u);
  const std::vector<float> e = session.ToHost<float>(out[0], kN), t = session.ToHost<float>(out[1], kN),
                           d = session.ToHost<float>(out[2], kN);
  auto same = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); };
  int wrong = 0;
  for (int64_t k = 0; k < kN; ++k) {
    const float want_e = anvil::cpu::ExpFloat(x[k]), want_t = anvil::cpu::TanhFloat(x[k]), want_d = x[k] + x[k];
    if ((!same(e[k], want_e) || !same(t[k], want_t) || !same(d[k], want_d)) && wrong++ < 5) {
      ADD_FAILURE() << "element " << k << " (x = " << x[k] << "): exp " << e[k] << " (" << want_e << "), tanh " << t[k]
                    << " (" << want_t << "), x + x " << d[k] << " (" << want_d << ")";
    }
  }
  EXPECT_EQ(wrong, 0);
  for (anvil_buffer* b : {bx, out[0], out[1], out[2]}) anvil_buffer_destroy(b);
  anvil_executable_destroy(exe);
}

}  // namespace
