// Index arithmetic for generated kernels, written as C-syntax expressions
// over unsigned index variables, which GLSL, CUDA C and HIP all read. Arrays
// are dense and row-major; `u` is the literal suffix of the index type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace anvil::hlo {

// Each coordinate of the row-major `linear` index into an array of `dims`:
// `(linear / stride) % size`, without the divisions and remainders that are
// no-ops.
std::vector<std::string> CoordinatesOf(const std::string& linear, const std::vector<int64_t>& dims);

// The row-major linear index of `coordinates` into an array of `dims`.
std::string LinearIndexOf(const std::vector<std::string>& coordinates, const std::vector<int64_t>& dims);

// An index literal: "12u".
std::string IndexLiteral(int64_t value);

}  // namespace anvil::hlo
