#include "hlo/rng_bit_stream.h"

#include <cstring>
#include <string>

#include "hlo/attributes.h"
#include "hlo/rng_values.h"

namespace anvil::hlo {
namespace {

struct U128 {
  uint64_t low, high;
  U128 Plus(uint64_t n) const {
    U128 r{low + n, high};
    if (r.low < low) ++r.high;
    return r;
  }
  std::array<uint32_t, 4> Words() const {
    auto l = WordHalves(low), h = WordHalves(high);
    return {l[0], l[1], h[0], h[1]};
  }
};

U128 PhiloxCounter(const uint64_t* state, int64_t words) {
  return words >= 3 ? U128{state[1], state[2]} : U128{state[1], state[0]};
}

}  // namespace

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> x, std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{x[0]} * 0xD2511F53u;
    const uint64_t p1 = uint64_t{x[2]} * 0xCD9E8D57u;
    x = {static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ key[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key[1], static_cast<uint32_t>(p0)};
    key[0] += 0x9E3779B9u;
    key[1] += 0xBB67AE85u;
  }
  return x;
}

StatusOr<RngBitStream> RngBitStream::Of(const Instruction& i) {
  if (!i.shape.IsTuple() || i.shape.tuple_elements().size() != 2 || i.operands.size() != 1) {
    return InvalidArgument("rng-bit-generator must produce (state, bits)");
  }
  const Shape& bits = i.shape.tuple_elements()[1];
  const Shape& state = i.operands[0]->shape;
  RngBitStream s;
  s.type_ = bits.element_type();
  s.width_ = Info(s.type_).bit_width;
  if (s.width_ > 64 || IsComplex(s.type_) || IsPred(s.type_) || !bits.IsArray()) {
    return Unimplemented("rng-bit-generator does not produce " + bits.ToString());
  }
  if (!state.IsArray() || state.rank() != 1 || state.element_type() != ElementType::kU64) {
    return InvalidArgument("rng-bit-generator's state is a u64 vector, not " + state.ToString());
  }
  s.bytes_ = Info(s.type_).byte_size;
  s.elements_ = bits.ElementCount();
  s.words_ = state.dim(0);
  std::string algorithm = StringAttribute(i, "algorithm");
  if (algorithm.empty() || algorithm == "rng_default") algorithm = "rng_philox";
  if (algorithm == "rng_three_fry") {
    if (s.words_ < 2) return InvalidArgument("THREE_FRY needs a state of at least 2 u64 words");
    s.philox_ = false;
  } else if (algorithm == "rng_philox") {
    if (s.words_ < 2) return InvalidArgument("PHILOX needs a state of at least 2 u64 words");
  } else {
    return InvalidArgument("unknown rng-bit-generator algorithm '" + algorithm + "'");
  }
  if (!s.philox_ && s.width_ <= 32) {
    // The shape halved along the first even dimension, else the largest.
    s.dims_ = bits.dims();
    const int rank = bits.rank();
    for (int d = 0; d < rank && s.split_ < 0; ++d) {
      if (s.dims_[d] % 2 == 0) s.split_ = d;
    }
    if (s.split_ < 0) {
      for (int d = 0; d < rank; ++d) {
        if (s.split_ < 0 || s.dims_[d] > s.dims_[s.split_]) s.split_ = d;
      }
    }
    std::vector<int64_t> half = s.dims_;
    if (rank > 0) half[s.split_] = (s.dims_[s.split_] + 1) / 2;
    s.half_strides_.assign(half.size(), 1);
    for (int d = rank - 2; d >= 0; --d) s.half_strides_[d] = s.half_strides_[d + 1] * half[d + 1];
    s.half_count_ = 1;
    for (int64_t d : half) s.half_count_ *= d;
  }
  return s;
}

void RngBitStream::NextState(const uint64_t* state, uint64_t* next) const {
  if (next != state) std::memcpy(next, state, static_cast<size_t>(words_) * sizeof(uint64_t));
  if (!philox_) {
    next[1] = state[1] + static_cast<uint64_t>(width_ == 64 ? elements_ : half_count_);
    return;
  }
  const int64_t per_block = width_ == 64 ? 2 : 4;
  const U128 after = PhiloxCounter(state, words_).Plus(static_cast<uint64_t>((elements_ + per_block - 1) / per_block));
  next[1] = after.low;
  if (words_ >= 3) next[2] = after.high;
}

void RngBitStream::Store(void* out, int64_t k, uint64_t v) const {
  if (width_ < 64) {
    // The element's own bits only (f4 and f6 take a byte each).
    v &= (uint64_t{1} << width_) - 1;
    // Sub-byte signed values are stored sign-extended to their byte.
    if (IsSignedInt(type_) && (v >> (width_ - 1)) & 1) v |= ~((uint64_t{1} << width_) - 1);
  }
  std::memcpy(static_cast<unsigned char*>(out) + k * bytes_, &v, static_cast<size_t>(bytes_));  // little-endian host
}

void RngBitStream::Fill(const uint64_t* state, int64_t begin, int64_t end, void* out) const {
  const std::array<uint32_t, 2> key = WordHalves(state[0]);
  if (philox_) {
    // Each counter value gives four 32-bit words (or two 64-bit ones),
    // which fill consecutive elements.
    const U128 counter = PhiloxCounter(state, words_);
    const int64_t per_block = width_ == 64 ? 2 : 4;
    int64_t block = -1;
    std::array<uint32_t, 4> words{};
    for (int64_t k = begin; k < end; ++k) {
      if (k / per_block != block) {
        block = k / per_block;
        words = Philox4x32(counter.Plus(static_cast<uint64_t>(block)).Words(), key);
      }
      const int64_t j = k % per_block;
      Store(out, k, width_ == 64 ? JoinWords(words[2 * j], words[2 * j + 1]) : words[j]);
    }
    return;
  }
  const uint64_t counter = state[1];
  if (width_ == 64) {
    for (int64_t k = begin; k < end; ++k) {
      const auto words = ThreeFry2x32(WordHalves(counter + static_cast<uint64_t>(k)), key);
      Store(out, k, JoinWords(words[0], words[1]));
    }
    return;
  }
  // Narrow THREE_FRY: element k's counter is its index in the halved shape;
  // the two words fill the neighbours along the halved dimension.
  const int rank = static_cast<int>(dims_.size());
  int64_t last_half = -1;
  std::array<uint32_t, 2> words{};
  for (int64_t k = begin; k < end; ++k) {
    int64_t linear_half = 0, which = 0, rest = k;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t index = rest % dims_[d];
      rest /= dims_[d];
      if (d == split_) {
        which = index % 2;
        index /= 2;
      }
      linear_half += index * half_strides_[d];
    }
    if (linear_half != last_half) {
      last_half = linear_half;
      words = ThreeFry2x32(WordHalves(counter + static_cast<uint64_t>(linear_half)), key);
    }
    Store(out, k, words[which]);
  }
}

}  // namespace anvil::hlo
