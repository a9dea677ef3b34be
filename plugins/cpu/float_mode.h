// Denormals flushed to zero during an execution, as XLA's CPU client runs
// every execution (FTZ: a subnormal result becomes zero; DAZ: a subnormal
// operand reads as zero), so that JAX on Anvil computes what JAX on XLA
// does, and a chain of multiplies that underflows does not take the
// processor's slow path for subnormals on every element (40 multiplies
// that underflow: 88 ms against 3.3 ms for adds of normal values). The
// default is IEEE's gradual underflow, which the reference evaluator
// computes; the compile option flush_denormals=true (compile_options.h)
// asks for XLA's. The mode is set on the thread that runs an execution's
// steps and carried by Parallel::For to the helpers that run its chunks,
// each thread restoring its own mode afterwards. x86-64 only (MXCSR);
// elsewhere every execution has IEEE's mode.
#pragma once

#include <cstdint>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace anvil::cpu {

// MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6).
inline constexpr uint32_t kFlushDenormals = 0x8040;

// This thread's mode: kFlushDenormals or 0.
inline uint32_t FloatMode() {
#if defined(__SSE__)
  return _mm_getcsr() & kFlushDenormals;
#else
  return 0;
#endif
}

// Sets this thread's mode for the scope (kFlushDenormals or 0), leaving
// every other bit of its control register as it was.
class ScopedFloatMode {
 public:
  explicit ScopedFloatMode(uint32_t mode) {
#if defined(__SSE__)
    saved_ = _mm_getcsr();
    changed_ = (saved_ & kFlushDenormals) != mode;
    if (changed_) _mm_setcsr((saved_ & ~kFlushDenormals) | mode);
#else
    (void)mode;
#endif
  }
  // Restores the two bits alone: exception flags raised in the scope stay
  // raised, as they would without it.
  ~ScopedFloatMode() {
#if defined(__SSE__)
    if (changed_) _mm_setcsr((_mm_getcsr() & ~kFlushDenormals) | (saved_ & kFlushDenormals));
#endif
  }
  ScopedFloatMode(const ScopedFloatMode&) = delete;
  ScopedFloatMode& operator=(const ScopedFloatMode&) = delete;

 private:
  uint32_t saved_ = 0;
  bool changed_ = false;
};

}  // namespace anvil::cpu
