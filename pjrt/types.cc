#include "pjrt/types.h"

#include <anvil/anvil.h>

#include <cstring>

namespace anvil::pjrt {
namespace {

struct TypePair {
  abi::BufferType pjrt;
  int32_t anvil;
  size_t bytes;
  const char* name;
};

constexpr TypePair kTypes[] = {
    {abi::kTypePred, ANVIL_PRED, 1, "pred"},          {abi::kTypeS2, ANVIL_S2, 1, "s2"},
    {abi::kTypeS4, ANVIL_S4, 1, "s4"},                {abi::kTypeS8, ANVIL_S8, 1, "s8"},
    {abi::kTypeS16, ANVIL_S16, 2, "s16"},             {abi::kTypeS32, ANVIL_S32, 4, "s32"},
    {abi::kTypeS64, ANVIL_S64, 8, "s64"},             {abi::kTypeU2, ANVIL_U2, 1, "u2"},
    {abi::kTypeU4, ANVIL_U4, 1, "u4"},                {abi::kTypeU8, ANVIL_U8, 1, "u8"},
    {abi::kTypeU16, ANVIL_U16, 2, "u16"},             {abi::kTypeU32, ANVIL_U32, 4, "u32"},
    {abi::kTypeU64, ANVIL_U64, 8, "u64"},             {abi::kTypeF4E2M1FN, ANVIL_F4E2M1FN, 1, "f4e2m1fn"},
    {abi::kTypeF8E3M4, ANVIL_F8E3M4, 1, "f8e3m4"},    {abi::kTypeF8E4M3, ANVIL_F8E4M3, 1, "f8e4m3"},
    {abi::kTypeF8E4M3FN, ANVIL_F8E4M3FN, 1, "f8e4m3fn"},
    {abi::kTypeF8E4M3FNUZ, ANVIL_F8E4M3FNUZ, 1, "f8e4m3fnuz"},
    {abi::kTypeF8E4M3B11FNUZ, ANVIL_F8E4M3B11FNUZ, 1, "f8e4m3b11fnuz"},
    {abi::kTypeF8E5M2, ANVIL_F8E5M2, 1, "f8e5m2"},    {abi::kTypeF8E5M2FNUZ, ANVIL_F8E5M2FNUZ, 1, "f8e5m2fnuz"},
    {abi::kTypeF8E8M0FNU, ANVIL_F8E8M0FNU, 1, "f8e8m0fnu"},
    {abi::kTypeBf16, ANVIL_BF16, 2, "bf16"},          {abi::kTypeF16, ANVIL_F16, 2, "f16"},
    {abi::kTypeF32, ANVIL_F32, 4, "f32"},             {abi::kTypeF64, ANVIL_F64, 8, "f64"},
    {abi::kTypeC64, ANVIL_C64, 8, "c64"},             {abi::kTypeC128, ANVIL_C128, 16, "c128"},
};

}  // namespace

std::optional<int32_t> AnvilTypeFromPjrt(abi::BufferType type) {
  for (const auto& t : kTypes) {
    if (t.pjrt == type) return t.anvil;
  }
  return std::nullopt;
}

abi::BufferType PjrtTypeFromAnvil(int32_t anvil_type) {
  for (const auto& t : kTypes) {
    if (t.anvil == anvil_type) return t.pjrt;
  }
  return abi::kTypeInvalid;
}

size_t ElementBytes(abi::BufferType type) {
  for (const auto& t : kTypes) {
    if (t.pjrt == type) return t.bytes;
  }
  return 0;
}

std::string PjrtTypeName(abi::BufferType type) {
  for (const auto& t : kTypes) {
    if (t.pjrt == type) return t.name;
  }
  return "PJRT buffer type " + std::to_string(static_cast<int>(type));
}

std::vector<int64_t> RowMajorByteStrides(const std::vector<int64_t>& dims, size_t element_bytes) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = static_cast<int64_t>(element_bytes);
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

std::vector<int64_t> ByteStridesForLayout(const std::vector<int64_t>& dims, const std::vector<int64_t>& minor_to_major,
                                          size_t element_bytes) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = static_cast<int64_t>(element_bytes);
  for (int64_t d : minor_to_major) {
    strides[d] = stride;
    stride *= dims[d];
  }
  return strides;
}

void StridedCopy(const char* src, const std::vector<int64_t>& src_strides, char* dst,
                 const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& dims, size_t element_bytes) {
  size_t rank = dims.size();
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  if (rank == 0) {
    std::memcpy(dst, src, element_bytes);
    return;
  }
  std::vector<int64_t> index(rank, 0);
  while (true) {
    int64_t s = 0, t = 0;
    for (size_t i = 0; i < rank; ++i) {
      s += index[i] * src_strides[i];
      t += index[i] * dst_strides[i];
    }
    std::memcpy(dst + t, src + s, element_bytes);
    size_t i = rank;
    while (i-- > 0) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
    if (i == static_cast<size_t>(-1)) return;
  }
}

}  // namespace anvil::pjrt
