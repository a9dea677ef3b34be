#include <algorithm>
#include <cstring>

#include "hlo/evaluator_internal.h"

namespace anvil::hlo::eval {

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  return strides;
}

void Unflatten(int64_t linear, const std::vector<int64_t>& dims, std::vector<int64_t>& index) {
  index.resize(dims.size());
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    index[d] = dims[d] == 0 ? 0 : linear % dims[d];
    linear = dims[d] == 0 ? 0 : linear / dims[d];
  }
}

int64_t Flatten(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t linear = 0;
  for (size_t d = 0; d < index.size(); ++d) linear += index[d] * strides[d];
  return linear;
}

void CopyElement(const Literal& src, int64_t from, Literal& dst, int64_t to) {
  const size_t size = static_cast<size_t>(Info(src.shape().element_type()).byte_size);
  std::memcpy(dst.mutable_data().data() + to * size, src.data().data() + from * size, size);
}

bool IsIntegral(ElementType t) { return IsInteger(t) || IsPred(t); }

double RealAt(const Literal& l, int64_t k) { return l.GetDouble(k); }

std::complex<double> ComplexAt(const Literal& l, int64_t k) { return l.GetComplex(k); }

uint64_t BitsAt(const Literal& l, int64_t k) {
  ElementType t = l.shape().element_type();
  if (IsSignedInt(t)) return static_cast<uint64_t>(l.GetInt(k));
  uint64_t bits = l.GetUint(k);
  int width = Info(t).bit_width;
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  return bits;
}

void SetReal(Literal& l, int64_t k, double v) { l.SetDouble(k, v); }

std::vector<int64_t> FreeDims(int rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!std::count(batch.begin(), batch.end(), d) && !std::count(contracting.begin(), contracting.end(), d)) {
      free.push_back(d);
    }
  }
  return free;
}

void SetBits(Literal& l, int64_t k, uint64_t v) {
  ElementType t = l.shape().element_type();
  int width = Info(t).bit_width;
  if (IsPred(t)) {
    v = v != 0;
  } else if (width < 64) {
    v &= (uint64_t{1} << width) - 1;
    // Sub-byte signed values are stored sign-extended to their byte.
    if (IsSignedInt(t) && (v >> (width - 1)) & 1) v |= ~((uint64_t{1} << width) - 1);
  }
  l.SetUint(k, v);
}

}  // namespace anvil::hlo::eval
