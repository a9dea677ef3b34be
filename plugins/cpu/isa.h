// The instruction sets the CPU plugin's hand-vectorised loops are compiled
// for (fused_tiles.inc, norm_rows.inc: each included once per set, inside a
// namespace of its own, under `#pragma GCC target`), and the widest this
// CPU runs, read once.
#pragma once

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

}  // namespace anvil::cpu
