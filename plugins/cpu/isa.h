// The instruction sets the CPU plugin's hand-vectorised loops are compiled
// for (fused_tiles.inc, norm_rows.inc: each included once per set, inside a
// namespace of its own, under `#pragma GCC target`), and the widest this
// CPU runs, read once.
#pragma once

#include <vector>

namespace anvil::cpu {

enum class Isa { kBaseline, kAvx2, kAvx512 };

inline Isa HostIsa() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const Isa isa = [] {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw")) {
      return Isa::kAvx512;
    }
    return __builtin_cpu_supports("avx2") ? Isa::kAvx2 : Isa::kBaseline;
  }();
  return isa;
#else
  return Isa::kBaseline;
#endif
}

// The instruction sets this CPU runs, baseline first (for tests that check
// every loop against a plain one).
inline std::vector<Isa> IsasThisCpuRuns() {
  std::vector<Isa> isas = {Isa::kBaseline};
  if (HostIsa() != Isa::kBaseline) isas.push_back(Isa::kAvx2);
  if (HostIsa() == Isa::kAvx512) isas.push_back(Isa::kAvx512);
  return isas;
}

// The set the fused loops' tiles (kernels_fused.cc) run with: the host's,
// except that their AVX2 copy also uses FMA (float_functions.h's MulAdd),
// which every AVX2 CPU has but a virtual CPU may hide; without it they run
// the baseline copy. Every AVX-512 CPU has FMA.
inline bool HostHasFma() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool fma = __builtin_cpu_supports("fma");
  return fma;
#else
  return false;
#endif
}
inline Isa HostTileIsa() {
  const Isa isa = HostIsa();
  return isa == Isa::kAvx2 && !HostHasFma() ? Isa::kBaseline : isa;
}
inline std::vector<Isa> TileIsasThisCpuRuns() {
  std::vector<Isa> isas = IsasThisCpuRuns();
  if (!HostHasFma()) isas.resize(1);
  return isas;
}

}  // namespace anvil::cpu
