// Element types between PJRT's numbering and Anvil's, and dense row-major
// geometry of host arrays.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pjrt/pjrt_abi.h"

namespace anvil::pjrt {

// The anvil_element_type for a PJRT type; nullopt for a type Anvil lacks
// (token, s1, u1).
std::optional<int32_t> AnvilTypeFromPjrt(abi::BufferType type);
abi::BufferType PjrtTypeFromAnvil(int32_t anvil_type);
// Bytes per element as host and device memory hold it (sub-byte types take
// a byte each, as in Anvil and in PJRT's unpacked host buffers).
size_t ElementBytes(abi::BufferType type);
std::string PjrtTypeName(abi::BufferType type);

// Byte strides of a dense row-major array.
std::vector<int64_t> RowMajorByteStrides(const std::vector<int64_t>& dims, size_t element_bytes);
// Byte strides of an array laid out by `minor_to_major` (no tiles).
std::vector<int64_t> ByteStridesForLayout(const std::vector<int64_t>& dims, const std::vector<int64_t>& minor_to_major,
                                          size_t element_bytes);
// Copies an array between two strided layouts of the same dims.
void StridedCopy(const char* src, const std::vector<int64_t>& src_strides, char* dst,
                 const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& dims, size_t element_bytes);

}  // namespace anvil::pjrt
