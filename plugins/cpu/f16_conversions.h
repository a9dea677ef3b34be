// f32 <-> f16 over arrays with the conversion instructions the CPU has
// (AVX-512F's, or F16C's with AVX2), ToF16's and ToFloat's bits otherwise.
// In IEEE's mode both give the same bits for every value (rounding to
// nearest even, NaNs quieted keeping their top payload bits; the tests
// check every f16 and a spread of f32 values). Under the flush mode
// (float_mode.h) the instructions still widen f16 subnormals exactly, as
// XLA's CPU code does (they are no f32 denormals for DAZ to flush), where
// ToFloat's scaling multiply reads the f32 denormal it builds as zero.
#pragma once

#include <cstdint>

#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/isa.h"

namespace anvil::cpu {

void WidenF16(const F16* x, float* y, int64_t n);
void NarrowToF16(const float* x, F16* y, int64_t n);

// The same with the loops built for `isa` (one this CPU runs), for tests.
void WidenF16With(Isa isa, const F16* x, float* y, int64_t n);
void NarrowToF16With(Isa isa, const float* x, F16* y, int64_t n);

}  // namespace anvil::cpu
