// A request for the cache line holding an address, ahead of its use.
#pragma once

namespace anvil::cpu {

inline void PrefetchLine(const void* p) {
#if defined(__x86_64__) && defined(__GNUC__)
  // As asm: GCC deletes a loop of nothing but __builtin_prefetch.
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 0, 3);
#endif
}

}  // namespace anvil::cpu
