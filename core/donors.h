// Which entry parameters a program lets the caller donate: those named by
// the module's `input_output_alias` or `buffer_donor` header attributes (as
// XLA writes them, and as the StableHLO lowering records `tf.aliasing_output`
// and `jax.buffer_donor` argument attributes).
#pragma once

#include <cstdint>
#include <vector>

#include "hlo/ir.h"

namespace anvil::core {

// One flag per parameter of the entry computation (`count` of them).
std::vector<uint8_t> DonorParameters(const hlo::Module& module, size_t count);

}  // namespace anvil::core
