// topk along the last dimension: the k largest (or smallest) elements of
// each row and their indices, floats ranked by their total order (-NaN <
// -inf < ... < -0 < +0 < ... < +inf < +NaN), integers by value, ties in index
// order, as the evaluator ranks them. Each row's first k indices are found
// from an integer key made from the element's bits, then the index: for
// types of at most 32 bits both in one word, kept in a heap of the k best
// as the row streams past (BestWords), otherwise by a partial sort of the
// indices; rows split across threads.
#include <algorithm>
#include <cstring>
#include <functional>
#include <type_traits>
#include <numeric>

#include "hlo/attributes.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/total_order.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;

// Element types whose rank keys fit 32 bits, so that a key and an index
// fit one 64-bit word.
template <typename T>
constexpr bool kRanksIn32Bits = sizeof(T) <= 4;

// Element e's key and index as one word that is larger the better the
// element ranks: the rank key (made unsigned; complemented when the
// smallest win) above the complement of the index (the lower index wins
// a tie).
template <typename T>
uint64_t RankWord(T value, int64_t e, bool largest) {
  constexpr int64_t kOffset = std::is_same_v<T, uint32_t> ? 0 : int64_t{1} << 31;
  const uint32_t key = static_cast<uint32_t>(RankKey(value) + kOffset);
  return (uint64_t{largest ? key : ~key} << 32) | (0xffffffffu - static_cast<uint32_t>(e));
}

// A row's best k (1 <= k <= n < 2^32) as rank words, best first: one pass
// keeping the k best seen in a min-heap, which most elements leave
// untouched after one compare with its least, where a partial sort of
// indices compared through a key table took 8 us per row of 1000.
template <typename T>
void BestWords(const T* row, int64_t n, int64_t k, bool largest, std::vector<uint64_t>& best) {
  best.clear();
  const auto worse_first = std::greater<uint64_t>();
  for (int64_t e = 0; e < n; ++e) {
    const uint64_t word = RankWord(row[e], e, largest);
    if (static_cast<int64_t>(best.size()) < k) {
      best.push_back(word);
      if (static_cast<int64_t>(best.size()) == k) std::make_heap(best.begin(), best.end(), worse_first);
    } else if (word > best.front()) {
      std::pop_heap(best.begin(), best.end(), worse_first);
      best.back() = word;
      std::push_heap(best.begin(), best.end(), worse_first);
    }
  }
  std::sort(best.begin(), best.end(), std::greater<uint64_t>());
}

template <typename T>
Kernel TopKOf(int64_t rows, int64_t n, int64_t k, bool largest, ElementType index_type, Slot in, Slot values, Slot indices) {
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(in));
    T* v = static_cast<T*>(frame.At(values));
    void* idx = frame.At(indices);
    auto put = [&](int64_t r, int64_t e, int64_t from) {
      v[r * k + e] = x[r * n + from];
      if (index_type == ElementType::kS64) {
        static_cast<int64_t*>(idx)[r * k + e] = from;
      } else {
        static_cast<int32_t*>(idx)[r * k + e] = static_cast<int32_t>(from);
      }
    };
    frame.parallel->For(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, n)), [&](int64_t lo, int64_t hi) {
      if constexpr (kRanksIn32Bits<T>) {
        if (k > 0 && n <= int64_t{0xffffffff}) {
          std::vector<uint64_t> best;
          best.reserve(static_cast<size_t>(k));
          for (int64_t r = lo; r < hi; ++r) {
            BestWords(x + r * n, n, k, largest, best);
            for (int64_t e = 0; e < k; ++e) put(r, e, 0xffffffffu - static_cast<uint32_t>(best[e]));
          }
          return;
        }
      }
      std::vector<int64_t> order(static_cast<size_t>(n)), key(static_cast<size_t>(n));
      for (int64_t r = lo; r < hi; ++r) {
        const T* row = x + r * n;
        for (int64_t e = 0; e < n; ++e) key[static_cast<size_t>(e)] = RankKey(row[e]);
        std::iota(order.begin(), order.end(), 0);
        // Ranked by key, ties by index: a total order, so the first k of a
        // partial sort are those of a stable sort by key alone, found in
        // O(n log k) rather than O(n log n).
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
          const int64_t ka = key[static_cast<size_t>(a)], kb = key[static_cast<size_t>(b)];
          if (ka != kb) return largest ? ka > kb : ka < kb;
          return a < b;
        });
        for (int64_t e = 0; e < k; ++e) put(r, e, order[static_cast<size_t>(e)]);
      }
    });
  };
}

}  // namespace

Kernel TopKKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out) {
  if (i.operands.size() != 1 || in.size() != 1 || out.size() != 2 || !i.shape.IsTuple() ||
      i.shape.tuple_elements().size() != 2) {
    return nullptr;
  }
  auto k = hlo::IntAttribute(i, "k", std::nullopt);
  const hlo::Shape& operand = i.operands[0]->shape;
  const ElementType index_type = i.shape.tuple_elements()[1].element_type();
  if (!k.ok() || operand.rank() == 0 || (index_type != ElementType::kS32 && index_type != ElementType::kS64)) {
    return nullptr;
  }
  const int64_t n = operand.dims().back();
  if (*k < 0 || *k > n || i.shape.tuple_elements()[0].dims().back() != *k) return nullptr;
  const int64_t rows = n == 0 ? 0 : operand.ElementCount() / n;
  const bool largest = hlo::StringAttribute(i, "largest") != "false";
  switch (operand.element_type()) {
    case ElementType::kF32: return TopKOf<float>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    case ElementType::kF64: return TopKOf<double>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    case ElementType::kBF16: return TopKOf<Bf16>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    case ElementType::kF16: return TopKOf<F16>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    case ElementType::kS8: return TopKOf<int8_t>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    case ElementType::kS16: return TopKOf<int16_t>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    case ElementType::kS32: return TopKOf<int32_t>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    case ElementType::kS64: return TopKOf<int64_t>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    case ElementType::kU8: return TopKOf<uint8_t>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    case ElementType::kU16: return TopKOf<uint16_t>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    case ElementType::kU32: return TopKOf<uint32_t>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    case ElementType::kU64: return TopKOf<uint64_t>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    case ElementType::kPred: return TopKOf<uint8_t>(rows, n, *k, largest, index_type, in[0], out[0], out[1]);
    default: return nullptr;  // complex and sub-byte types: the evaluator's
  }
}

}  // namespace anvil::cpu
